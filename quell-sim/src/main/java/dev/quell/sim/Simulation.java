package dev.quell.sim;

import dev.quell.Resilience;
import dev.quell.TimeSource;
import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A complete simulation, ready to run: a policy, a target, a load and a duration. Made by
 * {@link Simulate#policy}; immutable, so one simulation can be run with many seeds, or changed with
 * {@link #under} and {@link #lasting} into another.
 *
 * <p>Runs are single-threaded and deterministic: the same simulation and seed give an identical
 * report. A run occupies the calling thread, and separate runs may go on in parallel threads.
 */
public final class Simulation {
  static final Load DEFAULT_LOAD = Load.perSecond(100);
  static final Duration DEFAULT_DURATION = Duration.ofMinutes(1);
  /** The longest run: a day of simulated time. */
  public static final Duration MAX_DURATION = Duration.ofDays(1);

  private final PolicySource policy;
  private final Target target;
  private final Load load;
  private final Duration duration;

  Simulation(PolicySource policy, Target target, Load load, Duration duration) {
    this.policy = policy;
    this.target = target;
    this.load = load;
    this.duration = duration;
  }

  /** A copy offering {@code load} (100 calls per second by default). */
  public Simulation under(Load load) {
    return new Simulation(policy, target, Objects.requireNonNull(load, "load"), duration);
  }

  /**
   * A copy that offers calls for {@code duration} of simulated time (one minute by default). Calls
   * that are still running at the end are followed until they finish, for at most another minute.
   *
   * @param duration at least one second, at most a day ({@link #MAX_DURATION})
   */
  public Simulation lasting(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    if (duration.compareTo(Duration.ofSeconds(1)) < 0 || duration.compareTo(MAX_DURATION) > 0) {
      throw new IllegalArgumentException("simulation duration must be between 1 s and 1 day (24h), was "
          + Text.duration(duration));
    }
    return new Simulation(policy, target, load, duration);
  }

  /**
   * Runs the simulation with {@code seed} and reports what happened.
   *
   * @throws IllegalArgumentException when an incident starts at or after the end of the run, or two
   *     different targets share a name
   */
  public SimulationReport run(long seed) {
    return new Engine(this, seed, null).run();
  }

  /**
   * Runs with {@code seed} and tells {@code log} of every call the load made as it ends: the run's
   * own access log, for tools that read telemetry (the same seed gives the same calls).
   */
  public SimulationReport run(long seed, CallLog log) {
    return new Engine(this, seed, null, java.util.Objects.requireNonNull(log, "log")).run();
  }

  /** Runs with {@code seed}, counting each simulated second on {@code progress}. */
  SimulationReport run(long seed, Progress progress) {
    return new Engine(this, seed, progress).run();
  }

  /** Runs once per seed, in order, and gives the bands (median, min, max) across the runs. */
  public SimulationBands runSeeds(long... seeds) {
    if (seeds.length == 0) {
      throw new IllegalArgumentException("runSeeds needs at least one seed");
    }
    List<SimulationReport> reports = new ArrayList<>(seeds.length);
    for (long seed : seeds) {
      reports.add(run(seed));
    }
    return new SimulationBands(reports);
  }

  /**
   * How big one run of this simulation will be, worked out from the model without running it. The
   * attempts are an upper bound: every call using every attempt its policies allow, on every layer.
   */
  public Estimate estimate() {
    long seconds = Math.max(1, (duration.toNanos() + Engine.SECOND - 1) / Engine.SECOND);
    double calls = load.rate() * duration.toNanos() / 1e9;
    Resilience entryPolicy = policy.build(TimeSource.system());
    double[] attempts = {0};
    int[] edges = {1};
    int[] nodes = {0};
    // the longest a call can stay in flight: what bounds the calls (and queued attempts) held at once
    long longest = longest(entryPolicy, duration.toNanos());
    attempts[0] = calls * entryPolicy.attempts();
    walk(target, calls * entryPolicy.attempts(), attempts, edges, nodes);
    long attemptBound = attempts[0] >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(attempts[0]);
    long callBound = (long) Math.ceil(calls);
    // kept in the report: per-second counters of each edge and node (the p99 of each second too), and two
    // latency histograms per edge (the run's, and the one second's being counted)
    long retained = seconds * (edges[0] * 183L + nodes[0] * 40L) + edges[0] * 64_000L + 20_000L;
    // while it runs: the calls in flight, about a kilobyte each with their attempts, timers and futures
    double inFlight = load.rate() * Math.min(longest, duration.toNanos() + Engine.DRAIN_LIMIT) / 1e9;
    long working = Estimate.saturatedMultiply((long) Math.ceil(inFlight) + 1, 1_000.0 * Math.max(1, edges[0]))
        + retained;
    return Estimate.of(1, seconds, callBound, attemptBound, retained, working);
  }

  private static long longest(Resilience p, long runNanos) {
    if (p.deadline().isPresent()) {
      return p.deadline().get().toNanos();
    }
    if (p.attemptTimeout().isPresent()) {
      return Estimate.saturatedMultiply(p.attemptTimeout().get().toNanos(), 2.0 * p.attempts());
    }
    return runNanos;
  }

  /** Adds the attempts each service's downstream calls can make, given the requests reaching it. */
  private static void walk(Target t, double requests, double[] attempts, int[] edges, int[] nodes) {
    nodes[0]++;
    if (t instanceof Service) {
      for (Service.Downstream d : ((Service) t).downstream()) {
        int each = d.policy().build(TimeSource.system()).attempts();
        edges[0]++;
        attempts[0] += requests * each;
        walk(d.target(), requests * each, attempts, edges, nodes);
      }
    }
  }

  /** Where the calls go. */
  public Target target() {
    return target;
  }

  /** The offered load. */
  public Load load() {
    return load;
  }

  /** How long calls are offered. */
  public Duration duration() {
    return duration;
  }

  PolicySource policy() {
    return policy;
  }

  @Override
  public String toString() {
    return Text.clock(duration) + " at " + load + " against " + target + ", under " + policy;
  }
}
