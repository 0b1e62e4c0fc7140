package dev.quell.sim;

import dev.quell.StopReason;

/**
 * Hears of every call the load made, as it ends: what an access log or a trace export would hold,
 * for a run's own telemetry ({@code quell fit}'s round trip reads it back). Called on the run's
 * thread, in the order the calls end; it must not throw.
 */
@FunctionalInterface
public interface CallLog {
  /**
   * A call ended.
   *
   * @param startedNanos when it started, in nanoseconds from the start of the run
   * @param elapsedNanos how long it took, retries, backoff and pauses included
   * @param reason how it ended ({@code SUCCEEDED} for a success)
   */
  void ended(long startedNanos, long elapsedNanos, StopReason reason);
}
