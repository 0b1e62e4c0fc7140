package dev.quell.sim;

import dev.quell.StopReason;
import dev.quell.sim.internal.Json;
import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.DoubleFunction;
import java.util.function.Function;

/**
 * The result of a {@link Scenario}: each arm's runs and bands, and the CPU time they took. Renders as
 * the side-by-side table {@code quell simulate} prints, as JSON, and as CSV. Immutable.
 */
public final class ScenarioResult {

  /**
   * One arm's runs.
   *
   * @param name the arm's name
   * @param bands its runs, one per seed, and their bands
   */
  public record ArmResult(String name, SimulationBands bands) {
    /** Checks the result. */
    public ArmResult {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(bands, "bands");
    }

    /** The run with the first seed. */
    public SimulationReport first() {
      return bands.first();
    }
  }

  private final Scenario scenario;
  private final long[] seeds;
  private final List<ArmResult> arms;
  private final Duration cpuTime;
  private final Duration wallTime;
  private final int threads;

  ScenarioResult(Scenario scenario, long[] seeds, List<ArmResult> arms, Duration cpuTime, Duration wallTime,
      int threads) {
    this.threads = threads;
    this.scenario = scenario;
    this.seeds = seeds;
    this.arms = List.copyOf(arms);
    this.cpuTime = cpuTime;
    this.wallTime = wallTime;
  }

  /** The scenario that ran. */
  public Scenario scenario() {
    return scenario;
  }

  /** The seeds, in order. */
  public long[] seeds() {
    return seeds.clone();
  }

  /** Each arm's result, in the scenario's order. */
  public List<ArmResult> arms() {
    return arms;
  }

  /**
   * The arm called {@code name}.
   *
   * @throws IllegalArgumentException when there is none
   */
  public ArmResult arm(String name) {
    for (ArmResult a : arms) {
      if (a.name().equals(name)) {
        return a;
      }
    }
    throw new IllegalArgumentException("no arm named '" + name + "'");
  }

  /** How many threads the runs went on. */
  public int threads() {
    return threads;
  }

  /** CPU time the runs took, summed over the threads that ran them (negative when the JVM cannot measure it). */
  public Duration cpuTime() {
    return cpuTime;
  }

  /** Wall-clock time the scenario took. */
  public Duration wallTime() {
    return wallTime;
  }

  // ------------------------------------------------------------------ table

  /** The side-by-side table: one column per arm; with several seeds each cell is "median [min–max]". */
  public String toTable() {
    List<String[]> rows = rows();
    int columns = arms.size() + 1;
    boolean single = seeds.length == 1;
    int[] widths = new int[columns];
    for (String[] r : rows) {
      for (int c = 0; c < columns; c++) {
        widths[c] = Math.max(widths[c], r[c].length());
      }
    }
    StringBuilder out = new StringBuilder();
    out.append("Scenario ").append(scenario.name()).append(": ").append(scenario.description()).append('\n');
    out.append(single ? "Seed " + seeds[0] : seeds.length + " seeds; cells show median [min–max]").append("\n\n");
    for (String[] r : rows) {
      out.append(pad(r[0], widths[0]));
      for (int c = 1; c < columns; c++) {
        out.append("   ").append(padLeft(r[c], widths[c]));
      }
      out.append('\n');
    }
    out.append('\n');
    // an explanation gives one run's numbers: with several seeds, say which run (the cells above are medians)
    for (ArmResult a : arms) {
      out.append(a.name()).append(single ? "" : " (seed " + seeds[0] + ")").append(": ")
          .append(a.first().diagnosis().label()).append(" — ").append(a.first().explanation()).append('\n');
    }
    return out.toString();
  }

  /**
   * The table {@link #toTable()} prints, as rows of cells: a header row (an empty cell, then the arms'
   * names), then one row per number, its label first.
   */
  public List<List<String>> tableRows() {
    List<List<String>> list = new ArrayList<>();
    for (String[] r : rows()) {
      list.add(List.of(r));
    }
    return List.copyOf(list);
  }

