package dev.quell.sim;

import dev.quell.Criticality;
import dev.quell.StopReason;
import dev.quell.sim.internal.Json;
import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What one run showed, as a dashboard would: the load the policy put on its target, the availability
 * its callers saw, and a diagnosis. Immutable; the same simulation and seed give an equal report
 * ({@link #toJson()} is identical).
 *
 * <p>The headline numbers are the entry edge's: the calls the load offered to the policy you gave
 * {@link Simulate#policy}. In a topology, {@link #edges()} and {@link #nodes()} show every layer.
 *
 * <ul>
 *   <li>{@link #loadMultiplier()}: attempts that reached the target ÷ calls.
 *   <li>{@link #worstSecond()}: the highest ratio, in any one second, of attempts sent to calls
 *       offered; {@link #worstSecondAt()} says which second.
 *   <li>{@link #availability()}: succeeded ÷ calls, overall and for each {@link #phases() phase}.
 *   <li>{@link #timeToRecover()}: from the end of the last incident until the calls succeed as they
 *       did before it and the load is back to what it was (judged over five-second windows).
 *   <li>{@link #diagnosis()}: healthy, retry storm, metastable failure or capacity problem, with an
 *       {@link #explanation()} in plain words.
 * </ul>
 */
public final class SimulationReport {
  /** Seconds over which recovery is judged. */
  static final int RECOVERY_WINDOW = 5;
  /** A per-second amplification at or above this counts toward a retry storm. */
  static final double STORM_RATIO = 1.5;
  /** Seconds at or above {@link #STORM_RATIO} that make a storm. */
  static final int STORM_SECONDS = 3;
  /** Availability before the incident for the run to count as healthy before it. */
  static final double HEALTHY_BEFORE = 0.95;
  /** Not recovered this long after the incident (and still not at the end of the run): metastable. */
  static final Duration STUCK_AFTER = Duration.ofSeconds(30);

  private final long seed;
  private final String description;
  private final Duration duration;
  private final EdgeReport entry;
  private final List<EdgeReport> edges;
  private final List<NodeReport> nodes;
  private final List<Phase> phases;
  private final @Nullable Duration timeToRecover;
  private final double demand;
  private final String demandOn;
  private final Diagnosis diagnosis;
  private final String explanation;
  private final long events;

  SimulationReport(Engine engine) {
    this.seed = engine.seed;
    this.description = engine.simulation.toString();
    this.duration = engine.simulation.duration();
    Edge entryEdge = engine.entry;
    this.phases = List.copyOf(engine.phases.phases(entryEdge.callsPerPhase, entryEdge.succeededPerPhase,
        entryEdge.attemptsPerPhase));
    List<NodeReport> nodeReports = new ArrayList<>();
    for (Node n : engine.nodes.values()) {
      nodeReports.add(n.report(entryEdge.calls, entryEdge.callsPerPhase, entryEdge.offeredPerSecond));
    }
    this.nodes = Collections.unmodifiableList(nodeReports);

    // demand: what the offered calls alone ask of each dependency, without a single retry
    double worstDemand = 0;
    String worstOn = "";
    double rate = engine.simulation.load().rate();
    for (Node n : engine.nodes.values()) {
      if (n instanceof DependencyNode) {
        Dependency d = ((DependencyNode) n).dependency();
        if (d.capacity().isPresent()) {
          double concurrent = rate * n.paths * engine.weight * d.meanLatency().toNanos() / 1e9;
          double share = concurrent / d.capacity().getAsInt();
          if (share > worstDemand) {
            worstDemand = share;
            worstOn = d.name();
          }
        }
      }
    }
    this.demand = worstDemand;
    this.demandOn = worstOn;

    // storm: seconds in which a target got 1.5× or more of what the offered calls alone would send it
    long[] offered = entryEdge.offeredPerSecond;
    int stormSeconds = 0;
    String stormOn = "";
    double peak = 0;
    int peakAt = -1;
    String peakOn = "";
    for (Node n : engine.nodes.values()) {
      int count = 0;
      for (int s = 0; s < offered.length; s++) {
        if (offered[s] == 0) {
          continue;
        }
        double amplification = (double) n.receivedPerSecond[s] / ((double) n.paths * offered[s]);
        if (amplification >= STORM_RATIO) {
          count++;
        }
        if (amplification > peak) {
          peak = amplification;
          peakAt = s;
          peakOn = n.name;
        }
      }
      if (count > stormSeconds) {
        stormSeconds = count;
        stormOn = n.name;
      }
    }

    // recovery after the last incident
    Phase before = engine.phases.hasIncidents() && !phases.get(0).incident() ? phases.get(0) : null;
    Duration ttr = null;
    long lastEnd = -1;
    if (!engine.phases.hasIncidents()) {
      ttr = Duration.ZERO;
    } else {
      List<long[]> windows = engine.phases.windows;
      lastEnd = windows.get(windows.size() - 1)[1];
      boolean healthyBefore = before == null || before.availability() >= HEALTHY_BEFORE;
      if (lastEnd < engine.end && healthyBefore) {
        double targetAvailability = before == null || Double.isNaN(before.availability()) ? 0.99
            : before.availability() - 0.01;
        double beforeAmplification = 1.0;
        if (before != null && before.calls() > 0) {
          beforeAmplification = 0;
          for (Node n : engine.nodes.values()) {
            beforeAmplification = Math.max(beforeAmplification,
                (double) n.receivedPerPhase[0] / ((double) n.paths * before.calls()));
          }
        }
        double targetAmplification = beforeAmplification + 0.05;
        long[] succeeded = entryEdge.succeededPerSecond;
        for (int s = (int) ((lastEnd + Engine.SECOND - 1) / Engine.SECOND); s < offered.length; s++) {
          int windowEnd = Math.min(offered.length, s + RECOVERY_WINDOW);
          long sumOffered = 0;
          long sumSucceeded = 0;
          for (int w = s; w < windowEnd; w++) {
            sumOffered += offered[w];
            sumSucceeded += succeeded[w];
          }
          if (sumOffered == 0) {
            continue;
          }
          double amplification = 0;
          for (Node n : engine.nodes.values()) {
            long received = 0;
            for (int w = s; w < windowEnd; w++) {
              received += n.receivedPerSecond[w];
            }
            amplification = Math.max(amplification, (double) received / ((double) n.paths * sumOffered));
          }
          if ((double) sumSucceeded / sumOffered >= targetAvailability && amplification <= targetAmplification) {
            ttr = Duration.ofNanos(Math.max(0, s * Engine.SECOND - lastEnd));
            break;
          }
        }
      }
    }
    this.timeToRecover = ttr;

    List<EdgeReport> edgeReports = new ArrayList<>();
    for (Edge e : engine.edges) {
      edgeReports.add(e.report());
    }
    this.edges = Collections.unmodifiableList(edgeReports);
    this.entry = edgeReports.get(0);
    this.events = engine.clock.eventsRun();

    // the diagnosis, most fundamental first; extra attempts are "retries", or "retries and hedges"
    boolean hedging = false;
    for (Edge e : engine.edges) {
      hedging |= e.policy.hedge().isPresent();
    }
    String extra = hedging ? "retries and hedges" : "retries";
    String worst = "worst second " + Text.fixed(peak, 2) + "× at " + clock(peakAt)
        + (engine.nodes.size() > 1 ? " on " + peakOn : "");
    if (demand >= 1) {
      diagnosis = Diagnosis.CAPACITY_PROBLEM;
      explanation = "the offered calls alone, before any retry, need " + Text.fixed(demand * 100, 0) + "% of "
          + demandOn + "'s capacity (" + Text.number(rate) + " calls/s × " + engine.weight
          + (engine.weight == 1 ? " pod" : " pods") + " × its mean latency): no retry policy fixes that;"
          + " add capacity or shed load";
    } else if (before != null && before.availability() >= HEALTHY_BEFORE && ttr == null && lastEnd >= 0
        && engine.end - lastEnd >= STUCK_AFTER.toNanos()) {
      diagnosis = Diagnosis.METASTABLE_FAILURE;
      Phase after = phases.get(phases.size() - 1);
      explanation = "healthy before the incident (" + Text.percent(before.availability()) + " of calls succeeded) but"
          + " still failing when the run ended, " + Text.clock(Duration.ofNanos(engine.end - lastEnd))
          + " after the incident was over (" + Text.percent(after.availability()) + " succeeded after it): the work"
          + " and the " + extra + " the incident piled up keep the target overloaded without it; " + worst;
    } else if (stormSeconds >= STORM_SECONDS) {
      diagnosis = Diagnosis.RETRY_STORM;
      explanation = extra + " multiplied the load: in " + stormSeconds + " seconds " + stormOn + " got "
          + Text.number(STORM_RATIO) + "× or more of the attempts the offered calls alone would send it; " + worst
          + recovery(engine, ttr, lastEnd);
    } else {
      diagnosis = Diagnosis.HEALTHY;
      explanation = extra + " stayed bounded (" + worst + ")" + recovery(engine, ttr, lastEnd);
    }
  }

  private static String recovery(Engine engine, @Nullable Duration ttr, long lastEnd) {
    if (!engine.phases.hasIncidents()) {
      return "";
    }
    if (ttr != null) {
      return "; the calls recovered " + ttr.toSeconds() + " s after the incident";
    }
    if (lastEnd >= engine.end) {
      return "; the run ended during the incident";
    }
    return "; not recovered when the run ended, " + Text.clock(Duration.ofNanos(engine.end - lastEnd))
        + " after the incident";
  }

  private static String clock(int second) {
    return second < 0 ? "-" : Text.clock(Duration.ofSeconds(second));
  }

  /** The seed of this run. */
  public long seed() {
    return seed;
  }

  /** The simulation that ran, in words. */
  public String description() {
    return description;
  }

  /** How long calls were offered. */
  public Duration duration() {
    return duration;
  }

  /** The entry edge: the load's calls to the target under the policy you gave. */
  public EdgeReport entry() {
    return entry;
  }

  /** Every edge: the entry first, then each service's downstream calls. */
  public List<EdgeReport> edges() {
    return edges;
  }

  /** Every target: the entry's target first, then the rest, depth first. */
  public List<NodeReport> nodes() {
    return nodes;
  }

  /**
   * The target called {@code name}.
   *
   * @throws IllegalArgumentException when there is none
   */
  public NodeReport node(String name) {
    for (NodeReport n : nodes) {
      if (n.name().equals(name)) {
        return n;
      }
    }
    throw new IllegalArgumentException("no target named '" + name + "' in this run");
  }

  /** Calls offered. */
  public long calls() {
    return entry.calls();
  }

  /** Attempts that reached the target. */
  public long attempts() {
    return entry.attempts();
  }

  /** Retries started. */
  public long retries() {
    return entry.retries();
  }

  /** Retries the budget refused. */
  public long retriesRefused() {
    return entry.retriesRefused();
  }

  /** Hedges started: attempts sent beside one still running. */
  public long hedges() {
    return entry.hedges();
  }

  /** Attempts the circuit breaker refused (each ended its call with {@code DEPENDENCY_UNAVAILABLE}). */
  public long refusedByBreaker() {
    return entry.refusedByBreaker();
  }

  /** Attempts a limiter refused (each ended its call with {@code LIMITED}). */
  public long limited() {
    return entry.limited();
  }

  /** Attempts that reached the target ÷ calls. */
  public double loadMultiplier() {
    return entry.loadMultiplier();
  }

  /** The highest per-second ratio of attempts sent to calls offered. */
  public double worstSecond() {
    return entry.worstSecond();
  }

  /** Which second {@link #worstSecond()} was, counted from the start of the run. */
  public int worstSecondAt() {
    return entry.worstSecondAt();
  }

  /** Succeeded ÷ calls over the whole run. */
  public double availability() {
    return entry.availability();
  }

  /** The phases of the run: before, during and after each incident (or the whole run when there is none). */
  public List<Phase> phases() {
    return phases;
  }

  /** Availability by criticality, when the load has a criticality mix. */
  public Map<Criticality, Double> availabilityBy() {
    return entry.availabilityBy();
  }

  /** Quantiles of call latency as the callers saw it. */
  public Quantiles latency() {
    return entry.latency();
  }

  /**
   * How long after the last incident ended the calls succeeded as they had before it (within one
   * percentage point) with the load back to within 5% of what it was, judged over five-second windows
   * and to the second. Zero for a run without incidents. Empty when the run ended first, and when the
   * calls were not healthy before the incident (under 95% succeeded), so there was nothing to
   * recover to.
   */
  public Optional<Duration> timeToRecover() {
    return Optional.ofNullable(timeToRecover);
  }

  /** How the calls ended, for each stop reason that occurred. */
  public Map<StopReason, Long> stopReasons() {
    return entry.stopReasons();
  }

  /** One entry per second of the run. */
  public List<Second> series() {
    return entry.series();
  }

  /**
   * What the offered calls alone, without any retry, ask of the busiest dependency: arrival rate ×
   * paths × (peers + 1) × mean healthy latency ÷ capacity. At 1 or more the dependency cannot keep
   * up even if nothing is ever retried. 0 when no dependency has a capacity.
   */
  public double demand() {
    return demand;
  }

  /** What kind of run it was. */
  public Diagnosis diagnosis() {
    return diagnosis;
  }

  /** Why the diagnosis, with the numbers behind it. */
  public String explanation() {
    return explanation;
  }

  /** How many simulation events ran (arrivals, completions, timers); a measure of the work done. */
  public long events() {
    return events;
  }

  /** This report as one JSON object, per-second series included. */
  public String toJson() {
    Json json = new Json();
    write(json, true);
    return json.toString();
  }

  void write(Json json, boolean withSeries) {
    json.beginObject();
    writeMembers(json, withSeries);
    json.endObject();
  }

  /** Writes the report's members into the object being written. */
  void writeMembers(Json json, boolean withSeries) {
    json.field("seed", seed).field("description", description)
        .field("durationSeconds", duration.toNanos() / 1e9)
        .field("loadMultiplier", loadMultiplier()).field("worstSecond", worstSecond())
        .field("worstSecondAt", worstSecondAt()).field("availability", availability());
    json.name("phases").beginArray();
    for (Phase p : phases) {
      json.beginObject().field("name", p.name()).field("from", p.from().toNanos() / 1e9)
          .field("to", p.to().toNanos() / 1e9).field("incident", p.incident()).field("calls", p.calls())
          .field("succeeded", p.succeeded()).field("attempts", p.attempts())
          .field("availability", p.availability()).field("loadMultiplier", p.loadMultiplier()).endObject();
    }
    json.endArray();
    json.name("timeToRecoverSeconds");
    if (timeToRecover == null) {
      json.nullValue();
    } else {
      json.value(timeToRecover.toNanos() / 1e9);
    }
    json.field("demand", demand).field("diagnosis", diagnosis.name()).field("explanation", explanation)
        .field("calls", calls()).field("attempts", attempts()).field("retries", retries())
        .field("hedges", hedges()).field("hedgesWon", entry.hedgesWon()).field("retriesRefused", retriesRefused())
        .field("refusedByBreaker", refusedByBreaker()).field("limited", limited())
        .field("refusedBeforeFirstAttempt", entry.refusedBeforeFirstAttempt()).field("events", events);
    json.name("stopReasons").beginObject();
    for (Map.Entry<StopReason, Long> e : stopReasons().entrySet()) {
      json.field(e.getKey().name(), e.getValue());
    }
    json.endObject();
    Quantiles q = latency();
    json.name("latencyMs").beginObject().field("p50", q.p50().toNanos() / 1e6).field("p90", q.p90().toNanos() / 1e6)
        .field("p99", q.p99().toNanos() / 1e6).field("p999", q.p999().toNanos() / 1e6)
        .field("max", q.max().toNanos() / 1e6).endObject();
    if (!availabilityBy().isEmpty()) {
      json.name("availabilityByCriticality").beginObject();
      for (Map.Entry<Criticality, Double> e : availabilityBy().entrySet()) {
        json.field(e.getKey().name(), e.getValue());
      }
      json.endObject();
    }
    json.name("entry").beginObject();
    entry.writeSummary(json);
    json.endObject();
    json.name("edges").beginArray();
    for (EdgeReport e : edges) {
      json.beginObject();
      e.writeSummary(json);
      json.endObject();
    }
    json.endArray();
    json.name("nodes").beginArray();
    for (NodeReport n : nodes) {
      n.write(json);
    }
    json.endArray();
    if (withSeries) {
      json.name("series");
      EdgeReport.writeSeries(json, series());
    }
  }

  @Override
  public String toString() {
    return "SimulationReport[seed " + seed + ", load multiplier " + Text.fixed(loadMultiplier(), 3) + ", worst second "
        + Text.fixed(worstSecond(), 3) + " at " + clock(worstSecondAt()) + ", availability "
        + Text.percent(availability()) + ", " + diagnosis.label() + "]";
  }
}
