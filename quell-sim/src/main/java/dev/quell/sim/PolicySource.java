package dev.quell.sim;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Makes a fresh copy of a user's policy for each run, on that run's clock.
 *
 * <p>A run must share no state with another: runs go on in parallel and each must repeat exactly for
 * its seed. So live guards — a budget object, a shared circuit breaker, any limiter — cannot come
 * with a policy given as it is (they keep their state, and a rate limiter or breaker its clock,
 * between runs), and a factory must build new ones for every run; a factory that hands out the same
 * live guard twice is refused when it does.
 */
final class PolicySource {
  private final Function<? super TimeSource, Resilience> factory;
  private final String description;
  /** The live guards the factory has built so far, by identity: each must be new. */
  private final Set<Object> built = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

  private PolicySource(Function<? super TimeSource, Resilience> factory, String description) {
    this.factory = factory;
    this.description = description;
  }

  static PolicySource of(Resilience policy) {
    Objects.requireNonNull(policy, "policy");
    RetryBudget budget = policy.configuredBudget();
    if (budget != RetryBudget.AUTOMATIC && budget != RetryBudget.NONE) {
      throw new IllegalArgumentException("policy '" + policy.name() + "' spends from a budget object of its own ("
          + budget.name() + "); a live budget keeps its state and its clock between runs, so the simulator cannot use"
          + " it. Give the simulator a factory that builds the budget on the simulation's clock, for example"
          + " Simulate.policy(clock -> policy.withBudget(RetryBudget.of(0.1, 3, clock))), or use RetryBudget.AUTOMATIC"
          + " or RetryBudget.NONE");
    }
    CircuitBreaker breaker = policy.breaker().orElse(null);
    if (breaker != null && policy.withName(policy.name()).breaker().orElse(null) == breaker) {
      // a breaker given as configuration is rebuilt with every copy; a live one stays the same object
      throw new IllegalArgumentException("policy '" + policy.name() + "' asks a live circuit breaker ("
          + breaker.name() + "); a live breaker keeps its state and its clock between runs, so the simulator cannot"
          + " use it. Give the policy the breaker's configuration instead, policy.withBreaker(CircuitBreaker.Config"
          + ".DEFAULT), which each run builds afresh on its own clock, or a factory:"
          + " Simulate.policy(clock -> policy.withBreaker(CircuitBreaker.of(\"" + breaker.name()
          + "\", config, clock)))");
    }
    if (!policy.limiters().isEmpty()) {
      throw new IllegalArgumentException("policy '" + policy.name() + "' asks " + names(policy)
          + "; a limiter is live: it keeps its permits (and a rate limiter its clock) between runs, so the simulator"
          + " cannot use it. Give the simulator a factory that builds the limiters for each run, for example"
          + " Simulate.policy(clock -> policy.withoutLimiters().withTimeSource(clock)"
          + ".withLimiter(Limiter.rate(50, 10, clock)))"
          + " (the policy on the clock first, then a rate limiter refilled from it)");
    }
    return new PolicySource(clock -> policy.withTimeSource(clock), policy.toString());
  }

  private static String names(Resilience policy) {
    StringBuilder s = new StringBuilder(policy.limiters().size() == 1 ? "the limiter " : "the limiters ");
    for (int i = 0; i < policy.limiters().size(); i++) {
      s.append(i == 0 ? "" : ", ").append(policy.limiters().get(i).name());
    }
    return s.toString();
  }

  static PolicySource of(Function<? super TimeSource, Resilience> factory) {
    Objects.requireNonNull(factory, "factory");
    return new PolicySource(factory, "");
  }

  /**
   * A fresh policy on {@code clock}, with an automatic budget (and a breaker from configuration) of
   * its own.
   *
   * @throws IllegalArgumentException when the factory returns a live guard it returned before
   */
  Resilience build(TimeSource clock) {
    Resilience policy = Objects.requireNonNull(factory.apply(clock), "the policy factory returned null");
    RetryBudget budget = policy.configuredBudget();
    if (budget != RetryBudget.AUTOMATIC && budget != RetryBudget.NONE) {
      fresh(budget, "budget " + budget.name());
    }
    CircuitBreaker breaker = policy.breaker().orElse(null);
    if (breaker != null && policy.withName(policy.name()).breaker().orElse(null) == breaker) {
      fresh(breaker, "circuit breaker " + breaker.name());
    }
    for (Limiter l : policy.limiters()) {
      fresh(l, "limiter " + l.name());
    }
    return policy.withTimeSource(clock);
  }

  private void fresh(Object guard, String what) {
    if (!built.add(guard)) {
      throw new IllegalArgumentException("the policy factory returned the same live " + what + " for two runs; runs"
          + " share nothing, so build it inside the factory, on the clock the factory is given, for example"
          + " clock -> policy.withTimeSource(clock).withLimiter(Limiter.concurrency(20))");
    }
  }

  @Override
  public String toString() {
    if (!description.isEmpty()) {
      return description;
    }
    // described without the check for fresh guards: a description must not throw
    return Objects.requireNonNull(factory.apply(TimeSource.system()), "the policy factory returned null").toString();
  }
}
