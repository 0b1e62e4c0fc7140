package dev.quell.sim;

import dev.quell.Criticality;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.sim.internal.Json;
import dev.quell.sim.internal.Text;
import java.util.AbstractList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;

/**
 * What happened on one edge of a run: the calls one caller made to one target under one policy. A
 * simulation against a single dependency has one edge, from the load to the dependency; a topology
 * has one more for each downstream call of each service. Immutable.
 */
public final class EdgeReport {
  private final String from;
  private final String to;
  private final String policy;
  private final String budget;
  private final long calls;
  private final long attempts;
  private final long firstAttempts;
  private final long retries;
  private final long hedges;
  private final long hedgesWon;
  private final long retriesRefused;
  private final long refusedByBreaker;
  private final long limited;
  private final long unsent;
  private final String breaker;
  private final String limiters;
  private final String hedge;
  private final long succeeded;
  private final long unfinished;
  private final Map<StopReason, Long> stopReasons;
  private final Map<Criticality, Double> availabilityBy;
  private final Quantiles latency;
  private final List<Second> series;
  private final long[] offered;
  private final long[] first;
  private final long[] retried;
  private final long[] hedged;
  private final long[] refusedAt;
  private final long[] breakerAt;
  private final long[] limitedAt;
  private final long[] succeededAt;
  private final long[][] failedAt;
  private final double[] tokens;
  private final double[] p99;
  private final double[] occupancy;
  private final double[] queue;
  private final double worstSecond;
  private final int worstSecondAt;

  EdgeReport(Edge e, Quantiles latency) {
    this.from = e.from;
    this.to = e.to.name;
    this.policy = e.policy.toString();
    RetryBudget b = e.policy.budget();
    this.budget = b.isUnbounded() ? "none" : b.name() + " (capacity " + Text.number(b.capacity())
        + ")";
    this.calls = e.calls;
    this.attempts = e.attempts;
    this.firstAttempts = e.firstAttempts;
    this.retries = e.retries;
    this.hedges = e.hedges;
    this.hedgesWon = e.hedgesWon;
    this.retriesRefused = e.refused;
    this.refusedByBreaker = e.refusedByBreaker;
    this.limited = e.limited;
    this.unsent = e.unsent;
    this.breaker = e.policy.breakerConfig().map(Object::toString).orElse("none");
    List<String> names = new java.util.ArrayList<>();
    for (dev.quell.Limiter l : e.policy.limiters()) {
      names.add(describe(l));
    }
    this.limiters = names.isEmpty() ? "none" : String.join(", ", names);
    this.hedge = e.policy.hedge().map(Object::toString).orElse("none");
    this.succeeded = e.succeeded;
    this.unfinished = e.calls - e.ended;
    EnumMap<StopReason, Long> stops = new EnumMap<>(StopReason.class);
    for (StopReason r : StopReason.values()) {
      if (e.stops[r.ordinal()] > 0) {
        stops.put(r, e.stops[r.ordinal()]);
      }
    }
    this.stopReasons = Collections.unmodifiableMap(stops);
    EnumMap<Criticality, Double> byLevel = new EnumMap<>(Criticality.class);
    if (e.engine.labelled) {
      for (Criticality c : Criticality.values()) {
        long n = e.callsPerLevel[c.ordinal()];
        if (n > 0) {
          byLevel.put(c, (double) e.succeededPerLevel[c.ordinal()] / n);
        }
      }
    }
    this.availabilityBy = Collections.unmodifiableMap(byLevel);
    this.latency = latency;

    // the series stays in primitive arrays (about 175 bytes a second); series() makes Second records on demand
    this.offered = e.offeredPerSecond;
    this.first = e.firstPerSecond;
    this.retried = e.retriesPerSecond;
    this.hedged = e.hedgesPerSecond;
    this.refusedAt = e.refusedPerSecond;
    this.breakerAt = e.breakerPerSecond;
    this.limitedAt = e.limitedPerSecond;
    this.succeededAt = e.succeededPerSecond;
    this.failedAt = e.failedPerSecond;
    this.tokens = e.tokensPerSecond;
    this.p99 = e.p99PerSecond;
    int n = offered.length;
    this.occupancy = new double[n];
    this.queue = new double[n];
    double worst = Double.NaN;
    int worstAt = -1;
    for (int s = 0; s < n; s++) {
      occupancy[s] = e.to.occupancy.mean(s);
      queue[s] = e.to.queue.mean(s);
      if (offered[s] > 0) {
        double ratio = (double) (first[s] + retried[s] + hedged[s]) / offered[s];
        if (Double.isNaN(worst) || ratio > worst) {
          worst = ratio;
          worstAt = s;
        }
      }
    }
    this.series = new SeriesView();
    this.worstSecond = worst;
    this.worstSecondAt = worstAt;
  }

