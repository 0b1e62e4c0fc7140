package dev.quell;

/** Why a call ended. Every call ends with exactly one. */
public enum StopReason {
  /** An attempt succeeded. */
  SUCCEEDED,
  /** An attempt failed in a way retrying cannot fix (the classifier said {@link Verdict.Kind#PERMANENT}). */
  PERMANENT,
  /** Every allowed attempt was made and the last one failed. */
  ATTEMPTS_EXHAUSTED,
  /** The deadline passed, or the next retry could not start before it. */
  DEADLINE_EXCEEDED,
  /** A retry was needed but the retry budget would not fund it. */
  BUDGET_EXHAUSTED,
  /** An open circuit breaker refused the attempt. */
  DEPENDENCY_UNAVAILABLE,
  /** A rate or concurrency limiter refused the attempt. */
  LIMITED,
  /** The caller cancelled the call or interrupted its thread. */
  CANCELLED,
  /** The process is shutting down ({@code Draining}) and no new attempt may start. */
  DRAINING;

  /** True only for {@link #SUCCEEDED}. */
  public boolean isSuccess() {
    return this == SUCCEEDED;
  }
}
