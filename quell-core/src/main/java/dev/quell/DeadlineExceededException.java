package dev.quell;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The call's deadline passed, or the next retry could not have started before it. The cause, when
 * there is one, is the failure of the last attempt.
 */
public final class DeadlineExceededException extends ResilienceException {
  private static final long serialVersionUID = 1L;

  private final int attempts;
  private final Duration elapsed;

  /** Creates the exception; normally only Quell does this. */
  public DeadlineExceededException(String message, int attempts, Duration elapsed, @Nullable Throwable cause) {
    this(message, attempts, elapsed, cause, true);
  }

  DeadlineExceededException(String message, int attempts, Duration elapsed, @Nullable Throwable cause,
      boolean writableStackTrace) {
    super(message, cause, writableStackTrace);
    this.attempts = attempts;
    this.elapsed = elapsed;
  }

  /** How many attempts ran. */
  public int attempts() {
    return attempts;
  }

  /** Time from the start of the call to the moment it gave up. */
  public Duration elapsed() {
    return elapsed;
  }
}