  /**
   * A limiter by its kind and size: "rate, burst 10", "concurrency 20", "adaptive, 20 at the end". Not
   * by its name, which a JVM-wide counter makes ("rate-7") and which would differ between runs.
   */
  static String describe(dev.quell.Limiter l) {
    switch (l.getClass().getSimpleName()) {
      case "RateLimiter":
        return "rate, burst " + l.limit();
      case "ConcurrencyLimiter":
        return "concurrency " + l.limit();
      case "AdaptiveLimiter":
        return "adaptive, " + l.limit() + " at the end";
      default:
        return "limiter";
    }
  }

  /** The series as records, made when read. */
  private final class SeriesView extends AbstractList<Second> implements RandomAccess {
    @Override
    public Second get(int s) {
      EnumMap<StopReason, Long> failures = new EnumMap<>(StopReason.class);
      for (StopReason r : StopReason.values()) {
        if (r != StopReason.SUCCEEDED) {
          failures.put(r, failedAt[r.ordinal()][s]);
        }
      }
      return new Second(s, offered[s], first[s], retried[s], hedged[s], refusedAt[s], breakerAt[s], limitedAt[s],
          succeededAt[s], Collections.unmodifiableMap(failures), tokens[s], occupancy[s], queue[s], p99[s]);
    }

    @Override
    public int size() {
      return offered.length;
    }
  }

  /** The caller: "load" for the simulated callers, else the calling service's name. */
  public String from() {
    return from;
  }

  /** The target's name. */
  public String to() {
    return to;
  }

  /** The policy on this edge, as {@code Resilience.toString()} describes it. */
  public String policy() {
    return policy;
  }

  /** The budget this edge's policy spent from: "none", or its name and capacity. */
  public String budget() {
    return budget;
  }

  /** Calls made. */
  public long calls() {
    return calls;
  }

  /** Attempts that reached the target: first attempts, retries and hedges. */
  public long attempts() {
    return attempts;
  }

  /** First attempts. */
  public long firstAttempts() {
    return firstAttempts;
  }

  /** Retries: every attempt after a call's first that is not a hedge. */
  public long retries() {
    return retries;
  }

  /** Hedges: attempts sent beside one still running. Each is an attempt the target received. */
  public long hedges() {
    return hedges;
  }

  /** Hedges whose answer came first and won their call. */
  public long hedgesWon() {
    return hedgesWon;
  }

  /**
   * Attempts an open (or half-open, or ramping) circuit breaker refused, first attempts and retries
   * alike; each ended its call with {@code DEPENDENCY_UNAVAILABLE} and never reached the target.
   */
  public long refusedByBreaker() {
    return refusedByBreaker;
  }

  /**
   * Attempts a rate or concurrency limiter refused, first attempts and retries alike; each ended its
   * call with {@code LIMITED} and never reached the target.
   */
  public long limited() {
    return limited;
  }

  /**
   * Calls a breaker or a limiter refused before their first attempt: calls that never reached the
   * target at all. (A refused retry's call had reached it already.)
   */
  public long refusedBeforeFirstAttempt() {
    return unsent;
  }

  /** The circuit breaker this edge's policy asked: "none", or its configuration ({@code CircuitBreaker.Config[…]}). */
  public String breaker() {
    return breaker;
  }

  /**
   * The limiters this edge's policy asked: "none", or each by its kind and size, comma-separated
   * ("rate, burst 10", "concurrency 20", "adaptive, 35 at the end").
   */
  public String limiters() {
    return limiters;
  }

  /** How this edge's policy hedged: "none", or the hedge as {@code Hedge.toString()} describes it. */
  public String hedge() {
    return hedge;
  }

  /** Retries the budget refused; each ended its call with {@code BUDGET_EXHAUSTED}. */
  public long retriesRefused() {
    return retriesRefused;
  }

  /** Calls that succeeded. */
  public long succeeded() {
    return succeeded;
  }

