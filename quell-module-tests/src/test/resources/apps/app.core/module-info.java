/** An application on the module path that uses quell-core, which has a module-info of its own. */
module app.core {
  requires dev.quell;
}
