package dev.quell.test;

import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.TimeSource;
import dev.quell.sim.Load;
import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.Simulate;
import dev.quell.sim.Simulation;
import dev.quell.sim.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A policy regression test: runs your real policy against a model of its dependency on the
 * simulator's virtual clock, and asserts on what a dashboard would show. Deterministic for a seed
 * and fast (five simulated minutes at 500 calls a second take about a second), so it belongs in the
 * build:
 *
 * <pre>{@code
 * @Test
 * void checkoutDoesNotAmplifyABrownout() {
 *   PolicyCheck.of(Policies.CHECKOUT)
 *       .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
 *           .capacity(400)
 *           .incident(Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3))))
 *       .under(Load.perSecond(500))
 *       .lasting(Duration.ofMinutes(5))
 *       .run()
 *       .hasWorstSecondAtMost(1.2)
 *       .hasAvailabilityAtLeast(0.9)
 *       .recoversWithin(Duration.ofSeconds(10));
 * }
 * }</pre>
 *
 * <p>The model may also come from a scenario file, the same YAML {@code quell simulate --scenario}
 * reads ({@link #against(Path)}; needs {@code dev.quell:quell-cli} in test scope). A check that
 * fails throws an {@link AssertionError} that names the figure, the limit and the miss, prints the
 * run in one line, and says where the run's chart was written (with {@code quell-cli} on the class
 * path; {@code target/quell-checks} unless {@link #chartsIn(Path)} says otherwise).
 *
 * <p>Immutable: each method returns a copy, so a base check can be shared by several tests.
 */
public final class PolicyCheck {
  /** Where charts of failed checks go unless {@link #chartsIn(Path)} says otherwise. */
  public static final Path DEFAULT_CHART_FOLDER = Path.of("target", "quell-checks");

  private final Function<Target, Simulation> policy;
  private final String name;
  private final @Nullable Target target;
  private final @Nullable Simulation model;
  private final @Nullable Load load;
  private final @Nullable Duration duration;
  private final long[] seeds;
  private final Path charts;

  private PolicyCheck(Function<Target, Simulation> policy, String name, @Nullable Target target,
      @Nullable Simulation model, @Nullable Load load, @Nullable Duration duration, long[] seeds, Path charts) {
    this.policy = policy;
    this.name = name;
    this.target = target;
    this.model = model;
    this.load = load;
    this.duration = duration;
    this.seeds = seeds;
    this.charts = charts;
  }

  /**
   * Checks {@code policy}. Each run takes a fresh copy on the simulation's clock, as
   * {@link Simulate#policy(Resilience)} does: an automatic budget starts full, a breaker given as
   * configuration starts closed.
   *
   * @throws IllegalArgumentException when the policy holds a live budget, breaker or limiter of its
   *     own (see {@link Simulate#policy(Resilience)}); use {@link #of(String, Function)} for those
   */
  public static PolicyCheck of(Resilience policy) {
    Objects.requireNonNull(policy, "policy");
    Simulate simulate = Simulate.policy(policy);
    return new PolicyCheck(simulate::against, policy.name(), null, null, null, null, new long[] {1},
        DEFAULT_CHART_FOLDER);
  }

  /**
   * Checks the policy {@code factory} builds on the simulation's clock, once per run: for a budget,
   * breaker or limiter of your own ({@code clock -> policy.withBudget(RetryBudget.of(0.2, 5, clock))}).
   */
  public static PolicyCheck of(String name, Function<? super TimeSource, Resilience> factory) {
    Objects.requireNonNull(name, "name");
    Simulate simulate = Simulate.policy(factory);
    return new PolicyCheck(simulate::against, name, null, null, null, null, new long[] {1}, DEFAULT_CHART_FOLDER);
  }

  /** Sends the calls to {@code target}: a {@code Dependency} you describe, or a {@code Service} calling others. */
  public PolicyCheck against(Target target) {
    return new PolicyCheck(policy, name, Objects.requireNonNull(target, "target"), null, load, duration, seeds,
        charts);
  }

  /**
   * Takes the model from a scenario file (the YAML {@code quell simulate --scenario FILE} reads): its
   * dependency or services, its load and its duration. The file's arms are not run; your policy
   * takes the place of the entry policy (in a topology, the inner edges keep the first arm's
   * policies). {@link #under} and {@link #lasting} still override the file. Needs
   * {@code dev.quell:quell-cli} on the test class path.
   *
   * @throws IllegalArgumentException with the one-line message {@code quell simulate} would print,
   *     when the file is not a valid scenario
   * @throws IllegalStateException when {@code quell-cli} is not on the class path
   */
  public PolicyCheck against(Path scenarioFile) {
    Objects.requireNonNull(scenarioFile, "scenarioFile");
    Scenario scenario = CommandSupport.read(scenarioFile);
    Simulation first = scenario.arms().get(0).simulation();
    return new PolicyCheck(policy, name, first.target(), first, load, duration, seeds, charts);
  }

  /** Offers {@code load} (by default the scenario file's, else 100 calls a second). */
  public PolicyCheck under(Load load) {
    return new PolicyCheck(policy, name, target, model, Objects.requireNonNull(load, "load"), duration, seeds,
        charts);
  }

  /** Runs for {@code duration} of simulated time (by default the scenario file's, else a minute). */
  public PolicyCheck lasting(Duration duration) {
    return new PolicyCheck(policy, name, target, model, load, Objects.requireNonNull(duration, "duration"), seeds,
        charts);
  }

  /**
   * Runs once per seed (by default seed 1 alone); every assertion must then hold for every seed, and
   * a failure names the seed that missed.
   *
   * @throws ResilienceConfigurationException when no seed is given or one is given twice
   */
  public PolicyCheck seeds(long... seeds) {
    if (seeds.length == 0) {
      throw new ResilienceConfigurationException("seeds was empty: give at least one seed");
    }
    for (int i = 0; i < seeds.length; i++) {
      for (int j = 0; j < i; j++) {
        if (seeds[i] == seeds[j]) {
          throw new ResilienceConfigurationException("seeds named " + seeds[i] + " twice: each seed runs once");
        }
      }
    }
    return new PolicyCheck(policy, name, target, model, load, duration, seeds.clone(), charts);
  }

  /** Writes the charts of failed checks into {@code folder} (created when missing). */
  public PolicyCheck chartsIn(Path folder) {
    return new PolicyCheck(policy, name, target, model, load, duration, seeds, Objects.requireNonNull(folder,
        "folder"));
  }

  /** Names the check in failure messages and chart files (by default, the policy's name). */
  public PolicyCheck named(String name) {
    return new PolicyCheck(policy, Objects.requireNonNull(name, "name"), target, model, load, duration, seeds,
        charts);
  }

  /**
   * Runs the simulation, once per seed, on the calling thread's virtual clock.
   *
   * @throws IllegalStateException when no target was given
   */
  public PolicyOutcome run() {
    if (target == null) {
      throw new IllegalStateException("a policy check needs a model of the dependency: call against(dependency)"
          + " or against(scenarioFile) before run()");
    }
    Simulation simulation = policy.apply(target);
    Load l = load != null ? load : model != null ? model.load() : null;
    Duration d = duration != null ? duration : model != null ? model.duration() : null;
    if (l != null) {
      simulation = simulation.under(l);
    }
    if (d != null) {
      simulation = simulation.lasting(d);
    }
    List<Scenario.Arm> arms = new ArrayList<>();
    arms.add(new Scenario.Arm(name, simulation));
    Scenario scenario = Scenario.of(name, "policy check: " + name, arms).parallelism(1);
    ScenarioResult result = scenario.run(seeds);
    return new PolicyOutcome(name, result, charts);
  }
}
