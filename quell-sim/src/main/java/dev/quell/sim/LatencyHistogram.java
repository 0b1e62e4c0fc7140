package dev.quell.sim;

import java.time.Duration;

/**
 * Call latencies in log-linear buckets, microsecond resolution and 128 sub-buckets per power of two,
 * so a quantile is within 0.8% of the exact value; the maximum is exact. Recording is one array
 * increment; no latency is stored, so a long run needs no more memory than a short one.
 */
final class LatencyHistogram {
  private static final int SUB_BITS = 7;
  private static final int SUB = 1 << SUB_BITS;
  private static final int HALF = SUB >>> 1;

  private final long[] counts = new long[SUB + 58 * HALF];
  private long total;
  private long maxNanos;
  /** The lowest and highest bucket used since the last {@link #reset()}: a reset clears only those. */
  private int lowest = Integer.MAX_VALUE;
  private int highest = -1;

  void record(long nanos) {
    long micros = Math.max(0, nanos) / 1000;
    int i = index(micros);
    counts[i]++;
    lowest = Math.min(lowest, i);
    highest = Math.max(highest, i);
    total++;
    if (nanos > maxNanos) {
      maxNanos = nanos;
    }
  }

  private static int index(long micros) {
    if (micros < SUB) {
      return (int) micros;
    }
    int shift = 63 - Long.numberOfLeadingZeros(micros) - (SUB_BITS - 1);
    return SUB + (shift - 1) * HALF + (int) ((micros >>> shift) - HALF);
  }

  /** The middle of bucket {@code i}, in nanoseconds. */
  private static long middle(int i) {
    if (i < SUB) {
      return i * 1000L + 500;
    }
    int shift = (i - SUB) / HALF + 1;
    long lower = ((long) ((i - SUB) % HALF) + HALF) << shift;
    return (lower * 1000L) + ((1000L << shift) >>> 1);
  }

  /** How many latencies were recorded since the last reset. */
  long total() {
    return total;
  }

  /** Forgets every latency: the histogram of one second is used again for the next. */
  void reset() {
    if (highest >= 0) {
      java.util.Arrays.fill(counts, lowest, highest + 1, 0L);
    }
    lowest = Integer.MAX_VALUE;
    highest = -1;
    total = 0;
    maxNanos = 0;
  }

  /** The 99th percentile in nanoseconds; 0 when nothing was recorded. */
  long p99Nanos() {
    return total == 0 ? 0 : at(0.99).toNanos();
  }

  Quantiles quantiles() {
    if (total == 0) {
      return Quantiles.NONE;
    }
    return new Quantiles(at(0.50), at(0.90), at(0.99), at(0.999), Duration.ofNanos(maxNanos));
  }

  private Duration at(double q) {
    long rank = Math.max(1, (long) Math.ceil(q * total));
    long seen = 0;
    for (int i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= rank) {
        return Duration.ofNanos(Math.min(middle(i), maxNanos));
      }
    }
    return Duration.ofNanos(maxNanos);
  }
}
