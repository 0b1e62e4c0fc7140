package dev.quell.spring.internal;

import dev.quell.Outcome;
import dev.quell.StopReason;
import java.time.Duration;

/**
 * How a failed call of a {@code @Resilient} method ended, as its fallback's telemetry reports it: taken from
 * the core's {@link Outcome} where the call has one, else from the failure the call signalled (a
 * {@code Mono} or {@code Flux} call ends in an error signal, not an outcome).
 */
record FailedCall(StopReason reason, Throwable failure, int attempts, Duration elapsed) {
  static FailedCall of(Outcome<?> outcome) {
    return new FailedCall(outcome.stopReason(), outcome.failure().orElseThrow(), outcome.attempts(), outcome.elapsed());
  }
}
