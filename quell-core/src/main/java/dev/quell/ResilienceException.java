package dev.quell;

import org.jspecify.annotations.Nullable;

/** The root of every exception Quell itself throws. Exceptions from your own work are rethrown unchanged. */
public class ResilienceException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Creates an exception with a message and an optional cause. */
  public ResilienceException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }

  /** Creates an exception that fills in its stack trace only if {@code writableStackTrace}. */
  protected ResilienceException(String message, @Nullable Throwable cause, boolean writableStackTrace) {
    super(message, cause, true, writableStackTrace);
  }
}
