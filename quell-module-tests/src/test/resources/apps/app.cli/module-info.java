/** The quell command started from the module path: picocli, SnakeYAML and the simulator as modules. */
module app.cli {
  requires dev.quell.cli;
  requires info.picocli;
}
