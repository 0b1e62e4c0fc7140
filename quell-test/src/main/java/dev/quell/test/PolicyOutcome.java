package dev.quell.test;

import dev.quell.ResilienceConfigurationException;
import dev.quell.sim.NodeReport;
import dev.quell.sim.Phase;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.SimulationReport;
import dev.quell.sim.internal.Text;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What a {@link PolicyCheck} saw, with assertions on it in the AssertJ manner: each returns this
 * outcome, so they chain, and the first that misses throws an {@link AssertionError} whose message
 * names the figure, the limit and by how much it missed, then gives the run in one line and where its
 * chart was written. With several seeds each assertion must hold for every seed; the message names
 * the first seed that missed.
 *
 * <p>The figures are those {@code quell simulate} prints: the load multiplier and worst second are
 * attempts reaching the target ÷ calls offered (over the run, and in the worst second); availability
 * is succeeded ÷ offered; in a topology, attempts per call are counted at the deepest service or
 * dependency, where retries compound. Not thread-safe to share while a chart is being drawn.
 */
public final class PolicyOutcome {
  private final String name;
  private final ScenarioResult result;
  private final Path charts;

  PolicyOutcome(String name, ScenarioResult result, Path charts) {
    this.name = name;
    this.result = result;
    this.charts = charts;
  }

  /** Each seed's report, in the order of the seeds. */
  public List<SimulationReport> reports() {
    return result.arms().get(0).bands().reports();
  }

  /** The first seed's report. */
  public SimulationReport report() {
    return reports().get(0);
  }

  /** The first seed's run in one line: what a failure message prints. */
  public String summary() {
    return summary(report());
  }

  // ------------------------------------------------------------------ assertions

  /** Attempts reaching the target ÷ calls offered, over the whole run, is at most {@code max}. */
  public PolicyOutcome hasLoadMultiplierAtMost(double max) {
    limit("load multiplier", max, 1);
    for (SimulationReport r : reports()) {
      atMost(r, "load multiplier", r.loadMultiplier(), max, times());
    }
    return this;
  }

  /**
   * In no second did the target receive more than {@code max} times the attempts the offered calls
   * alone would have sent it: the figure a budget bounds.
   */
  public PolicyOutcome hasWorstSecondAtMost(double max) {
    limit("worst second", max, 1);
    for (SimulationReport r : reports()) {
      atMost(r, "worst second", r.worstSecond(), max, d -> times().format(d) + " at "
          + Text.clock(Duration.ofSeconds(Math.max(0, r.worstSecondAt()))));
    }
    return this;
  }

  /** Succeeded ÷ offered calls, over the whole run, is at least {@code min} (a ratio: 0.99 for 99%). */
  public PolicyOutcome hasAvailabilityAtLeast(double min) {
    ratio("availability", min);
    for (SimulationReport r : reports()) {
      atLeast(r, "availability", r.availability(), min);
    }
    return this;
  }

  /** Availability during the (first) incident is at least {@code min} (a ratio). */
  public PolicyOutcome hasAvailabilityDuringIncidentAtLeast(double min) {
    ratio("availability during the incident", min);
    for (SimulationReport r : reports()) {
      Phase p = incident(r);
      atLeast(r, "availability " + p.name(), p.availability(), min);
    }
    return this;
  }

  /**
   * The calls were back, as healthy as before, within {@code max} of the end of the last incident
   * (the simulator's time to recover, to the second).
   */
  public PolicyOutcome recoversWithin(Duration max) {
    if (max == null || max.isNegative()) {
      throw new ResilienceConfigurationException("time to recover maximum was " + max + ": must be 0 or more");
    }
    for (SimulationReport r : reports()) {
      incident(r);
      if (r.timeToRecover().isEmpty()) {
        fail(r, "the calls never recovered (within the run) after the incident; allowed at most "
            + Text.duration(max) + " to recover");
      }
      Duration took = r.timeToRecover().get();
      if (took.compareTo(max) > 0) {
        fail(r, "time to recover was " + took.toSeconds() + " s, above the allowed " + Text.duration(max) + " by "
            + Text.duration(took.minus(max)));
      }
    }
    return this;
  }

  /**
   * Attempts per call offered, over the whole run, is at most {@code max}: at the dependency; in a
   * topology, at the deepest service or dependency (where every layer's retries multiply).
   */
  public PolicyOutcome hasAttemptsPerCallAtMost(double max) {
    limit("attempts per call", max, 1);
    for (SimulationReport r : reports()) {
      NodeReport deepest = r.nodes().get(r.nodes().size() - 1);
      double value = r.nodes().size() > 1 ? deepest.attemptsPerCall() : r.loadMultiplier();
      atMost(r, "attempts per call" + (r.nodes().size() > 1 ? " at " + deepest.name() : ""), value, max,
          d -> Text.fixed(d, 2));
    }
    return this;
  }

  /** Like {@link #hasAttemptsPerCallAtMost(double)}, during the (first) incident alone. */
  public PolicyOutcome hasAttemptsPerCallDuringIncidentAtMost(double max) {
    limit("attempts per call during the incident", max, 1);
    for (SimulationReport r : reports()) {
      Phase p = incident(r);
      int index = r.phases().indexOf(p);
      NodeReport deepest = r.nodes().get(r.nodes().size() - 1);
      double value = r.nodes().size() > 1 ? deepest.attemptsPerCallByPhase().get(index) : p.loadMultiplier();
      atMost(r, "attempts per call " + p.name() + (r.nodes().size() > 1 ? " at " + deepest.name() : ""), value, max,
          d -> Text.fixed(d, 2));
    }
    return this;
  }

