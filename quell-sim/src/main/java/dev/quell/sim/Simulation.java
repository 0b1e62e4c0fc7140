package dev.quell.sim;

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
   * @param duration at least one second, at most a day
   */
  public Simulation lasting(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    if (duration.compareTo(Duration.ofSeconds(1)) < 0 || duration.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("simulation duration must be between 1 s and 1 day, was " + duration);
    }
    return new Simulation(policy, target, load, duration);
  }

  /** Runs the simulation with {@code seed} and reports what happened. */
  public SimulationReport run(long seed) {
    return new Engine(this, seed).run();
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
