package dev.quell.sim;

import dev.quell.sim.internal.Json;
import dev.quell.sim.internal.Text;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;

/**
 * What reached one target of a run (a dependency, or a service in a topology), measured against the
 * calls offered at the entry: how the per-call limits of the layers above compounded. Immutable.
 */
public final class NodeReport {

  /** What sort of target. */
  public enum Kind {
    /** A modelled {@link Dependency}. */
    DEPENDENCY,
    /** A {@link Service}. */
    SERVICE
  }

  private final String name;
  private final Kind kind;
  private final long attempts;
  private final long paths;
  private final long entryCalls;
  private final List<Double> perCallByPhase;
  private final long[] perSecond;
  private final double worstSecond;
  private final int worstSecondAt;
  private final OptionalInt capacity;
  private final double peakOccupancy;
  private final double meanOccupancy;
  private final double peakQueue;
  private final long refused;
  private final long failedAttempts;
  private final long answered;
  private final long failedRequests;

  NodeReport(String name, Kind kind, long attempts, long paths, long entryCalls, long[] attemptsPerPhase,
      long[] entryCallsPerPhase, long[] entryOfferedPerSecond, long[] attemptsPerSecond, OptionalInt capacity, double peakOccupancy,
      double meanOccupancy, double peakQueue,
      long refused, long failedAttempts, long answered, long failedRequests) {
    this.name = name;
    this.kind = kind;
    this.attempts = attempts;
    this.paths = paths;
    this.entryCalls = entryCalls;
    List<Double> byPhase = new ArrayList<>(attemptsPerPhase.length);
    for (int i = 0; i < attemptsPerPhase.length; i++) {
      byPhase.add(entryCallsPerPhase[i] == 0 ? Double.NaN : (double) attemptsPerPhase[i] / entryCallsPerPhase[i]);
    }
    this.perCallByPhase = Collections.unmodifiableList(byPhase);
    this.perSecond = attemptsPerSecond.clone();
    double worst = Double.NaN;
    int worstAt = -1;
    for (int s = 0; s < perSecond.length && s < entryOfferedPerSecond.length; s++) {
      if (entryOfferedPerSecond[s] > 0 && paths > 0) {
        double ratio = (double) perSecond[s] / ((double) paths * entryOfferedPerSecond[s]);
        if (Double.isNaN(worst) || ratio > worst) {
          worst = ratio;
          worstAt = s;
        }
      }
    }
    this.worstSecond = worst;
    this.worstSecondAt = worstAt;
    this.capacity = capacity;
    this.peakOccupancy = peakOccupancy;
    this.meanOccupancy = meanOccupancy;
    this.peakQueue = peakQueue;
    this.refused = refused;
    this.failedAttempts = failedAttempts;
    this.answered = answered;
    this.failedRequests = failedRequests;
  }

  /** The target's name. */
  public String name() {
    return name;
  }

  /** Dependency or service. */
  public Kind kind() {
    return kind;
  }

  /** Attempts this pod sent to it (its peers sent as many each). */
  public long attempts() {
    return attempts;
  }

  /** Attempts that reach it per entry call when nothing is retried: the number of call paths to it. */
  public long paths() {
    return paths;
  }

  /** Attempts that reached it per call offered at the entry. Without retries this is {@link #paths()}. */
  public double attemptsPerCall() {
    return entryCalls == 0 ? Double.NaN : (double) attempts / entryCalls;
  }

  /**
   * {@link #attemptsPerCall()} for each phase of the run (same order as
   * {@link SimulationReport#phases()}): attempts by the time they arrived, calls by the time they were
   * offered.
   */
  public List<Double> attemptsPerCallByPhase() {
    return perCallByPhase;
  }

  /** Attempts that arrived in each second of the run (a copy). */
  public long[] attemptsPerSecond() {
    return perSecond.clone();
  }

  /**
   * The highest ratio, in any one second, of attempts that reached it to the attempts the calls
   * offered that second would send it without a single retry ({@link #paths()} per call): how far
   * retries above it multiplied its load at worst. NaN without calls.
   */
  public double worstSecond() {
    return worstSecond;
  }

  /** Which second {@link #worstSecond()} was, from the start of the run; -1 without calls. */
  public int worstSecondAt() {
    return worstSecondAt;
  }

  /** Its capacity, for a dependency that has one. */
  public OptionalInt capacity() {
    return capacity;
  }

  /** The most attempts in service at once, counting peers (for a service: requests in progress). */
  public double peakOccupancy() {
    return peakOccupancy;
  }

  /** The mean number of attempts in service over the run, counting peers. */
  public double meanOccupancy() {
    return meanOccupancy;
  }

  /** The most attempts waiting at once, counting peers. */
  public double peakQueue() {
    return peakQueue;
  }

  /** Attempts a dependency refused at once: down, or its queue full. */
  public long refused() {
    return refused;
  }

  /** Attempts a dependency served and failed (error rate, failing incident). */
  public long failedAttempts() {
    return failedAttempts;
  }

  /** Requests a service answered successfully. */
  public long answered() {
    return answered;
  }

  /** Requests a service failed because a downstream call failed. */
  public long failedRequests() {
    return failedRequests;
  }

  void write(Json json) {
    json.beginObject().field("name", name).field("kind", kind.name().toLowerCase(java.util.Locale.ROOT))
        .field("attempts", attempts).field("paths", paths).field("attemptsPerCall", attemptsPerCall())
        .field("worstSecond", worstSecond).field("worstSecondAt", worstSecondAt);
    json.name("attemptsPerCallByPhase").beginArray();
    for (double d : perCallByPhase) {
      json.value(d);
    }
    json.endArray();
    if (capacity.isPresent()) {
      json.field("capacity", capacity.getAsInt());
    }
    json.field("peakOccupancy", peakOccupancy).field("meanOccupancy", meanOccupancy).field("peakQueue", peakQueue);
    if (kind == Kind.DEPENDENCY) {
      json.field("refused", refused).field("failedAttempts", failedAttempts);
    } else {
      json.field("answered", answered).field("failedRequests", failedRequests);
    }
    json.endObject();
  }

  @Override
  public String toString() {
    return name + ": " + attempts + " attempts, " + Text.fixed(attemptsPerCall(), 2)
        + " per call";
  }
}
