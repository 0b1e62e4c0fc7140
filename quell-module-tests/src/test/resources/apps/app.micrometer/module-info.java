/** An application on the module path with Micrometer meters for its policy. */
module app.micrometer {
  requires app.support;
  requires dev.quell;
  requires dev.quell.micrometer;
  requires micrometer.core;
}
