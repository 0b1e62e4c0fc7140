package dev.quell.cli.internal;

import dev.quell.sim.Phase;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.SimulationReport;
import dev.quell.sim.internal.Text;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The run in one or two sentences: what the budget cost this client and what it saved the
 * dependency, when a scenario compares an arm without a budget with one that has it; and, after the
 * reference scenario, where to see the budget decide between recovering and not.
 */
final class Story {
  private Story() {}

  static List<String> of(ScenarioResult result) {
    List<String> lines = new ArrayList<>();
    ScenarioResult.ArmResult off = null;
    ScenarioResult.ArmResult on = null;
    for (ScenarioResult.ArmResult a : result.arms()) {
      boolean budgeted = !"none".equals(a.first().entry().budget());
      if (!budgeted && off == null) {
        off = a;
      } else if (budgeted && on == null) {
        on = a;
      }
    }
    if (off == null || on == null) {
      return lines;
    }
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
    lines.add(s.toString());
    if (result.scenario().name().equals("reference")) {
      lines.add("With 16 pods, the same brownout leaves the unbudgeted fleet failing after it ends, and the"
          + " budget is the difference between recovering and not: ./quell simulate --scenario sixteen-pods");
    }
    return lines;
  }
}