  private List<String[]> rows() {
    List<String[]> rows = new ArrayList<>();
    int columns = arms.size() + 1;
    String[] header = new String[columns];
    header[0] = "";
    for (int i = 0; i < arms.size(); i++) {
      header[i + 1] = arms.get(i).name();
    }
    rows.add(header);
    boolean single = seeds.length == 1;
    SimulationReport model = arms.get(0).first();

    rows.add(row("load multiplier", a -> cell(a.bands().loadMultiplier(), d -> Text.fixed(d, 2) + "×")));
    if (model.phases().size() > 1) {
      for (int p = 0; p < model.phases().size(); p++) {
        Phase phase = model.phases().get(p);
        int index = p;
        rows.add(row("  " + phase.name() + " (" + Text.clock(phase.from()) + "–" + Text.clock(phase.to()) + ")",
            a -> cell(a.bands().band(r -> r.phases().get(index).loadMultiplier()), d -> Text.fixed(d, 2) + "×")));
      }
    }
    rows.add(row("worst second", a -> cell(a.bands().worstSecond(), d -> Text.fixed(d, 2) + "×")
        + (single ? " at " + Text.clock(Duration.ofSeconds(Math.max(0, a.first().worstSecondAt()))) : "")));
    rows.add(row("availability", a -> cell(a.bands().availability(), Text::percent)));
    if (model.phases().size() > 1) {
      for (int p = 0; p < model.phases().size(); p++) {
        Phase phase = model.phases().get(p);
        int index = p;
        rows.add(row("  " + phase.name() + " (" + Text.clock(phase.from()) + "–" + Text.clock(phase.to()) + ")",
            a -> cell(a.bands().phaseAvailability().get(index), Text::percent)));
      }
      rows.add(row("time to recover", a -> {
        Phase before = a.first().phases().get(0);
        if (!before.incident() && before.availability() < SimulationReport.HEALTHY_BEFORE) {
          return "n/a (unhealthy before)";
        }
        Band b = a.bands().timeToRecoverSeconds();
        return b.max() == Double.POSITIVE_INFINITY && b.isPoint() ? "not recovered"
            : cell(b, d -> d == Double.POSITIVE_INFINITY ? "never" : Text.number(d) + " s");
      }));
    }
    rows.add(row("call latency p50 / p99 / p99.9", a -> cell(a.bands().latencyP50Millis(), Text::ms) + " / "
        + cell(a.bands().latencyP99Millis(), Text::ms) + " / " + cell(a.bands().latencyP999Millis(), Text::ms)
        + " ms"));
    rows.add(row("calls", a -> count(a, r -> (double) r.calls())));
    rows.add(row("attempts", a -> count(a, r -> (double) r.attempts())));
    rows.add(row("retries", a -> count(a, r -> (double) r.retries())));
    if (any(e -> !"none".equals(e.hedge()))) {
      rows.add(row("hedges sent / won", a -> count(a, r -> (double) r.hedges()) + " / "
          + count(a, r -> (double) r.entry().hedgesWon())));
    }
    rows.add(row("retries refused by the budget", a -> count(a, r -> (double) r.retriesRefused())));
    boolean breakers = any(e -> !"none".equals(e.breaker()));
    boolean limiters = any(e -> !"none".equals(e.limiters()));
    if (breakers) {
      rows.add(row("attempts refused by the breaker", a -> count(a, r -> (double) r.refusedByBreaker())));
    }
    if (limiters) {
      rows.add(row("attempts refused by limiters", a -> count(a, r -> (double) r.limited())));
    }
    if (breakers || limiters) {
      rows.add(row("calls that never reached " + model.entry().to(),
          a -> count(a, r -> (double) r.entry().refusedBeforeFirstAttempt())));
    }
    for (StopReason reason : StopReason.values()) {
      if (reason == StopReason.SUCCEEDED) {
        continue;
      }
      boolean any = arms.stream()
          .anyMatch(a -> a.bands().reports().stream().anyMatch(r -> r.entry().stopped(reason) > 0));
      if (any) {
        rows.add(row("stopped: " + reason.name().toLowerCase(Locale.ROOT).replace('_', ' '),
            a -> count(a, r -> (double) r.entry().stopped(reason))));
      }
    }
    if (model.demand() > 0) {
      rows.add(row("first attempts alone need", a -> cell(a.bands().band(SimulationReport::demand), Text::percent)
          + " of capacity"));
    }
    for (int n = 0; n < model.nodes().size(); n++) {
      NodeReport node = model.nodes().get(n);
      int index = n;
      if (node.capacity().isPresent()) {
        rows.add(row("peak occupancy of " + node.name(), a -> cell(
            a.bands().band(r -> r.nodes().get(index).peakOccupancy()), Text::number) + " of "
            + node.capacity().getAsInt()));
      }
    }
    if (model.nodes().size() > 1) {
      for (int n = 0; n < model.nodes().size(); n++) {
        int index = n;
        String name = model.nodes().get(n).name();
        rows.add(row("attempts per call at " + name, a -> cell(
            a.bands().band(r -> r.nodes().get(index).attemptsPerCall()), d -> Text.fixed(d, 2))));
        for (int p = 0; p < model.phases().size(); p++) {
          if (model.phases().get(p).incident()) {
            int phase = p;
            rows.add(row("  " + model.phases().get(p).name(), a -> cell(
                a.bands().band(r -> r.nodes().get(index).attemptsPerCallByPhase().get(phase)), d -> Text.fixed(d, 2))));
          }
        }
      }
    }
    rows.add(row("diagnosis", a -> a.bands().diagnosis().label() + (single ? ""
        : " (" + a.bands().diagnoses().getOrDefault(a.bands().diagnosis(), 0L) + "/" + seeds.length + ")")));

    return rows;
  }

