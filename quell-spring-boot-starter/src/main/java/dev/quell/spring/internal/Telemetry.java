package dev.quell.spring.internal;

import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import java.util.List;

/** What the registry tells telemetry: the listeners every policy gets, and each policy and shared budget it builds. */
public interface Telemetry {
  /** No telemetry. */
  Telemetry NONE = new Telemetry() {};

  /** Listeners added to every policy. */
  default List<ResilienceListener> listeners() {
    return List.of();
  }

  /**
   * A policy was built (at startup, on a refresh, or for a new host): show its budget, breaker and limiters
   * now, as belonging to {@code configuredName} (the name under quell.policies; a per-host copy is called
   * {@code configuredName:host} and shares the rate and concurrency limits of {@code configuredName}).
   */
  default void built(Resilience policy, String configuredName) {}

  /** A shared budget is in use. */
  default void shared(RetryBudget budget) {}
}
