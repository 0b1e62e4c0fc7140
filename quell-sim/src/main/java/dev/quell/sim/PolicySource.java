package dev.quell.sim;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import java.util.Objects;
import java.util.function.Function;

/** Makes a fresh copy of a user's policy for each run, on that run's clock. */
final class PolicySource {
  private final Function<? super TimeSource, Resilience> factory;
  private final String description;

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
    return new PolicySource(clock -> policy.withTimeSource(clock), policy.toString());
  }

  static PolicySource of(Function<? super TimeSource, Resilience> factory) {
    Objects.requireNonNull(factory, "factory");
    return new PolicySource(factory, "");
  }

  /** A fresh policy on {@code clock}, with an automatic budget of its own. */
  Resilience build(TimeSource clock) {
    Resilience built = Objects.requireNonNull(factory.apply(clock), "the policy factory returned null");
    return built.withTimeSource(clock);
  }

  @Override
  public String toString() {
    return description.isEmpty() ? build(TimeSource.system()).toString() : description;
  }
}
