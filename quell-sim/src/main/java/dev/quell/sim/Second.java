package dev.quell.sim;

import dev.quell.StopReason;
import java.util.Map;

/**
 * One second of a run, as a dashboard would show it. Attempts, retries and refusals count in the
 * second they happened; successes and failures count in the second the call arrived, so that
 * {@link #availability()} is the share of that second's calls that succeeded.
 *
 * @param second seconds since the start of the run
 * @param offered calls that arrived
 * @param firstAttempts first attempts started
 * @param retries retries started (every attempt after the first that is not a hedge)
 * @param hedges hedges started (attempts sent beside one still running)
 * @param retriesRefused retries the budget refused (each ends its call with {@code BUDGET_EXHAUSTED})
 * @param refusedByBreaker attempts a circuit breaker refused, first attempts included (each ends its
 *     call with {@code DEPENDENCY_UNAVAILABLE}); none of them reached the target
 * @param limited attempts a limiter refused, first attempts included (each ends its call with
 *     {@code LIMITED}); none of them reached the target
 * @param succeeded calls that arrived in this second and succeeded
 * @param failures calls that arrived in this second and failed, by stop reason (every reason but
 *     {@code SUCCEEDED}, zeros included)
 * @param budgetTokens the budget's balance at the end of the second; NaN without a budget
 * @param occupancy the mean number of attempts in service at the target, counting peers
 * @param queue the mean number of attempts waiting at the target, counting peers
 * @param latencyP99Millis the 99th percentile of the latency of the calls that ended in this second
 *     (as a dashboard's latency panel counts them, by when they ended), in milliseconds; NaN when none
 *     ended
 */
public record Second(int second, long offered, long firstAttempts, long retries, long hedges, long retriesRefused,
    long refusedByBreaker, long limited, long succeeded, Map<StopReason, Long> failures, double budgetTokens,
    double occupancy, double queue, double latencyP99Millis) {

  /** Attempts that reached the target: first attempts, retries and hedges. */
  public long attempts() {
    return firstAttempts + retries + hedges;
  }

  /** Attempts ÷ offered calls; NaN when no call arrived. */
  public double attemptRatio() {
    return offered == 0 ? Double.NaN : (double) attempts() / offered;
  }

  /** Succeeded ÷ offered; NaN when no call arrived. */
  public double availability() {
    return offered == 0 ? Double.NaN : (double) succeeded / offered;
  }

  /** Failed calls, all reasons together. */
  public long failed() {
    long sum = 0;
    for (long n : failures.values()) {
      sum += n;
    }
    return sum;
  }
}