  /** True when the entry edge of some arm's first run satisfies {@code test}. */
  private boolean any(java.util.function.Predicate<EdgeReport> test) {
    return arms.stream().anyMatch(a -> test.test(a.first().entry()));
  }

  private String[] row(String label, Function<ArmResult, String> cell) {
    String[] r = new String[arms.size() + 1];
    r[0] = label;
    for (int i = 0; i < arms.size(); i++) {
      r[i + 1] = cell.apply(arms.get(i));
    }
    return r;
  }

  private static String cell(Band band, DoubleFunction<String> format) {
    String median = format.apply(band.median());
    if (band.isPoint() || Double.isNaN(band.min())) {
      return median;
    }
    String min = format.apply(band.min());
    String max = format.apply(band.max());
    return min.equals(max) ? median : median + " [" + min + "–" + max + "]";
  }

  private static String count(ArmResult a, java.util.function.ToDoubleFunction<SimulationReport> metric) {
    return cell(a.bands().band(metric), d -> String.format(Locale.ROOT, "%,d", Math.round(d)));
  }

  private static String pad(String s, int width) {
    return s + " ".repeat(width - s.length());
  }

  private static String padLeft(String s, int width) {
    return " ".repeat(width - s.length()) + s;
  }

  // ------------------------------------------------------------------ JSON

  /**
   * The result as one JSON object: the scenario, the seeds, CPU seconds, and an {@code arms} array.
   * Each arm has its {@code name}, {@code loadMultiplier}, {@code worstSecond}, {@code worstSecondAt},
   * {@code availability}, {@code phases}, {@code timeToRecoverSeconds}, {@code diagnosis} and the rest
   * of the first seed's report (its per-second {@code series} included), {@code bands} (median, min,
   * max across seeds) and, with several seeds, {@code runs}: every seed's report without its series.
   */
  public String toJson() {
    Json json = new Json();
    json.beginObject().field("scenario", scenario.name()).field("description", scenario.description());
    json.name("seeds").beginArray();
    for (long s : seeds) {
      json.value(s);
    }
    json.endArray();
    json.field("cpuSeconds", cpuTime.toNanos() / 1e9);
    json.name("arms").beginArray();
    for (ArmResult a : arms) {
      json.beginObject().field("name", a.name());
      a.first().writeMembers(json, true);
      a.bands().writeBands(json);
      if (seeds.length > 1) {
        json.name("runs").beginArray();
        for (SimulationReport r : a.bands().reports()) {
          r.write(json, false);
        }
        json.endArray();
      }
      json.endObject();
    }
    json.endArray();
    json.endObject();
    return json.toString();
  }

  // ------------------------------------------------------------------ CSV

  /**
   * The per-second series of every arm and seed as CSV with a header row: arm, seed, second, offered,
   * first_attempts, retries, retries_refused, succeeded, hedges, refused_by_breaker, limited, one
   * failed_… column per stop reason, failed,
   * budget_tokens (empty without a budget), occupancy, queue and latency_p99_ms (the p99 of the calls
   * that ended in the second; empty when none did).
   */
  public String toCsv() {
    StringBuilder out = new StringBuilder("arm,seed,second,offered,first_attempts,retries,retries_refused,succeeded,"
        + "hedges,refused_by_breaker,limited");
    for (StopReason r : StopReason.values()) {
      if (r != StopReason.SUCCEEDED) {
        out.append(",failed_").append(r.name().toLowerCase(Locale.ROOT));
      }
    }
    out.append(",failed,budget_tokens,occupancy,queue,latency_p99_ms\n");
    for (ArmResult a : arms) {
      for (SimulationReport report : a.bands().reports()) {
        for (Second s : report.series()) {
          out.append(csv(a.name())).append(',').append(report.seed()).append(',').append(s.second()).append(',')
              .append(s.offered()).append(',').append(s.firstAttempts()).append(',').append(s.retries()).append(',')
              .append(s.retriesRefused()).append(',').append(s.succeeded()).append(',').append(s.hedges()).append(',')
              .append(s.refusedByBreaker()).append(',').append(s.limited());
          for (StopReason r : StopReason.values()) {
            if (r != StopReason.SUCCEEDED) {
              out.append(',').append(s.failures().getOrDefault(r, 0L));
            }
          }
          out.append(',').append(s.failed()).append(',')
              .append(Double.isNaN(s.budgetTokens()) ? "" : Text.fixed(s.budgetTokens(), 3)).append(',')
              .append(Text.fixed(s.occupancy(), 3)).append(',').append(Text.fixed(s.queue(), 3)).append(',')
              .append(Double.isNaN(s.latencyP99Millis()) ? "" : Text.fixed(s.latencyP99Millis(), 3)).append('\n');
        }
      }
    }
    return out.toString();
  }

  private static String csv(String s) {
    return s.contains(",") || s.contains("\"") ? '"' + s.replace("\"", "\"\"") + '"' : s;
  }
}
