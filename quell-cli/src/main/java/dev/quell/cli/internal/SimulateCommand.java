package dev.quell.cli.internal;

import dev.quell.sim.Estimate;
import dev.quell.sim.Progress;
import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.internal.Text;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import org.jfree.chart.JFreeChart;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code quell simulate}: runs a scenario's arms with the same seeds and compares them. */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
    versionProvider = Versions.class,
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
  /** Where charts go unless --chart says otherwise: a folder the repository ignores. */
  static final String OUTPUT_FOLDER = "quell-output";

  @Spec
  @Nullable CommandSpec spec;

  @Option(names = "--scenario", paramLabel = "NAME|FILE", defaultValue = "reference",
      description = "A built-in scenario (reference, sixteen-pods, fleet, fleet-bounded-queue,"
          + " fleet-concurrency-limit, topology, outage, outage-hanging, tail-at-scale, hedging-brownout,"
          + " known-dependency), the adaptive-limit benchmark (adaptive-limits) or a YAML"
          + " scenario file (default: ${DEFAULT-VALUE}).")
  String scenario = "reference";

  @Option(names = "--seeds", paramLabel = "N|LIST",
      description = "How many seeds (3 means 1,2,3) or which (7,8,9); several give bands: median [min-max]."
          + " Default: the file's seeds, else 1.")
  @Nullable String seeds;

  @Option(names = "--sweep", paramLabel = "KEY=V1,V2,...",
      description = "Run the scenario at each value of one numeric key and draw the trade-off: availability"
          + " against the dependency's worst second. KEY is a path in the scenario (load.perSecond,"
          + " dependency.capacity, arms[1].policy.attempts) or a policy key for every arm (budget.fraction,"
          + " attempts, attemptTimeout).")
  @Nullable String sweep;

  @Option(names = "--json", description = "Print one JSON object instead of the table.")
  boolean json;

  @Option(names = "--csv", paramLabel = "FILE", arity = "0..1", fallbackValue = "-",
      description = "Write the per-second series (with --sweep: one row per value and arm) as CSV to FILE, or to"
          + " standard output when FILE is - or left out.")
  @Nullable String csv;

  @Option(names = "--calls", paramLabel = "FILE",
      description = "Also write every call of the first arm's first seed to FILE as CSV (timestamp, latency_ms,"
          + " outcome), as an access log would: what quell fit reads.")
  @Nullable String calls;

  @Option(names = "--chart", paramLabel = "PNG",
      description = "Where to write the chart (default: " + OUTPUT_FOLDER + "/<scenario>.png under the current"
          + " directory). Its folder must exist.")
  @Nullable String chart;

  @Option(names = "--no-chart", description = "Do not draw the chart.")
  boolean noChart;

  @Option(names = "--html", paramLabel = "FILE",
      description = "Also write a self-contained HTML report (table, charts, diagnosis, the scenario) to FILE.")
  @Nullable String html;

  @Option(names = "--threads", paramLabel = "N",
      description = "Run arms and seeds on at most N threads (default: one per processor). The results do not"
          + " depend on it.")
  @Nullable Integer threads;

  @Option(names = "--allow-large",
      description = "Run even when the estimate is over the limit (" + "200 million attempts) or over the memory"
          + " the JVM may use.")
  boolean allowLarge;

  @Override
  public Integer call() {
    CommandLine commandLine = spec().commandLine();
    PrintWriter out = commandLine.getOut();
    PrintWriter err = commandLine.getErr();
    try {
      return simulate(out, err);
    } catch (ScenarioException e) {
      err.println("quell simulate: " + ScenarioFile.oneLine(String.valueOf(e.getMessage())));
      err.flush();
      return 2;
    } catch (IllegalArgumentException e) {
      // a model's own check that the file reader did not foresee: still the user's input
      err.println("quell simulate: " + ScenarioFile.oneLine(String.valueOf(e.getMessage())));
      err.flush();
      return 2;
    } catch (OutputException e) {
      err.println("quell simulate: " + e.getMessage());
      err.flush();
      return 1;
    }
  }

  private int simulate(PrintWriter out, PrintWriter err) {
    // every flag and combination first, before anything is read or run
    if (noChart && chart != null) {
      throw new ScenarioException("--no-chart and --chart " + chart + " contradict each other: give one of them");
    }
    boolean csvToOut = "-".equals(csv);
    if (json && csvToOut) {
      throw new ScenarioException("--json and --csv cannot both write to standard output; give --csv a FILE");
    }
    if (threads != null && (threads < 1 || threads > 1024)) {
      throw new ScenarioException("--threads must be from 1 to 1024, was " + threads);
    }
    Path chartFile = chart == null ? null : outputFile("--chart", chart, ".png");
    Path htmlFile = html == null ? null : outputFile("--html", html, ".html", ".htm");
    Path csvFile = csv == null || csvToOut ? null : outputFile("--csv", csv, "");
    Path callsFile = calls == null ? null : outputFile("--calls", calls, ".csv");
    if (callsFile != null && sweep != null) {
      throw new ScenarioException("--calls writes one run's calls; it cannot go with --sweep");
    }
    Sweep sweeping = sweep == null ? null : Sweep.parse(sweep);
    long[] cliSeeds = seeds == null ? null : parseSeeds(seeds);
    BenchmarkFile benchmark = BenchmarkFile.find(scenario);
    if (benchmark != null) {
      if (sweeping != null || json || csv != null || calls != null || html != null || chart != null) {
        throw new ScenarioException("a benchmark prints its table only: --sweep, --json, --csv, --calls, --html and"
            + " --chart do not apply to it");
      }
      benchmark.run(cliSeeds, out);
      return 0;
    }

    ScenarioFile file = load(scenario);
    long[] chosenSeeds = cliSeeds != null ? cliSeeds : file.seeds().orElse(new long[] {1});
    String origin = origin(scenario);
    List<Sweep.Point> points = sweeping == null ? List.of() : sweeping.apply(file, origin);
    // an arm the sweep changes at any value (the first value may be the one the file already has)
    List<Boolean> changed = new ArrayList<>();
    for (int a = 0; a < file.scenario().arms().size(); a++) {
      boolean any = false;
      for (Sweep.Point p : points) {
        any |= p.changed().get(a);
      }
      changed.add(any);
    }

    // what will run: the scenario, or each sweep value (arms a sweep does not change run once)
    List<Scenario> runs = new ArrayList<>();
    List<String> runValues = new ArrayList<>();
    if (sweeping == null) {
      runs.add(withThreads(file.scenario()));
    } else {
      for (int v = 0; v < points.size(); v++) {
        Sweep.Point p = points.get(v);
        List<Scenario.Arm> arms = new ArrayList<>();
        for (int a = 0; a < p.file().scenario().arms().size(); a++) {
          if (v == 0 || changed.get(a)) {
            arms.add(p.file().scenario().arms().get(a));
          }
        }
        if (!arms.isEmpty()) {
          runs.add(withThreads(Scenario.of(p.file().scenario().name(), p.file().scenario().description(), arms)));
          runValues.add(p.value());
        }
      }
    }
    check(runs, chosenSeeds.length);

    Progress progress = Progress.tracker();
    List<ScenarioResult> results = new ArrayList<>();
    try (ProgressLine line = ProgressLine.start(progress, err, terminal(), progressDelayMillis())) {
      for (Scenario s : runs) {
        results.add(s.run(progress, chosenSeeds));
      }
    }
    long cpuNanos = 0;
    long wallNanos = 0;
    int usedThreads = 1;
    for (ScenarioResult r : results) {
      cpuNanos = r.cpuTime().isNegative() || cpuNanos < 0 ? -1 : cpuNanos + r.cpuTime().toNanos();
      wallNanos += r.wallTime().toNanos();
      usedThreads = Math.max(usedThreads, r.threads());
    }

    // with --json or CSV on standard output, standard output carries only data: notes go to standard error
    PrintWriter notes = json || csvToOut ? err : out;
    String command = command();
    String version = Versions.describe();
    if (sweeping != null) {
      SweepResult sweepResult = new SweepResult(sweeping.key(), file.scenario().name(), chosenSeeds.length,
          armNames(file.scenario()), changed);
      for (int i = 0; i < results.size(); i++) {
        sweepResult.add(runValues.get(i), results.get(i));
      }
      if (json) {
        out.println(sweepResult.toJson());
      } else if (!csvToOut) {
        out.print(sweepResult.toTable());
        out.println();
      }
      JFreeChart tradeOff = noChart && htmlFile == null ? null : Chart.tradeOff(sweepResult);
      writeOutputs(out, notes, csvFile, csvToOut, sweepResult.toCsv(), chartFile,
          file.scenario().name() + "-sweep-" + sweeping.key(), tradeOff, 1100, 750);
      if (htmlFile != null) {
        write(htmlFile, HtmlReport.sweep(sweepResult, Chart.svg(java.util.Objects.requireNonNull(tradeOff), 1100, 750), file.source()
            + "\n# swept: " + sweeping.key() + " = " + String.join(", ", sweeping.values()) + "\n", command, version));
        notes.println("Report: " + htmlFile.toAbsolutePath());
      }
    } else {
      ScenarioResult result = results.get(0);
      List<String> story = Story.of(result);
      if (json) {
        out.println(result.toJson());
      } else if (!csvToOut) {
        out.print(result.toTable());
        out.println();
        for (String s : story) {
          out.println(s);
        }
        if (!story.isEmpty()) {
          out.println();
        }
      }
      JFreeChart run = noChart && htmlFile == null ? null : Chart.run(result, bounds(file));
      writeOutputs(out, notes, csvFile, csvToOut, csv == null ? "" : result.toCsv(), chartFile,
          file.scenario().name(), run, 1200, 900);
      if (htmlFile != null) {
        write(htmlFile, HtmlReport.run(result, story, Chart.svg(java.util.Objects.requireNonNull(run), 1200, 900), file.source(), command, version));
        notes.println("Report: " + htmlFile.toAbsolutePath());
      }
    }
    if (callsFile != null) {
      writeCalls(callsFile, runs.get(0).arms().get(0).simulation(), chosenSeeds[0]);
      notes.println("Calls: " + callsFile.toAbsolutePath());
    }
    int count = 0;
    for (ScenarioResult r : results) {
      count += r.seeds().length * r.arms().size();
    }
    notes.println("Simulated " + count + (count == 1 ? " run" : " runs") + " of "
        + Text.clock(results.get(0).arms().get(0).first().duration()) + " in "
        + (cpuNanos >= 0 ? cpuNanos / 1_000_000 + " ms of CPU" : "an unmeasured amount of CPU") + " on "
        + usedThreads + (usedThreads == 1 ? " thread" : " threads") + " (" + wallNanos / 1_000_000
        + " ms of wall-clock time).");
    out.flush();
    err.flush();
    return 0;
  }

  private void writeOutputs(PrintWriter out, PrintWriter notes, @Nullable Path csvFile, boolean csvToOut, String csvText,
      @Nullable Path chartFile, String defaultStem, @Nullable JFreeChart drawn, int width, int height) {
    if (csvToOut) {
      out.print(csvText);
    } else if (csvFile != null) {
      write(csvFile, csvText);
      notes.println((sweep != null ? "Sweep" : "Per-second series") + ": " + csvFile.toAbsolutePath());
    }
    if (!noChart && drawn != null) {
      Path png = chartFile;
      if (png == null) {
        Path folder = Paths.get(OUTPUT_FOLDER);
        try {
          Files.createDirectories(folder);
        } catch (IOException e) {
          throw new OutputException("cannot create the folder " + folder.toAbsolutePath() + " for the chart: "
              + why(e) + "; give --chart FILE or --no-chart");
        }
        png = folder.resolve(safeName(defaultStem) + ".png");
      }
      try {
        Chart.png(drawn, png, width, height);
      } catch (IOException e) {
        throw new OutputException("cannot write the chart to " + png.toAbsolutePath() + ": " + why(e));
      }
      notes.println("Chart: " + png.toAbsolutePath());
    }
  }

  /** The calls of one run as an access log: the run again (it is deterministic), streamed to {@code file}. */
  private static void writeCalls(Path file, dev.quell.sim.Simulation simulation, long seed) {
    java.time.Instant base = java.time.Instant.parse("2026-01-01T00:00:00Z");
    try (java.io.BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      out.write("timestamp,latency_ms,outcome\n");
      java.io.IOException[] failed = {null};
      simulation.run(seed, (started, elapsed, reason) -> {
        if (failed[0] != null) {
          return;
        }
        try {
          out.write(base.plusNanos(started) + "," + String.format(Locale.ROOT, "%.3f", elapsed / 1e6) + ","
              + (reason == dev.quell.StopReason.SUCCEEDED ? "ok" : "error") + "\n");
        } catch (java.io.IOException e) {
          failed[0] = e;
        }
      });
      if (failed[0] != null) {
        throw failed[0];
      }
    } catch (IOException e) {
      throw new OutputException("cannot write " + file.toAbsolutePath() + ": " + why(e));
    }
  }

  /** Refuses a run that is too big before it starts, unless told to go ahead. */
  private void check(List<Scenario> runs, int seedCount) {
    long attempts = 0;
    long bytes = 0;
    long calls = 0;
    long runCount = 0;
    for (Scenario s : runs) {
      Estimate e = s.estimate(seedCount);
      attempts = Math.max(attempts, 0) + e.attempts() < 0 ? Long.MAX_VALUE : attempts + e.attempts();
      bytes = bytes + e.bytes() < 0 ? Long.MAX_VALUE : bytes + e.bytes();
      calls = calls + e.calls() < 0 ? Long.MAX_VALUE : calls + e.calls();
      runCount += e.runs();
    }
    long heap = Runtime.getRuntime().maxMemory();
    String size = runCount + (runCount == 1 ? " run" : " runs") + ", " + String.format(Locale.ROOT, "%,d", calls)
        + " calls, up to " + (attempts == Long.MAX_VALUE ? "too many" : String.format(Locale.ROOT, "%,d", attempts))
        + " attempts, about " + Estimate.megabytes(bytes) + " of memory";
    if (allowLarge) {
      return;
    }
    if (attempts > Estimate.ATTEMPT_LIMIT) {
      throw new ScenarioException("this run is too big to start without asking: " + size + ", over the limit of "
          + String.format(Locale.ROOT, "%,d", Estimate.ATTEMPT_LIMIT) + " attempts (a couple of minutes of CPU); make"
          + " it smaller (fewer seeds, a shorter duration, a lower rate) or add --allow-large to run it anyway");
    }
    if (bytes > heap * 0.8) {
      throw new ScenarioException("this run needs more memory than the JVM may use: " + size + ", and the heap"
          + " limit is " + Estimate.megabytes(heap) + "; raise it (QUELL_JAVA_OPTS=-Xmx8g ./quell simulate ...),"
          + " run fewer seeds or a shorter duration, or add --allow-large to try anyway");
    }
  }

  private Scenario withThreads(Scenario s) {
    return threads == null ? s : s.parallelism(threads);
  }

  private static List<String> armNames(Scenario s) {
    List<String> names = new ArrayList<>();
    for (Scenario.Arm a : s.arms()) {
      names.add(a.name());
    }
    return names;
  }

  /** Each arm's budget bound, from the scenario file: automatic and {fraction, minimumPerSecond} budgets have one. */
  private static Map<String, Chart.BudgetBound> bounds(ScenarioFile file) {
    Map<String, Chart.BudgetBound> bounds = new LinkedHashMap<>();
    Map<String, Object> tree = file.tree();
    List<?> arms = tree.get("arms") instanceof List ? (List<?>) tree.get("arms") : List.of(Map.of("name", "policy",
        "policy", tree.getOrDefault("policy", Map.of())));
    for (int i = 0; i < arms.size() && i < file.scenario().arms().size(); i++) {
      Object arm = arms.get(i);
      Object policy = arm instanceof Map ? ((Map<?, ?>) arm).get("policy") : null;
      Object budget = policy instanceof Map ? ((Map<?, ?>) policy).get("budget") : null;
      String name = file.scenario().arms().get(i).name();
      int attempts = policy instanceof Map && ((Map<?, ?>) policy).get("attempts") instanceof Number
          ? ((Number) ((Map<?, ?>) policy).get("attempts")).intValue() : 3;
      if (attempts < 2) {
        continue;
      }
      if (budget == null || "automatic".equals(budget)) {
        bounds.put(name, new Chart.BudgetBound(0.1, 3));
      } else if (budget instanceof Map) {
        Map<?, ?> b = (Map<?, ?>) budget;
        if (b.keySet().stream().allMatch(k -> k.equals("fraction") || k.equals("minimumPerSecond"))) {
          double fraction = b.get("fraction") instanceof Number ? ((Number) b.get("fraction")).doubleValue() : 0.1;
          double floor = b.get("minimumPerSecond") instanceof Number
              ? ((Number) b.get("minimumPerSecond")).doubleValue() : 3;
          bounds.put(name, new Chart.BudgetBound(fraction, floor));
        }
      }
    }
    return bounds;
  }

  private static ScenarioFile load(String name) {
    var builtIn = Builtins.find(name);
    if (builtIn.isPresent()) {
      return builtIn.get();
    }
    Path file;
    try {
      file = Paths.get(name);
    } catch (InvalidPathException e) {
      throw new ScenarioException("--scenario must be " + String.join(", ", Builtins.NAMES) + " or a YAML file, was \""
          + name + "\"");
    }
    if (Files.isDirectory(file)) {
      throw new ScenarioException("--scenario " + name + " is a folder; give a YAML file in it");
    }
    if (!Files.isRegularFile(file)) {
      throw new ScenarioException("--scenario must be " + String.join(", ", Builtins.NAMES)
          + " or a YAML file; there is no file " + file.toAbsolutePath());
    }
    return ScenarioFile.read(file);
  }

  private static String origin(String name) {
    return Builtins.NAMES.contains(name.toLowerCase(Locale.ROOT)) ? name.toLowerCase(Locale.ROOT)
        : Paths.get(name).getFileName().toString();
  }

  /** An output file: its folder must exist, and it must not be a folder itself. */
  static Path outputFile(String option, String name, String... extensions) {
    Path file;
    try {
      file = Paths.get(name);
    } catch (InvalidPathException e) {
      throw new ScenarioException(option + " is not a usable file name: \"" + name + "\"");
    }
    if (name.isBlank()) {
      throw new ScenarioException(option + " needs a file name");
    }
    if (Files.isDirectory(file)) {
      throw new ScenarioException(option + " " + name + " is a folder; give a file name in it");
    }
    boolean known = extensions.length == 1 && extensions[0].isEmpty();
    for (String ext : extensions) {
      known |= !ext.isEmpty() && name.toLowerCase(Locale.ROOT).endsWith(ext);
    }
    if (!known) {
      throw new ScenarioException(option + " must name a " + String.join(" or ", extensions) + " file, was \"" + name
          + "\"");
    }
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null && !Files.isDirectory(parent)) {
      throw new ScenarioException(option + " " + name + ": the folder " + parent + " does not exist; create it first");
    }
    return file;
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new OutputException("cannot write " + file.toAbsolutePath() + ": " + why(e));
    }
  }

  /**
   * Why a write failed, in words: the JDK's exceptions for files often carry nothing but the file's
   * name as their message ({@code AccessDeniedException: /sys/r.html}), so the kind of failure is
   * named from the exception's type, and the operating system's reason added when it gave one.
   */
  public static String why(IOException e) {
    String reason = e instanceof FileSystemException ? ((FileSystemException) e).getReason() : null;
    String kind;
    if (e instanceof AccessDeniedException) {
      kind = "permission denied";
    } else if (e instanceof NoSuchFileException) {
      kind = "no such file or folder";
    } else if (e instanceof FileAlreadyExistsException) {
      kind = "something is already there";
    } else if (e instanceof NotDirectoryException) {
      kind = "a part of the path is not a folder";
    } else if (e instanceof FileSystemException) {
      kind = reason != null ? reason : "the file system refused (" + e.getClass().getSimpleName() + ")";
      reason = null;
    } else {
      String message = e.getMessage();
      kind = message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }
    return reason == null || reason.isBlank() || kind.equalsIgnoreCase(reason) ? kind
        : kind + " (" + reason + ")";
  }

  static long[] parseSeeds(String text) {
    String t = text.trim();
    String usage = "--seeds must be a count from 1 to 1000 (3 means 1,2,3) or a list of distinct whole numbers such"
        + " as 7,8,9, was \"" + text + "\"";
    try {
      if (t.contains(",")) {
        String[] parts = t.split(",", -1);
        if (parts.length > 1000) {
          throw new ScenarioException(usage);
        }
        long[] seeds = new long[parts.length];
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < parts.length; i++) {
          seeds[i] = Long.parseLong(parts[i].trim());
          if (!seen.add(seeds[i])) {
            throw new ScenarioException("--seeds names seed " + seeds[i] + " twice; each seed runs once");
          }
        }
        return seeds;
      }
      long count = Long.parseLong(t);
      if (count < 1 || count > 1000) {
        throw new ScenarioException(usage);
      }
      return ScenarioFile.seeds(count, "--seeds");
    } catch (NumberFormatException e) {
      throw new ScenarioException(usage);
    }
  }

  private static String safeName(String name) {
    return name.replaceAll("[^A-Za-z0-9._-]+", "-");
  }

  private String command() {
    CommandSpec s = spec();
    List<String> args = s.commandLine().getParseResult() == null ? List.of()
        : s.commandLine().getParseResult().originalArgs();
    return "quell" + (args.isEmpty() ? " simulate" : " " + String.join(" ", args));
  }

  /** Standard error is a terminal: the launcher says so; run without it, the JVM's console is the best guess. */
  static boolean terminal() {
    String told = System.getProperty("quell.stderr.tty");
    if (told != null) {
      return Boolean.parseBoolean(told);
    }
    return System.console() != null;
  }

  /** Runs shorter than this show no progress at all. */
  static long progressDelayMillis() {
    return Long.getLong("quell.progress.delayMillis", 2_000L);
  }

  private CommandSpec spec() {
    if (spec == null) {
      throw new IllegalStateException("picocli injects the spec before calling the command");
    }
    return spec;
  }

  /** An output could not be written: not the user's scenario, so exit code 1. */
  static final class OutputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    OutputException(String message) {
      super(message);
    }
  }
}
