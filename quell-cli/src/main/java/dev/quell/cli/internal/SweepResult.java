package dev.quell.cli.internal;

import dev.quell.sim.Band;
import dev.quell.sim.NodeReport;
import dev.quell.sim.Phase;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.SimulationBands;
import dev.quell.sim.SimulationReport;
import dev.quell.sim.internal.Json;
import dev.quell.sim.internal.Text;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a sweep found: for each arm and value, this client's availability and the dependency's worst
 * second (medians over the seeds). An arm the swept key does not touch ran once and appears as one
 * point.
 */
final class SweepResult {

  /** One arm at one value. */
  record Cell(String value, double availability, double incidentAvailability, double worstSecond,
      double loadMultiplier, long retriesRefused, String diagnosis) {}

  private final String key;
  private final String scenarioName;
  private final int seeds;
  private final List<String> armNames;
  private final List<Boolean> changed;
  private final List<List<Cell>> cells = new ArrayList<>();

  SweepResult(String key, String scenarioName, int seeds, List<String> armNames, List<Boolean> changed) {
    this.key = key;
    this.scenarioName = scenarioName;
    this.seeds = seeds;
    this.armNames = List.copyOf(armNames);
    this.changed = List.copyOf(changed);
    for (int i = 0; i < armNames.size(); i++) {
      cells.add(new ArrayList<>());
    }
  }

  /** Adds what {@code result} found for each of its arms at {@code value}. */
  void add(String value, ScenarioResult result) {
    for (ScenarioResult.ArmResult arm : result.arms()) {
      int a = armNames.indexOf(arm.name());
      SimulationBands b = arm.bands();
      double incident = Double.NaN;
      List<Band> phases = b.phaseAvailability();
      List<Phase> model = b.first().phases();
      for (int p = 0; p < model.size(); p++) {
        if (model.get(p).incident()) {
          incident = phases.get(p).median();
          break;
        }
      }
      cells.get(a).add(new Cell(value, b.availability().median(), incident,
          b.band(SweepResult::dependencyWorstSecond).median(), b.loadMultiplier().median(),
          Math.round(b.band(r -> (double) r.retriesRefused()).median()), b.diagnosis().label()));
    }
  }

  /** The worst second at the busiest dependency: the entry's own in a single-dependency run. */
  static double dependencyWorstSecond(SimulationReport r) {
    double worst = Double.NaN;
    for (NodeReport n : r.nodes()) {
      if (n.kind() == NodeReport.Kind.DEPENDENCY && (Double.isNaN(worst) || n.worstSecond() > worst)) {
        worst = n.worstSecond();
      }
    }
    return Double.isNaN(worst) ? r.worstSecond() : worst;
  }

  String key() {
    return key;
  }

  String scenarioName() {
    return scenarioName;
  }

  int seeds() {
    return seeds;
  }

  List<String> armNames() {
    return armNames;
  }

  boolean changed(int arm) {
    return changed.get(arm);
  }

  List<Cell> cells(int arm) {
    return cells.get(arm);
  }

  /** The table: one row per value and arm the key changes, then one per arm it does not. */
  List<List<String>> rows() {
    List<List<String>> rows = new ArrayList<>();
    rows.add(List.of(key, "arm", "availability", "during incident", "dependency's worst second", "load multiplier",
        "retries refused", "diagnosis"));
    for (int a = 0; a < armNames.size(); a++) {
      for (Cell c : cells.get(a)) {
        rows.add(List.of(changed.get(a) ? c.value() : "(any)", armNames.get(a), Text.percent(c.availability()),
            Text.percent(c.incidentAvailability()), Text.fixed(c.worstSecond(), 2) + "×",
            Text.fixed(c.loadMultiplier(), 2) + "×", String.format(Locale.ROOT, "%,d", c.retriesRefused()),
            c.diagnosis()));
      }
    }
    return rows;
  }

  String toTable() {
    StringBuilder out = new StringBuilder();
    out.append("Sweep of ").append(key).append(" over ").append(scenarioName).append("; ")
        .append(seeds == 1 ? "seed 1" : "medians of " + seeds + " seeds").append("\n\n");
    out.append(Tables.render(rows()));
    for (int a = 0; a < armNames.size(); a++) {
      if (!changed.get(a)) {
        out.append('\n').append(armNames.get(a)).append(" does not use ").append(key)
            .append(": it ran once, and is shown as one point");
      }
    }
    out.append('\n');
    return out.toString();
  }

  String toJson() {
    Json json = new Json();
    json.beginObject().field("scenario", scenarioName).field("sweep", key).field("seeds", seeds);
    json.name("arms").beginArray();
    for (int a = 0; a < armNames.size(); a++) {
      json.beginObject().field("name", armNames.get(a)).field("changedBySweep", changed.get(a));
      json.name("points").beginArray();
      for (Cell c : cells.get(a)) {
        json.beginObject().field("value", c.value()).field("availability", c.availability())
            .field("incidentAvailability", c.incidentAvailability()).field("dependencyWorstSecond", c.worstSecond())
            .field("loadMultiplier", c.loadMultiplier()).field("retriesRefused", c.retriesRefused())
            .field("diagnosis", c.diagnosis()).endObject();
      }
      json.endArray().endObject();
    }
    json.endArray().endObject();
    return json.toString();
  }

  String toCsv() {
    StringBuilder out = new StringBuilder("value,arm,availability,incident_availability,dependency_worst_second,"
        + "load_multiplier,retries_refused,diagnosis\n");
    for (int a = 0; a < armNames.size(); a++) {
      for (Cell c : cells.get(a)) {
        out.append(Tables.csv(c.value())).append(',').append(Tables.csv(armNames.get(a))).append(',')
            .append(Text.fixed(c.availability(), 6)).append(',').append(Text.fixed(c.incidentAvailability(), 6))
            .append(',').append(Text.fixed(c.worstSecond(), 6)).append(',').append(Text.fixed(c.loadMultiplier(), 6))
            .append(',').append(c.retriesRefused()).append(',').append(Tables.csv(c.diagnosis())).append('\n');
      }
    }
    return out.toString();
  }
}
