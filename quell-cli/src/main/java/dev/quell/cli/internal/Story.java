package dev.quell.cli.internal;

import dev.quell.sim.EdgeReport;
import dev.quell.sim.Phase;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.SimulationReport;
import dev.quell.sim.internal.Text;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The run in a sentence or a few: what a guard cost this client and what it did for the dependency,
 * whenever a scenario has two arms that differ in that guard alone — the budget (what it cost and
 * saved), the circuit breaker (the load during the incident and the time to recover), hedging (the
 * tail against the extra attempts); and, after the reference scenario, where to see the budget decide
 * between recovering and not. With several seeds every figure is the median the table shows; in a
 * topology every figure names the node it is about.
 */
final class Story {
  private Story() {}

  /** Which guards an arm's policy has, by name: budget, breaker, limiters, hedge. */
  private static List<Boolean> guards(ScenarioResult.ArmResult a) {
    EdgeReport e = a.first().entry();
    return List.of(!"none".equals(e.budget()), !"none".equals(e.breaker()), !"none".equals(e.limiters()),
        !"none".equals(e.hedge()));
  }

  /** Pairs of arms (without, with) that differ only in guard {@code index}; the first of each arm without. */
  private static List<ScenarioResult.ArmResult[]> pairs(ScenarioResult result, int index, boolean every) {
    List<ScenarioResult.ArmResult[]> pairs = new ArrayList<>();
    List<ScenarioResult.ArmResult> arms = result.arms();
    for (ScenarioResult.ArmResult without : arms) {
      List<Boolean> g = guards(without);
      if (g.get(index)) {
        continue;
      }
      for (ScenarioResult.ArmResult with : arms) {
        List<Boolean> h = guards(with);
        boolean differsOnlyThere = h.get(index);
        for (int i = 0; i < g.size(); i++) {
          differsOnlyThere &= i == index || g.get(i).equals(h.get(i));
        }
        if (differsOnlyThere) {
          pairs.add(new ScenarioResult.ArmResult[] {without, with});
          if (!every) {
            return pairs;
          }
        }
      }
    }
    return pairs;
  }

  static List<String> of(ScenarioResult result) {
    List<String> lines = new ArrayList<>();
    for (ScenarioResult.ArmResult[] pair : pairs(result, 0, false)) {
      lines.add(budget(pair[0], pair[1]));
    }
    for (ScenarioResult.ArmResult[] pair : pairs(result, 1, false)) {
      lines.add(breaker(pair[0], pair[1]));
    }
    List<ScenarioResult.ArmResult[]> hedged = pairs(result, 3, true);
    for (ScenarioResult.ArmResult[] pair : hedged) {
      if (pair[0] == hedged.get(0)[0]) { // each hedged arm against the first arm without hedging like it
        lines.add(hedge(pair[0], pair[1]));
      }
    }
    if (result.scenario().name().equals("reference") && !lines.isEmpty()) {
      lines.add("With 16 pods, the same brownout leaves the unbudgeted fleet failing after it ends, and the"
          + " budget is the difference between recovering and not: ./quell simulate --scenario sixteen-pods");
    }
    return lines;
  }

  /** The median of {@code metric} over the arm's seeds: the figure the table shows (its only run's, with one seed). */
  private static double median(ScenarioResult.ArmResult arm, ToDoubleFunction<SimulationReport> metric) {
    return arm.bands().band(metric).median();
  }

  /** How a sentence opens: with several seeds, it says its figures are the medians the table shows. */
  private static String opening(ScenarioResult.ArmResult arm, String words) {
    int seeds = arm.bands().reports().size();
    return seeds == 1 ? words : words + " (medians of " + seeds + " seeds, as in the table)";
  }

  /** The first incident's index among the phases, or -1. */
  private static int incident(SimulationReport model) {
    for (int p = 0; p < model.phases().size(); p++) {
      if (model.phases().get(p).incident()) {
        return p;
      }
    }
    return -1;
  }

