package app.cli;

import dev.quell.cli.Quell;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code quell --version} (its version file is a resource of the cli module) and {@code quell simulate}
 * on a scenario file: picocli reads the commands' annotated fields reflectively, SnakeYAML parses the
 * file, quell-sim runs it.
 */
public final class Main {
  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    int version = Quell.commandLine().execute("--version");
    Path scenario = Files.createTempFile("modpath", ".yaml");
    try {
      Files.writeString(scenario, String.join("\n",
          "name: modpath",
          "duration: 10s",
          "load:",
          "  perSecond: 50",
          "dependency:",
          "  p50: 5ms",
          "  p99: 50ms",
          "policy: {name: modpath, attempts: 3, budget: automatic}",
          ""));
      int simulate = Quell.commandLine().execute("simulate", "--scenario", scenario.toString(), "--seeds", "1",
          "--no-chart", "--json");
      System.out.println("quell-cli on the module path: --version exit " + version + ", simulate exit " + simulate);
      if (version != 0 || simulate != 0) {
        System.exit(1);
      }
    } finally {
      Files.delete(scenario);
    }
  }
}
