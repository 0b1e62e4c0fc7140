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

  /** A policy was built (at startup, on a refresh, or for a new host): show its budget now. */
  default void built(Resilience policy) {}

  /** A shared budget is in use. */
  default void shared(RetryBudget budget) {}
}
