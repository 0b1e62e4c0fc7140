package dev.quell.sim;

import dev.quell.Resilience;
import dev.quell.TimeSource;
import java.util.Objects;
import java.util.function.Function;

/**
 * Where a simulation starts: the policy you want to measure.
 *
 * <pre>{@code
 * SimulationReport report = Simulate.policy(policy)
 *     .against(dependency)
 *     .under(Load.perSecond(500))
 *     .lasting(Duration.ofMinutes(5))
 *     .run(42);
 * }</pre>
 *
 * <p>The simulator runs your policy's real decision core and budget: each run takes a copy of the
 * policy with {@code withTimeSource(simulationClock)} and drives every call through
 * {@link Resilience#runAsync}. Retries, backoff with its jitter, deadlines, attempt timeouts, the
 * budget and its guarded pause are Quell's own code, not a model of it; only the clock and the
 * dependency are simulated.
 */
public final class Simulate {
  private final PolicySource policy;

  private Simulate(PolicySource policy) {
    this.policy = policy;
  }

  /**
   * Measures {@code policy}. Each run uses a fresh copy on the simulation's clock, so an
   * {@link dev.quell.RetryBudget#AUTOMATIC automatic} budget starts full and refills on simulated
   * time, a circuit breaker given as {@link dev.quell.CircuitBreaker.Config configuration} starts
   * closed, and runs never share state. Hedges and measured timing need nothing more.
   *
   * @throws IllegalArgumentException when the policy spends from a budget object of its own (made
   *     with {@code RetryBudget.of}, {@code shared}, {@code feedback} or {@code replenishing}), asks a
   *     live circuit breaker ({@code CircuitBreaker.of}), or asks any limiter: such a guard is live,
   *     keeps its state between runs and (a budget, breaker or rate limiter) its clock. Use
   *     {@link #policy(Function)} to build it on the simulation's clock.
   */
  public static Simulate policy(Resilience policy) {
    return new Simulate(PolicySource.of(policy));
  }

  /**
   * Measures the policy {@code factory} builds, once per run, on the simulation's clock (the
   * argument). Use it for budgets of your own, and for limiters (put the policy on the clock before
   * adding a rate limiter, which must refill from the clock its policy runs on):
   *
   * <pre>{@code
   * Simulate.policy(clock -> policy.withBudget(RetryBudget.of(0.2, 5, clock)))
   * Simulate.policy(clock -> policy.withTimeSource(clock).withLimiter(Limiter.rate(400, 40, clock)))
   * }</pre>
   *
   * <p>Each run must get guards of its own: a run that is handed a live budget, breaker or limiter
   * the factory returned before fails with an {@link IllegalArgumentException}.
   */
  public static Simulate policy(Function<? super TimeSource, Resilience> factory) {
    return new Simulate(PolicySource.of(Objects.requireNonNull(factory, "factory")));
  }

  /** Sends the calls to {@code target}: a {@link Dependency}, or a {@link Service} that calls others. */
  public Simulation against(Target target) {
    return new Simulation(policy, Objects.requireNonNull(target, "target"), Simulation.DEFAULT_LOAD,
        Simulation.DEFAULT_DURATION);
  }
}
