/** An application on the module path that runs the simulator (quell-sim reads dev.quell.internal). */
module app.sim {
  requires app.support;
  requires dev.quell;
  requires dev.quell.sim;
}