  /** The 99th percentile of call latency (retries, backoff and failed calls included) is at most {@code max}. */
  public PolicyOutcome hasP99AtMost(Duration max) {
    if (max == null || max.isNegative() || max.isZero()) {
      throw new ResilienceConfigurationException("p99 maximum was " + max + ": must be above 0");
    }
    for (SimulationReport r : reports()) {
      Duration p99 = r.latency().p99();
      if (p99.compareTo(max) > 0) {
        fail(r, "call latency p99 was " + ms(p99) + ", above the allowed " + ms(max) + " by " + ms(p99.minus(max)));
      }
    }
    return this;
  }

  // ------------------------------------------------------------------ the checks and the message

  private interface Format {
    String format(double value);
  }

  private static Format times() {
    return d -> Text.fixed(d, 2) + "×";
  }

  private static String ms(Duration d) {
    return Text.ms(d.toNanos() / 1e6) + " ms";
  }

  private static void limit(String what, double max, double floor) {
    if (!Double.isFinite(max) || max < floor) {
      throw new ResilienceConfigurationException(what + " maximum was " + max + ": must be a finite number of at"
          + " least " + Text.number(floor));
    }
  }

  private static void ratio(String what, double min) {
    if (!(min >= 0 && min <= 1)) {
      throw new ResilienceConfigurationException(what + " minimum was " + min + ": must be a ratio from 0 to 1"
          + " (0.99 for 99%)");
    }
  }

  private void atMost(SimulationReport r, String what, double value, double max, Format format) {
    if (Double.isNaN(value) || value > max) {
      String unit = format.format(1).startsWith("1.00×") ? "×" : "";
      fail(r, what + " was " + format.format(value) + ", above the allowed " + Text.fixed(max, 2) + unit + " by "
          + Text.fixed(value - max, 2) + unit + " (" + Text.fixed(100 * (value - max) / max, 0) + "%)");
    }
  }

  private void atLeast(SimulationReport r, String what, double value, double min) {
    if (Double.isNaN(value) || value < min) {
      fail(r, what + " was " + Text.percent(value) + ", below the allowed " + Text.percent(min) + " by "
          + Text.fixed(100 * (min - value), 1) + " points");
    }
  }

  private static Phase incident(SimulationReport r) {
    for (Phase p : r.phases()) {
      if (p.incident()) {
        return p;
      }
    }
    throw new IllegalStateException("the model has no incident, so there is nothing to assert about one: add"
        + " an incident to the dependency (Incident.brownout(8).between(...), or incidents: in the file)");
  }

  private void fail(SimulationReport r, String miss) {
    StringBuilder m = new StringBuilder("policy check '").append(name).append("' failed: ").append(miss)
        .append("\n  run: ").append(describe(r))
        .append("\n  in one line: ").append(summary(r))
        .append("\n  chart: ").append(chart(r));
    throw new AssertionError(m.toString());
  }

  private String describe(SimulationReport r) {
    return r.description() + ", seed " + r.seed() + (reports().size() > 1 ? " (" + (reports().indexOf(r) + 1)
        + " of " + reports().size() + " seeds)" : "");
  }

  /** The run in one line: load, worst second, availability (and during the incident), recovery, p99, diagnosis. */
  static String summary(SimulationReport r) {
    StringBuilder s = new StringBuilder("load ").append(Text.fixed(r.loadMultiplier(), 2)).append("×, worst second ")
        .append(Text.fixed(r.worstSecond(), 2)).append("× at ")
        .append(Text.clock(Duration.ofSeconds(Math.max(0, r.worstSecondAt())))).append(", availability ")
        .append(Text.percent(r.availability()));
    for (Phase p : r.phases()) {
      if (p.incident()) {
        s.append(" (").append(p.name()).append(": ").append(Text.percent(p.availability())).append(')');
        s.append(", ").append(r.timeToRecover().map(d -> "recovered " + d.toSeconds() + " s after the incident")
            .orElse("not recovered"));
        break;
      }
    }
    if (r.nodes().size() > 1) {
      NodeReport deepest = r.nodes().get(r.nodes().size() - 1);
      s.append(", ").append(Text.fixed(deepest.attemptsPerCall(), 2)).append(" attempts per call at ")
          .append(deepest.name());
    }
    s.append(", call p99 ").append(ms(r.latency().p99())).append(": ").append(r.diagnosis().label());
    return s.toString();
  }

  /** Draws the failed seed's chart and says where; or why there is none. */
  private String chart(SimulationReport r) {
    String file = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9._-]+", "-") + "-seed-" + r.seed() + ".png";
    Path png = charts.resolve(file).toAbsolutePath();
    try {
      Files.createDirectories(charts);
      ScenarioResult one = reports().size() == 1 ? result : result.scenario().run(r.seed());
      return CommandSupport.chart(one, png) ? png.toString()
          : "not drawn (add dev.quell:quell-cli in test scope beside quell-test for one)";
    } catch (IOException | RuntimeException e) {
      return "not drawn: " + e.getMessage();
    }
  }

  @Override
  public String toString() {
    return "policy check '" + name + "': " + summary();
  }
}
