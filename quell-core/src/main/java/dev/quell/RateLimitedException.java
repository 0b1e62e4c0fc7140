package dev.quell;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** A rate or concurrency limiter refused the call. */
public final class RateLimitedException extends CallRejectedException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; normally only Quell does this. */
  public RateLimitedException(String message, int attempts, @Nullable Duration retryAfter, @Nullable Throwable cause) {
    super(message, StopReason.LIMITED, attempts, retryAfter, cause);
  }

  RateLimitedException(String message, int attempts, @Nullable Duration retryAfter, @Nullable Throwable cause,
      boolean writableStackTrace) {
    super(message, StopReason.LIMITED, attempts, retryAfter, cause, writableStackTrace);
  }
}
