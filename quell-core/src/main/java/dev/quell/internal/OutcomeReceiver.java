package dev.quell.internal;

import dev.quell.Outcome;

/**
 * Asynchronous work that also wants the call's outcome, handed over directly instead of through a
 * dependent stage on the caller's future. When the work given to {@code Resilience.runAsync}
 * implements it, the driver calls {@link #callEnded} right after it completes the caller's future
 * with {@code outcome}, on the same thread, exactly once; an exception it throws is ignored, as a
 * dependent stage's would be. It may come before {@code runAsync} returns (a call that ends at
 * once). The simulator's calls use it.
 */
@Internal
public interface OutcomeReceiver {

  /** The call ended with {@code outcome}; {@code elapsedNanos} is {@code outcome.elapsed()} in nanoseconds. */
  void callEnded(Outcome<?> outcome, long elapsedNanos);
}
