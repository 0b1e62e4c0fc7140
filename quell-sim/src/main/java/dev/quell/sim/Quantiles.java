package dev.quell.sim;

import java.time.Duration;

/**
 * Quantiles of call latency: the time from a call's start to its end as the caller saw it,
 * retries, backoff and any guarded pause included, failed calls included. Each quantile is within
 * 0.8% of the exact value (the simulator counts latencies in log-linear buckets); the maximum is exact.
 *
 * @param p50 the median
 * @param p90 the 90th percentile
 * @param p99 the 99th percentile
 * @param p999 the 99.9th percentile
 * @param max the longest
 */
public record Quantiles(Duration p50, Duration p90, Duration p99, Duration p999, Duration max) {

  /** All zero, for no calls. */
  public static final Quantiles NONE = new Quantiles(Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ZERO,
      Duration.ZERO);
}
