package dev.quell.cli.internal;

import dev.quell.sim.internal.Text;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code quell fit}: a dependency model and a scenario file from calls production recorded. */
@Command(name = "fit", mixinStandardHelpOptions = true, sortOptions = false, versionProvider = Versions.class,
    description = {
        "Fits a dependency model to calls as production recorded them: the load, the healthy latency (a lognormal"
            + " by its p50 and p99, the simulator's model) and error rate, and the incidents (brownouts, failures,"
            + " outages) with their start, end and severity. Prints how well the model fits and writes a scenario"
            + " file quell simulate runs.",
        "",
        "The input is a CSV with a header row naming timestamp, latency (or latency_ms) and outcome (or status), then"
            + " a row per call; or a JDK Flight Recorder recording (.jfr) with Quell's events, recorded with"
            + " quell.jfc, whose attempts are the dependency's requests and whose calls are the load. See"
            + " docs/simulation.md and docs/jfr.md.",
        ""},
    exitCodeOnInvalidInput = 2)
public final class FitCommand implements Callable<Integer> {
  /** The input formats, by name. */
  static final List<String> FORMATS = List.of("csv", "jfr");

  @Spec
  @Nullable CommandSpec spec;

  @Parameters(paramLabel = "FILE", description = "The telemetry: a CSV of timestamp, latency, outcome, or a JFR"
      + " recording of Quell's events.")
  @Nullable Path file;

  @Option(names = "--format", paramLabel = "FORMAT",
      description = "The input's format: csv or jfr (default: jfr for a file named *.jfr, csv otherwise).")
  @Nullable String format;

  @Option(names = "--policy", paramLabel = "NAME",
      description = "For a JFR recording: the policy whose events to fit (needed when it holds several).")
  @Nullable String policy;

  @Option(names = "--out", paramLabel = "YAML",
      description = "Write the scenario file here (its folder must exist); without it the scenario goes to"
          + " standard output and the report to standard error.")
  @Nullable String out;

  @Option(names = "--name", paramLabel = "NAME",
      description = "The scenario's and the dependency's name (default: the input file's name).")
  @Nullable String name;

  @Override
  public Integer call() {
    CommandSpec s = spec;
    if (s == null) {
      throw new IllegalStateException("picocli injects the spec before calling the command");
    }
    PrintWriter stdout = s.commandLine().getOut();
    PrintWriter err = s.commandLine().getErr();
    try {
      if (file == null || !Files.isRegularFile(file)) {
        throw new ScenarioException("there is no file " + (file == null ? "(none given)" : file.toAbsolutePath()));
      }
      String f = format != null ? format.toLowerCase(Locale.ROOT)
          : file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".jfr") ? "jfr" : "csv";
      if (!FORMATS.contains(f)) {
        throw new ScenarioException("--format must be one of " + String.join(", ", FORMATS) + ", was \"" + format
            + "\"");
      }
      if (policy != null && !f.equals("jfr")) {
        throw new ScenarioException("--policy chooses a policy's events in a JFR recording; a CSV holds one"
            + " dependency's calls");
      }
      Telemetry telemetry = f.equals("jfr") ? new JfrTelemetry(policy) : new CsvTelemetry();
      Path yamlFile = out == null ? null : SimulateCommand.outputFile("--out", out, ".yaml", ".yml");
      String stem = file.getFileName().toString().replaceFirst("\\.[A-Za-z]+$", "");
      String scenarioName = name != null ? name : stem.replaceAll("[^A-Za-z0-9._-]+", "-");
      Fit.Model model = Fit.of(telemetry.recorded(file), file.getFileName().toString());
      String yaml = model.yaml(scenarioName);
      // the scenario must be one the simulator accepts: read it back as quell simulate would
      ScenarioFile.parse(yaml, scenarioName, "the fitted scenario");

      PrintWriter report = yamlFile == null ? err : stdout;
      report.println("Fitted " + String.format(Locale.ROOT, "%,d", model.calls()) + " calls"
          + (model.requests() != model.calls() ? String.format(Locale.ROOT, " (%,d attempts)", model.requests()) : "")
          + " over "
          + Text.clock(Duration.ofSeconds(model.seconds())) + " from " + file.getFileName() + ": "
          + Text.fixed(model.perSecond(), 1) + " calls/s; healthy p50 " + Text.ms(model.p50Millis()) + " ms, p99 "
          + Text.ms(model.p99Millis()) + " ms, error rate " + Text.percent(model.errorRate()));
      List<Fit.Incident> incidents = model.incidents();
      report.println(incidents.isEmpty() ? "No incidents: no run of 3 seconds or more with a median latency at "
          + "least twice the usual, or an error rate 10 points above it." : incidents.size()
          + (incidents.size() == 1 ? " incident:" : " incidents:"));
      for (Fit.Incident i : incidents) {
        report.println("  " + i.kind() + " from " + Text.clock(Duration.ofSeconds(i.from())) + " to "
            + Text.clock(Duration.ofSeconds(i.to())) + (i.kind().equals("brownout") ? ", " + Text.fixed(i.severity(),
            1) + "× slower" : "") + ", " + Text.percent(i.errorRate()) + " of calls failed");
      }
      report.println();
      report.println("How well the model fits (a lognormal through the measured p50 and p99):");
      for (String line : model.quality()) {
        report.println("  " + line);
      }
      if (yamlFile != null) {
        try {
          Files.writeString(yamlFile, yaml, StandardCharsets.UTF_8);
        } catch (IOException e) {
          err.println("quell fit: cannot write " + yamlFile.toAbsolutePath() + ": " + SimulateCommand.why(e));
          err.flush();
          return 1;
        }
        report.println();
        report.println("Scenario: " + yamlFile.toAbsolutePath() + " (run it: ./quell simulate --scenario " + out + ")");
      } else {
        stdout.print(yaml);
      }
      stdout.flush();
      err.flush();
      return 0;
    } catch (ScenarioException e) {
      err.println("quell fit: " + ScenarioFile.oneLine(String.valueOf(e.getMessage())));
      err.flush();
      return 2;
    }
  }
}
