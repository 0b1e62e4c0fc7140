/** A Spring application on the module path with Quell's auto-configuration. */
module app.spring {
  requires app.support;
  requires dev.quell;
  requires dev.quell.spring;
  requires spring.context;
  requires spring.core;
  requires micrometer.core;
}
