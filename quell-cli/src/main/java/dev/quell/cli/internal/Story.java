package dev.quell.cli.internal;

import dev.quell.sim.EdgeReport;
import dev.quell.sim.Phase;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.SimulationReport;
import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * The run in a sentence or a few: what a guard cost this client and what it did for the dependency,
 * whenever a scenario has two arms that differ in that guard alone — the budget (what it cost and
 * saved), the circuit breaker (the load during the incident and the time to recover), hedging (the
 * tail against the extra attempts); and, after the reference scenario, where to see the budget decide
 * between recovering and not.
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

  private static String budget(ScenarioResult.ArmResult off, ScenarioResult.ArmResult on) {
    SimulationReport without = off.first();
    SimulationReport with = on.first();
    double points = 100 * (without.availability() - with.availability());
    StringBuilder s = new StringBuilder("In one line: the budget ");
    s.append(Math.abs(points) < 0.05 ? "cost this client no availability"
        : points > 0 ? "cost this client " + Text.fixed(points, 1) + " points of availability"
        : "gained this client " + Text.fixed(-points, 1) + " points of availability");
    s.append(" (").append(Text.percent(without.availability())).append(" → ").append(Text.percent(with.availability()));
    for (int p = 0; p < without.phases().size(); p++) {
      Phase phase = without.phases().get(p);
      if (phase.incident()) {
        s.append("; ").append(phase.name()).append(": ").append(Text.percent(phase.availability())).append(" → ")
            .append(Text.percent(with.phases().get(p).availability()));
        break;
      }
    }
    long saved = without.attempts() - with.attempts();
    s.append(") and ").append(saved >= 0 ? "saved" : "added to").append(" the dependency ")
        .append(String.format(Locale.ROOT, "%,d", Math.abs(saved))).append(" attempts (")
        .append(Text.fixed(100.0 * Math.abs(saved) / Math.max(1, without.attempts()), 0)).append("% of ")
        .append(off.name()).append("'s), holding its worst second to ").append(Text.fixed(with.worstSecond(), 2))
        .append("× instead of ").append(Text.fixed(without.worstSecond(), 2)).append("×.");
    return s.toString();
  }

  private static String breaker(ScenarioResult.ArmResult off, ScenarioResult.ArmResult on) {
    SimulationReport without = off.first();
    SimulationReport with = on.first();
    StringBuilder s = new StringBuilder("The breaker (").append(on.name()).append(" against ").append(off.name())
        .append(")");
    int incident = -1;
    for (int p = 0; p < without.phases().size() && incident < 0; p++) {
      incident = without.phases().get(p).incident() ? p : -1;
    }
    if (incident >= 0) {
      Phase a = without.phases().get(incident);
      Phase b = with.phases().get(incident);
      s.append(" changed what the dependency saw ").append(a.name()).append(" from ")
          .append(Text.fixed(a.loadMultiplier(), 2)).append("× to ").append(Text.fixed(b.loadMultiplier(), 2))
          .append("× the offered calls, and the time to recover from ").append(recovery(without.timeToRecover()))
          .append(" to ").append(recovery(with.timeToRecover())).append('.');
    } else {
      s.append(" changed the load multiplier from ").append(Text.fixed(without.loadMultiplier(), 2)).append("× to ")
          .append(Text.fixed(with.loadMultiplier(), 2)).append("× and availability from ")
          .append(Text.percent(without.availability())).append(" to ").append(Text.percent(with.availability()))
          .append('.');
    }
    return s.toString();
  }

  private static String recovery(Optional<Duration> ttr) {
    return ttr.map(d -> d.toSeconds() + " s").orElse("never (in this run)");
  }

  private static String hedge(ScenarioResult.ArmResult off, ScenarioResult.ArmResult on) {
    SimulationReport without = off.first();
    SimulationReport with = on.first();
    Function<Duration, String> ms = d -> Text.ms(d.toNanos() / 1e6);
    double extra = 100.0 * (with.attempts() - without.attempts()) / Math.max(1, without.attempts());
    return "Hedging (" + on.name() + " against " + off.name() + "): call p99 " + ms.apply(without.latency().p99())
        + " → " + ms.apply(with.latency().p99()) + " ms, p99.9 " + ms.apply(without.latency().p999()) + " → "
        + ms.apply(with.latency().p999()) + " ms, for " + Text.fixed(extra, 1) + "% more attempts (worst second "
        + Text.fixed(without.worstSecond(), 2) + "× → " + Text.fixed(with.worstSecond(), 2) + "×).";
  }
}
