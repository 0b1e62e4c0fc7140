/** An application on the module path that logs its policy's events through SLF4J. */
module app.slf4j {
  requires app.support;
  requires dev.quell;
  requires dev.quell.slf4j;
}
