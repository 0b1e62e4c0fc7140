package dev.quell;

/** Attempt records for limiter tests, set up as the core sets them up before asking its gates. */
final class Attempts {
  private Attempts() {}

  /** A fresh first attempt at {@code now} with no deadline, for a policy with one gate. */
  static AttemptRecord attempt(long now) {
    return new AttemptRecord().reset(1, AttemptRecord.FIRST, Criticality.CRITICAL, now, 1);
  }

  /** A fresh first attempt at {@code now} with {@code remainingNanos} left before the call's deadline. */
  static AttemptRecord attempt(long now, long remainingNanos) {
    AttemptRecord a = attempt(now);
    a.timeoutNanos = remainingNanos;
    return a;
  }
}
