package dev.quell;

import dev.quell.internal.Problems;

import java.time.Duration;

/**
 * One attempt ran longer than its attempt timeout and was abandoned. The default classifiers treat
 * it as transient, so the call may retry. It reaches your code only as the last failure of a call
 * that could not retry, or as the cause of another Quell exception.
 */
public final class AttemptTimeoutException extends ResilienceException {
  private static final long serialVersionUID = 1L;

  private final Duration timeout;

  /**
   * Creates the exception; normally only Quell does this. It carries no stack trace: it is made by
   * Quell's own machinery, often on a timer thread, where a trace says nothing about your code, and
   * during a storm it is made for every attempt, where filling one in is a large share of the cost.
   */
  public AttemptTimeoutException(Duration timeout) {
    super("attempt timed out after " + Problems.duration(timeout), null, false);
    this.timeout = timeout;
  }

  /** The timeout that expired (the attempt timeout, or the time left before the deadline if that was less). */
  public Duration timeout() {
    return timeout;
  }
}