  /** Calls still running a minute after the end of the load, when the simulation stopped following them. */
  public long unfinished() {
    return unfinished;
  }

  /** Attempts ÷ calls: how many times the calls' own load reached the target. NaN without calls. */
  public double loadMultiplier() {
    return calls == 0 ? Double.NaN : (double) attempts / calls;
  }

  /** Succeeded ÷ calls. NaN without calls. */
  public double availability() {
    return calls == 0 ? Double.NaN : (double) succeeded / calls;
  }

  /** The highest per-second ratio of attempts sent to calls offered; NaN without calls. */
  public double worstSecond() {
    return worstSecond;
  }

  /** Which second {@link #worstSecond()} was, counted from the start of the run; -1 without calls. */
  public int worstSecondAt() {
    return worstSecondAt;
  }

  /** How the calls ended, for each stop reason that occurred, in the enum's order. */
  public Map<StopReason, Long> stopReasons() {
    return stopReasons;
  }

  /** Calls that ended with {@code reason}. */
  public long stopped(StopReason reason) {
    return stopReasons.getOrDefault(reason, 0L);
  }

  /** Availability by criticality, when the load has a criticality mix; empty otherwise. */
  public Map<Criticality, Double> availabilityBy() {
    return availabilityBy;
  }

  /** Quantiles of call latency. */
  public Quantiles latency() {
    return latency;
  }

  /** One entry per second of the run; occupancy and queue are the target's. */
  public List<Second> series() {
    return series;
  }

  void writeSummary(Json json) {
    json.field("from", from).field("to", to).field("policy", policy).field("budget", budget)
        .field("breaker", breaker).field("limiters", limiters).field("hedge", hedge)
        .field("calls", calls).field("attempts", attempts).field("firstAttempts", firstAttempts)
        .field("retries", retries).field("hedges", hedges).field("hedgesWon", hedgesWon)
        .field("retriesRefused", retriesRefused).field("refusedByBreaker", refusedByBreaker)
        .field("limited", limited).field("refusedBeforeFirstAttempt", unsent).field("succeeded", succeeded)
        .field("unfinished", unfinished).field("loadMultiplier", loadMultiplier())
        .field("worstSecond", worstSecond).field("worstSecondAt", worstSecondAt)
        .field("availability", availability());
    json.name("stopReasons").beginObject();
    for (Map.Entry<StopReason, Long> e : stopReasons.entrySet()) {
      json.field(e.getKey().name(), e.getValue());
    }
    json.endObject();
    if (!availabilityBy.isEmpty()) {
      json.name("availabilityByCriticality").beginObject();
      for (Map.Entry<Criticality, Double> e : availabilityBy.entrySet()) {
        json.field(e.getKey().name(), e.getValue());
      }
      json.endObject();
    }
    json.name("latencyMs").beginObject()
        .field("p50", latency.p50().toNanos() / 1e6)
        .field("p90", latency.p90().toNanos() / 1e6)
        .field("p99", latency.p99().toNanos() / 1e6)
        .field("p999", latency.p999().toNanos() / 1e6)
        .field("max", latency.max().toNanos() / 1e6)
        .endObject();
  }

  static void writeSeries(Json json, List<Second> series) {
    json.beginArray();
    for (Second s : series) {
      json.beginObject().field("second", s.second()).field("offered", s.offered())
          .field("firstAttempts", s.firstAttempts()).field("retries", s.retries()).field("hedges", s.hedges())
          .field("retriesRefused", s.retriesRefused()).field("refusedByBreaker", s.refusedByBreaker())
          .field("limited", s.limited()).field("succeeded", s.succeeded());
      json.name("failures").beginObject();
      for (Map.Entry<StopReason, Long> f : s.failures().entrySet()) {
        if (f.getValue() > 0) {
          json.field(f.getKey().name(), f.getValue());
        }
      }
      json.endObject();
      json.field("budgetTokens", s.budgetTokens()).field("occupancy", s.occupancy()).field("queue", s.queue())
          .field("latencyP99Ms", s.latencyP99Millis()).endObject();
    }
    json.endArray();
  }

  @Override
  public String toString() {
    return from + " → " + to + ": " + calls + " calls, " + attempts + " attempts, load multiplier "
        + Text.fixed(loadMultiplier(), 2) + ", availability "
        + Text.percent(availability());
  }
}
