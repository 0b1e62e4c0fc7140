package dev.quell.spring.internal;

import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import java.util.ArrayList;
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

  /**
   * A {@code @Resilient} method's fallback answered a call of {@code policy} that ended as {@code call}
   * (already recorded as such by the policy's listeners); {@code succeeded} says whether the fallback returned.
   */
  default void fallback(String policy, FailedCall call, boolean succeeded) {}

  /** All of {@code parts}, in order. */
  static Telemetry of(List<Telemetry> parts) {
    List<Telemetry> all = List.copyOf(parts);
    List<ResilienceListener> listeners = new ArrayList<>();
    all.forEach(t -> listeners.addAll(t.listeners()));
    List<ResilienceListener> fixed = List.copyOf(listeners);
    return new Telemetry() {
      @Override
      public List<ResilienceListener> listeners() {
        return fixed;
      }

      @Override
      public void built(Resilience policy, String configuredName) {
        all.forEach(t -> t.built(policy, configuredName));
      }

      @Override
      public void shared(RetryBudget budget) {
        all.forEach(t -> t.shared(budget));
      }

      @Override
      public void fallback(String policy, FailedCall call, boolean succeeded) {
        all.forEach(t -> t.fallback(policy, call, succeeded));
      }
    };
  }

  /** The recent events kept in {@code log}. */
  static Telemetry events(EventLog log) {
    return new Telemetry() {
      @Override
      public List<ResilienceListener> listeners() {
        return List.of(log);
      }

      @Override
      public void fallback(String policy, FailedCall call, boolean succeeded) {
        log.fallback(policy, call.reason(), call.failure(), call.attempts(), succeeded, call.elapsed());
      }
    };
  }
}
