package dev.quell;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The call ended because a retry budget, a circuit breaker or a limiter refused to let another
 * attempt start. The cause, when there is one, is the failure of the last attempt that ran.
 */
public class CallRejectedException extends ResilienceException {
  private static final long serialVersionUID = 1L;

  private final StopReason reason;
  private final int attempts;
  private final @Nullable Duration retryAfter;

  /** Creates the exception; normally only Quell does this. */
  public CallRejectedException(
      String message, StopReason reason, int attempts, @Nullable Duration retryAfter, @Nullable Throwable cause) {
    this(message, reason, attempts, retryAfter, cause, true);
  }

  /** For Quell: without a stack trace where none helps (a future's failure, an {@code Outcome}'s). */
  CallRejectedException(String message, StopReason reason, int attempts, @Nullable Duration retryAfter,
      @Nullable Throwable cause, boolean writableStackTrace) {
    super(message, cause, writableStackTrace);
    this.reason = reason;
    this.attempts = attempts;
    this.retryAfter = retryAfter;
  }

  /** Which guard refused: {@link StopReason#BUDGET_EXHAUSTED}, {@link StopReason#DEPENDENCY_UNAVAILABLE} or {@link StopReason#LIMITED}. */
  public StopReason reason() {
    return reason;
  }

  /** How many attempts ran before the refusal. */
  public int attempts() {
    return attempts;
  }

  /** When the refusing guard expects to admit work again, where it knows. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }
}
