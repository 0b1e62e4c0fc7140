package dev.quell.test;

import dev.quell.cli.ScenarioFiles;
import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The one place that touches {@code quell-cli}, an optional dependency: scenario files and charts.
 * Every method first asks whether the module is on the class path, so a check that uses neither
 * never loads it.
 */
final class CommandSupport {
  private CommandSupport() {}

  /** True when {@code dev.quell:quell-cli} is on the class path. */
  static boolean present() {
    try {
      Class.forName("dev.quell.cli.ScenarioFiles", false, CommandSupport.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  static Scenario read(Path file) {
    if (!present()) {
      throw new IllegalStateException("reading the scenario file " + file + " needs dev.quell:quell-cli on the"
          + " test class path: add it in test scope beside quell-test");
    }
    return ScenarioFiles.read(file);
  }

  /** Draws the run's chart into {@code png}; false when {@code quell-cli} is not on the class path. */
  static boolean chart(ScenarioResult result, Path png) throws IOException {
    if (!present()) {
      return false;
    }
    ScenarioFiles.chart(result, png);
    return true;
  }
}
