package app.cli;

import dev.quell.cli.Quell;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code quell --version} (its version file is a resource of the cli module) and {@code quell simulate}
 * on a scenario file with a PNG chart and the HTML report: picocli reads the commands' annotated fields
 * reflectively, SnakeYAML parses the file, quell-sim runs it, JFreeChart draws the chart and JFreeSVG
 * the report's inline charts.
 */
public final class Main {
  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    int version = Quell.commandLine().execute("--version");
    Path dir = Files.createTempDirectory("modpath-cli");
    Path scenario = dir.resolve("scenario.yaml");
    Path chart = dir.resolve("chart.png");
    Path report = dir.resolve("report.html");
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
          "--chart", chart.toString(), "--html", report.toString());
      boolean written = Files.size(chart) > 0 && Files.readString(report).contains("<svg");
      System.out.println("quell-cli on the module path: --version exit " + version + ", simulate exit " + simulate
          + (written ? ", chart and report written" : ", chart or report missing"));
      if (version != 0 || simulate != 0 || !written) {
        System.exit(1);
      }
    } finally {
      for (Path file : new Path[] {scenario, chart, report, dir}) {
        Files.deleteIfExists(file);
      }
    }
  }
}
