package dev.quell.sim;

import dev.quell.sim.internal.Json;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The same simulation run with several seeds: each number as a {@link Band} (median, min, max), so
 * you can tell a property of the policy from the luck of one run. Immutable.
 */
public final class SimulationBands {
  private final List<SimulationReport> reports;

  SimulationBands(List<SimulationReport> reports) {
    this.reports = List.copyOf(reports);
  }

  /** The runs, in the order of their seeds. */
  public List<SimulationReport> reports() {
    return reports;
  }

  /** The first run (the only one when there was one seed). */
  public SimulationReport first() {
    return reports.get(0);
  }

  /** The band of any number a report gives. */
  public Band band(ToDoubleFunction<SimulationReport> metric) {
    double[] values = new double[reports.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = metric.applyAsDouble(reports.get(i));
    }
    return Band.of(values);
  }

  /** Attempts ÷ calls. */
  public Band loadMultiplier() {
    return band(SimulationReport::loadMultiplier);
  }

  /** The worst second's ratio of attempts to calls. */
  public Band worstSecond() {
    return band(SimulationReport::worstSecond);
  }

  /** Availability over the whole run. */
  public Band availability() {
    return band(SimulationReport::availability);
  }

  /** Availability in each phase, in the order of {@link SimulationReport#phases()}. */
  public List<Band> phaseAvailability() {
    List<Band> bands = new ArrayList<>();
    for (int i = 0; i < first().phases().size(); i++) {
      int index = i;
      bands.add(band(r -> r.phases().get(index).availability()));
    }
    return Collections.unmodifiableList(bands);
  }

  /** Seconds to recover; a run that did not recover counts as infinitely long. */
  public Band timeToRecoverSeconds() {
    return band(r -> r.timeToRecover().map(d -> d.toNanos() / 1e9).orElse(Double.POSITIVE_INFINITY));
  }

  /** Median call latency, in milliseconds. */
  public Band latencyP50Millis() {
    return band(r -> r.latency().p50().toNanos() / 1e6);
  }

  /** 99th percentile of call latency, in milliseconds. */
  public Band latencyP99Millis() {
    return band(r -> r.latency().p99().toNanos() / 1e6);
  }

  /** 99.9th percentile of call latency, in milliseconds. */
  public Band latencyP999Millis() {
    return band(r -> r.latency().p999().toNanos() / 1e6);
  }

  /** How many runs got each diagnosis. */
  public Map<Diagnosis, Long> diagnoses() {
    EnumMap<Diagnosis, Long> counts = new EnumMap<>(Diagnosis.class);
    for (SimulationReport r : reports) {
      counts.merge(r.diagnosis(), 1L, Long::sum);
    }
    return Collections.unmodifiableMap(counts);
  }

  /** The most common diagnosis; on a tie, the more serious one. */
  public Diagnosis diagnosis() {
    Diagnosis best = Diagnosis.HEALTHY;
    long most = -1;
    for (Map.Entry<Diagnosis, Long> e : diagnoses().entrySet()) {
      if (e.getValue() >= most) { // enum order runs from least to most serious
        best = e.getKey();
        most = e.getValue();
      }
    }
    return best;
  }

  void writeBands(Json json) {
    json.name("bands").beginObject();
    write(json, "loadMultiplier", loadMultiplier());
    write(json, "worstSecond", worstSecond());
    write(json, "availability", availability());
    write(json, "timeToRecoverSeconds", timeToRecoverSeconds());
    write(json, "latencyP50Ms", latencyP50Millis());
    write(json, "latencyP99Ms", latencyP99Millis());
    write(json, "latencyP999Ms", latencyP999Millis());
    json.name("phaseAvailability").beginArray();
    for (Band b : phaseAvailability()) {
      writeBand(json, b);
    }
    json.endArray();
    json.endObject();
    json.name("diagnoses").beginObject();
    for (Map.Entry<Diagnosis, Long> e : diagnoses().entrySet()) {
      json.field(e.getKey().name(), e.getValue());
    }
    json.endObject();
  }

  private static void write(Json json, String name, Band band) {
    json.name(name);
    writeBand(json, band);
  }

  private static void writeBand(Json json, Band band) {
    json.beginObject().field("median", band.median()).field("min", band.min()).field("max", band.max()).endObject();
  }
}