  private static String budget(ScenarioResult.ArmResult off, ScenarioResult.ArmResult on) {
    SimulationReport model = off.first();
    // in a topology, every figure says which node it is about: the entry's attempts are not the deepest node's
    boolean topology = model.nodes().size() > 1;
    String entry = model.entry().to();
    double availabilityOff = median(off, SimulationReport::availability);
    double availabilityOn = median(on, SimulationReport::availability);
    double points = 100 * (availabilityOff - availabilityOn);
    StringBuilder s = new StringBuilder(opening(off, "In one line")).append(": the budget");
    s.append(Math.abs(points) < 0.05 ? " cost this client no availability"
        : points > 0 ? " cost this client " + Text.fixed(points, 1) + " points of availability"
        : " gained this client " + Text.fixed(-points, 1) + " points of availability");
    s.append(" (").append(Text.percent(availabilityOff)).append(" → ").append(Text.percent(availabilityOn));
    int incident = incident(model);
    if (incident >= 0) {
      s.append("; ").append(model.phases().get(incident).name()).append(": ")
          .append(Text.percent(median(off, r -> r.phases().get(incident).availability()))).append(" → ")
          .append(Text.percent(median(on, r -> r.phases().get(incident).availability())));
    }
    double attemptsOff = median(off, r -> (double) r.attempts());
    double saved = attemptsOff - median(on, r -> (double) r.attempts());
    String dependency = topology ? entry : "the dependency";
    s.append(") and ").append(saved >= 0 ? "saved " : "added to ").append(dependency).append(' ')
        .append(String.format(Locale.ROOT, "%,d", Math.round(Math.abs(saved)))).append(" attempts (")
        .append(Text.fixed(100.0 * Math.abs(saved) / Math.max(1, attemptsOff), 0)).append("% of ")
        .append(off.name()).append("'s), holding ").append(topology ? entry + "'s" : "its")
        .append(" worst second to ").append(Text.fixed(median(on, SimulationReport::worstSecond), 2))
        .append("× instead of ").append(Text.fixed(median(off, SimulationReport::worstSecond), 2)).append("×");
    if (topology) {
      // the deepest node is where retries compound; the chart draws it, so the sentence names it too
      String deepest = model.nodes().get(model.nodes().size() - 1).name();
      s.append(" and ").append(deepest).append("'s (the deepest node, drawn in the chart) to ")
          .append(Text.fixed(median(on, r -> r.node(deepest).worstSecond()), 2)).append("× instead of ")
          .append(Text.fixed(median(off, r -> r.node(deepest).worstSecond()), 2)).append("×");
    }
    return s.append('.').toString();
  }

  private static String breaker(ScenarioResult.ArmResult off, ScenarioResult.ArmResult on) {
    SimulationReport model = off.first();
    StringBuilder s = new StringBuilder(opening(off, "The breaker (" + on.name() + " against " + off.name() + ")"));
    int incident = incident(model);
    if (incident >= 0) {
      Phase a = model.phases().get(incident);
      s.append(" changed what the dependency saw ").append(a.name()).append(" from ")
          .append(Text.fixed(median(off, r -> r.phases().get(incident).loadMultiplier()), 2)).append("× to ")
          .append(Text.fixed(median(on, r -> r.phases().get(incident).loadMultiplier()), 2))
          .append("× the offered calls, and the time to recover from ").append(recovery(off)).append(" to ")
          .append(recovery(on)).append('.');
    } else {
      s.append(" changed the load multiplier from ").append(Text.fixed(median(off, SimulationReport::loadMultiplier), 2))
          .append("× to ").append(Text.fixed(median(on, SimulationReport::loadMultiplier), 2))
          .append("× and availability from ").append(Text.percent(median(off, SimulationReport::availability)))
          .append(" to ").append(Text.percent(median(on, SimulationReport::availability))).append('.');
    }
    return s.toString();
  }

  private static String recovery(ScenarioResult.ArmResult arm) {
    double seconds = arm.bands().timeToRecoverSeconds().median();
    return seconds == Double.POSITIVE_INFINITY ? "never (in this run)" : Text.number(seconds) + " s";
  }

  private static String hedge(ScenarioResult.ArmResult off, ScenarioResult.ArmResult on) {
    ToDoubleFunction<SimulationReport> p99 = r -> r.latency().p99().toNanos() / 1e6;
    ToDoubleFunction<SimulationReport> p999 = r -> r.latency().p999().toNanos() / 1e6;
    double attemptsOff = median(off, r -> (double) r.attempts());
    double extra = 100.0 * (median(on, r -> (double) r.attempts()) - attemptsOff) / Math.max(1, attemptsOff);
    return opening(off, "Hedging (" + on.name() + " against " + off.name() + ")") + ": call p99 "
        + Text.ms(median(off, p99)) + " → " + Text.ms(median(on, p99)) + " ms, p99.9 " + Text.ms(median(off, p999))
        + " → " + Text.ms(median(on, p999)) + " ms, for " + Text.fixed(extra, 1) + "% more attempts (worst second "
        + Text.fixed(median(off, SimulationReport::worstSecond), 2) + "× → "
        + Text.fixed(median(on, SimulationReport::worstSecond), 2) + "×).";
  }
}
