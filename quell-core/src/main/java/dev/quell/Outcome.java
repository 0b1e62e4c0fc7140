package dev.quell;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How a call ended, for the result style ({@link Resilience#run}): the value or the failure, why it
 * stopped, how many attempts ran and how long it took. Immutable.
 */
public final class Outcome<T> {
  private final @Nullable T value;
  private final boolean hasValue;
  private final @Nullable Throwable failure;
  private final StopReason stopReason;
  private final int attempts;
  /** Nanoseconds, 0 or more: a Duration is made only when asked for (the simulator never asks). */
  private final long elapsedNanos;
  private final @Nullable Duration retryAfter;

  Outcome(@Nullable T value, boolean hasValue, @Nullable Throwable failure, StopReason stopReason, int attempts,
      long elapsedNanos, @Nullable Duration retryAfter) {
    this.value = value;
    this.hasValue = hasValue;
    this.failure = failure;
    this.stopReason = stopReason;
    this.attempts = attempts;
    this.elapsedNanos = elapsedNanos;
    this.retryAfter = retryAfter;
  }

  /** True when the call ended with {@link StopReason#SUCCEEDED}. */
  public boolean isSuccess() {
    return stopReason == StopReason.SUCCEEDED;
  }

  /**
   * The value the last attempt returned, or null when it threw or none ran. A failed call can have a
   * value too: an HTTP 503 response that could not be retried is the value, with stop reason
   * {@link StopReason#ATTEMPTS_EXHAUSTED}.
   */
  public @Nullable T value() {
    return value;
  }

  /** True when the last attempt returned a value (possibly null) rather than throwing. */
  public boolean hasValue() {
    return hasValue;
  }

  /**
   * What ended the call unsuccessfully: the exception of the last attempt, or, when a guard or the
   * deadline ended it, the exception {@link Resilience#execute} would throw. Empty on success and when
   * the last attempt returned a value.
   */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure);
  }

  /** Why the call ended. */
  public StopReason stopReason() {
    return stopReason;
  }

  /** Attempts that reached the work (first attempt, retries and hedges). */
  public int attempts() {
    return attempts;
  }

  /** Time from the start of the call to its end, guarded pause included. */
  public Duration elapsed() {
    return Duration.ofNanos(elapsedNanos);
  }

  /** When the refusing guard or the dependency expects to accept work again, where known. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /**
   * The value if the call returned one, else throws what {@link Resilience#execute} would have thrown
   * (checked exceptions included, unchanged).
   */
  public @Nullable T orElseThrow() throws Exception {
    if (failure == null) {
      return value;
    }
    if (failure instanceof Error) {
      throw (Error) failure;
    }
    throw (Exception) failure;
  }

  @Override
  public String toString() {
    return "Outcome[" + stopReason + ", attempts=" + attempts + ", elapsed=" + Duration.ofNanos(elapsedNanos).toMillis() + "ms"
        + (failure != null ? ", failure=" + failure : ", value=" + value) + "]";
  }
}
