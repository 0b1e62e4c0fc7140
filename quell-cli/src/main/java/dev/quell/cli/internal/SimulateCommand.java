package dev.quell.cli.internal;

import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.internal.Text;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code quell simulate}: runs a scenario's arms with the same seeds and compares them. */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Runs your policy against a modelled dependency on a virtual clock and compares the arms of a scenario"
            + " side by side: load multiplier, worst second, availability before/during/after the incident,"
            + " time to recover, and a diagnosis.",
        "",
        "Without options it runs the reference scenario: 5 simulated minutes at 500 calls/s against a dependency"
            + " with p50 20 ms, p99 100 ms and room for 400 concurrent calls, 8x slower from 2:00 to 3:00, under a"
            + " policy of 3 attempts, 160 ms attempt timeout, full-jitter backoff from 50 ms and a 1 s deadline,"
            + " with the retry budget off and on.",
        ""},
    exitCodeOnInvalidInput = 2)
public final class SimulateCommand implements Callable<Integer> {

  @Spec
  @Nullable CommandSpec spec;

  @Option(names = "--scenario", paramLabel = "NAME|FILE", defaultValue = "reference",
      description = "reference, fleet, topology, or a YAML scenario file (default: ${DEFAULT-VALUE}).")
  String scenario = "reference";

  @Option(names = "--seeds", paramLabel = "N|LIST",
      description = "How many seeds (3 means 1,2,3) or which (7,8,9); several give bands: median [min-max]."
          + " Default: the file's seeds, else 1.")
  @Nullable String seeds;

  @Option(names = "--json", description = "Print one JSON object instead of the table.")
  boolean json;

  @Option(names = "--csv", paramLabel = "FILE", arity = "0..1", fallbackValue = "-",
      description = "Write the per-second series as CSV to FILE (to standard output when FILE is - or left out).")
  @Nullable String csv;

  @Option(names = "--chart", paramLabel = "PNG",
      description = "Where to write the chart (default: quell-<scenario>.png in the current directory).")
  @Nullable Path chart;

  @Option(names = "--no-chart", description = "Do not draw the chart.")
  boolean noChart;

  @Override
  public Integer call() {
    CommandLine commandLine = spec().commandLine();
    PrintWriter out = commandLine.getOut();
    PrintWriter err = commandLine.getErr();
    Scenario chosen;
    long[] chosenSeeds;
    try {
      long[] fileSeeds = null;
      switch (scenario.toLowerCase(Locale.ROOT)) {
        case "reference":
          chosen = Scenario.reference();
          break;
        case "fleet":
          chosen = Scenario.fleet();
          break;
        case "topology":
          chosen = Scenario.topology();
          break;
        default:
          Path file = Paths.get(scenario);
          if (!Files.isRegularFile(file)) {
            throw new ScenarioException("--scenario must be reference, fleet, topology or a YAML file;"
                + " there is no file " + file.toAbsolutePath());
          }
          ScenarioFile parsed = ScenarioFile.read(file);
          chosen = parsed.scenario();
          fileSeeds = parsed.seeds().orElse(null);
      }
      chosenSeeds = seeds != null ? parseSeeds(seeds) : fileSeeds != null ? fileSeeds : new long[] {1};
    } catch (ScenarioException e) {
      err.println("quell simulate: " + e.getMessage());
      return 2;
    }
    if (json && "-".equals(csv)) {
      err.println("quell simulate: --json and --csv cannot both write to standard output; give --csv a FILE");
      return 2;
    }

    ScenarioResult result = chosen.run(chosenSeeds);

    // with --json or CSV on standard output, standard output carries only data: notes go to standard error
    PrintWriter notes = json || "-".equals(csv) ? err : out;
    if (json) {
      out.println(result.toJson());
    } else if (!"-".equals(csv)) {
      out.print(result.toTable());
      out.println();
    }
    try {
      if (csv != null) {
        if ("-".equals(csv)) {
          out.print(result.toCsv());
        } else {
          Path csvFile = Paths.get(csv);
          writeString(csvFile, result.toCsv());
          notes.println("Per-second series: " + csvFile.toAbsolutePath());
        }
      }
      if (!noChart) {
        Path png = chart != null ? chart : Paths.get("quell-" + safeName(chosen.name()) + ".png");
        Chart.write(result, png, 1200, 900);
        notes.println("Chart: " + png.toAbsolutePath());
      }
    } catch (IOException e) {
      err.println("quell simulate: cannot write output: " + e.getMessage());
      return 1;
    }
    int runs = chosenSeeds.length * result.arms().size();
    notes.println("Simulated " + runs + (runs == 1 ? " run" : " runs") + " of " + Text.clock(
        result.arms().get(0).first().duration()) + " in " + cpu(result) + ".");
    out.flush();
    err.flush();
    return 0;
  }

  private static String cpu(ScenarioResult result) {
    long cpu = result.cpuTime().toMillis();
    long wall = result.wallTime().toMillis();
    return (cpu >= 0 ? cpu + " ms of CPU" : "an unmeasured amount of CPU") + " (" + wall + " ms of wall-clock time)";
  }

  private CommandSpec spec() {
    if (spec == null) {
      throw new IllegalStateException("picocli injects the spec before calling the command");
    }
    return spec;
  }

  static long[] parseSeeds(String text) {
    String t = text.trim();
    try {
      if (t.contains(",")) {
        String[] parts = t.split(",");
        long[] seeds = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
          seeds[i] = Long.parseLong(parts[i].trim());
        }
        return seeds;
      }
      return ScenarioFile.seeds(Long.parseLong(t), "--seeds");
    } catch (NumberFormatException e) {
      throw new ScenarioException("--seeds must be a count (3 means 1,2,3) or a list such as 7,8,9, was \"" + text
          + "\"");
    }
  }

  private static String safeName(String name) {
    return name.replaceAll("[^A-Za-z0-9._-]+", "-");
  }

  private static void writeString(Path file, String text) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, text, StandardCharsets.UTF_8);
  }
}
