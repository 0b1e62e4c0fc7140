/** An application's tests on the module path, with quell-test (an automatic module, not a friend of the core). */
module app.test {
  requires dev.quell;
  requires dev.quell.test;
}
