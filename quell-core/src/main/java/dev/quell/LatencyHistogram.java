package dev.quell;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The latencies of one policy's successful attempts over a sliding window: a fixed-size
 * log-linear histogram (eight sub-buckets per power of two, so any value is known within 12.5%,
 * from a microsecond to about 18 minutes), kept as six slices of a sixth of the window each. A
 * sample is one atomic increment in the current slice: no allocation, no lock. A slice that has
 * aged out is cleared by the first sample that lands in it again.
 *
 * <p>Quantiles are read from the slices still inside the window and cached for a short while (a
 * fiftieth of a slice, at most 100 ms), so that a call asking for its hedge delay or attempt ceiling
 * pays a volatile read, not a scan.
 *
 * <p>Thread-safe: a slice is cleared before its new epoch is published, and samples for that epoch
 * wait the moment the clearing takes, so none is lost. (A sample delayed by a whole slice's time
 * between reading the clock and counting could land in the slice's next epoch: a window edge off by
 * one sample.)
 */
final class LatencyHistogram {
  private static final int SUB_BITS = 3;
  private static final int SUB = 1 << SUB_BITS;
  /** Values below 2^MIN_EXP ns (about 1 µs) share the first bucket. */
  private static final int MIN_EXP = 10;
  /** Values from 2^MAX_EXP ns (about 18 minutes) share the last bucket. */
  private static final int MAX_EXP = 40;
  static final int BUCKETS = (MAX_EXP - MIN_EXP) * SUB + 2;
  static final int SLICES = 6;

  private final TimeSource time;
  private final long origin;
  private final long sliceNanos;
  private final long refreshNanos;
  private final AtomicLongArray[] counts = new AtomicLongArray[SLICES];
  private final AtomicLong[] epochs = new AtomicLong[SLICES];

  // the cache: quantiles computed at cachedAt, for cachedCount samples
  private volatile long cachedAt;
  private volatile boolean cached;
  private volatile long cachedP95;
  private volatile long cachedSamples;
  private volatile double cachedQuantile = Double.NaN;
  private volatile long cachedQuantileValue;
  private final AtomicLong refreshing = new AtomicLong();

  LatencyHistogram(TimeSource time, long windowNanos) {
    this.time = time;
    this.origin = time.nanoTime();
    this.sliceNanos = Math.max(1, windowNanos / SLICES);
    this.refreshNanos = Math.max(1, Math.min(sliceNanos / 50, 100_000_000L));
    for (int i = 0; i < SLICES; i++) {
      counts[i] = new AtomicLongArray(BUCKETS);
      epochs[i] = new AtomicLong(-1);
    }
  }

  /** The bucket a latency falls in. */
  static int bucket(long nanos) {
    if (nanos < (1L << MIN_EXP)) {
      return 0;
    }
    int exp = 63 - Long.numberOfLeadingZeros(nanos);
    if (exp >= MAX_EXP) {
      return BUCKETS - 1;
    }
    int sub = (int) (nanos >>> (exp - SUB_BITS)) & (SUB - 1);
    return 1 + (exp - MIN_EXP) * SUB + sub;
  }

  /** The largest latency a bucket holds: what a quantile reports, so a ceiling is never too tight. */
  static long upperBound(int bucket) {
    if (bucket == 0) {
      return (1L << MIN_EXP) - 1;
    }
    if (bucket >= BUCKETS - 1) {
      return Long.MAX_VALUE;
    }
    int b = bucket - 1;
    int exp = MIN_EXP + b / SUB;
    int sub = b % SUB;
    return ((long) (SUB + sub + 1) << (exp - SUB_BITS)) - 1;
  }

  /** A slice being cleared for a new epoch: samples wait the moment it takes. */
  private static final long ROTATING = Long.MIN_VALUE;

  /** Records one successful attempt's latency, measured at {@code now}. */
  void record(long latencyNanos, long now) {
    long epoch = Math.floorDiv(now - origin, sliceNanos);
    int slot = (int) Math.floorMod(epoch, SLICES);
    AtomicLong e = epochs[slot];
    while (true) {
      long seen = e.get();
      if (seen == epoch) {
        break;
      }
      if (seen == ROTATING) {
        Thread.onSpinWait(); // another sample is clearing the slice for this epoch
        continue;
      }
      if (seen > epoch) {
        return; // a reading from a slice that has already been reused: too old to count
      }
      if (e.compareAndSet(seen, ROTATING)) {
        if (seen >= 0) {
          AtomicLongArray c = counts[slot];
          for (int i = 0; i < BUCKETS; i++) {
            c.set(i, 0);
          }
        }
        e.set(epoch); // cleared before it is published: no sample of the new epoch is wiped
        break;
      }
    }
    counts[slot].incrementAndGet(bucket(Math.max(0, latencyNanos)));
  }

  /** Samples inside the window at {@code now} (cached for a moment). */
  long samples(long now) {
    refresh(now);
    return cachedSamples;
  }

  /** The 95th percentile inside the window at {@code now} (cached for a moment); 0 with no samples. */
  long p95(long now) {
    refresh(now);
    return cachedP95;
  }

  /** The {@code q} quantile inside the window at {@code now} (cached for a moment); 0 with no samples. */
  long quantile(double q, long now) {
    refresh(now);
    if (Double.compare(q, cachedQuantile) != 0) {
      return compute(q, now); // a second quantile: computed, not cached
    }
    return cachedQuantileValue;
  }

  /** For dashboards and {@code explain()}: computed now, not cached; the window's samples go to {@code samplesOut}. */
  long quantileNow(double q, long @org.jspecify.annotations.Nullable [] samplesOut) {
    return compute(q, time.nanoTime(), samplesOut);
  }

  /** As {@link #quantileNow(double, long[])}. */
  long quantileNow(double q) {
    return compute(q, time.nanoTime(), null);
  }

  private void refresh(long now) {
    if (cached && now - cachedAt < refreshNanos) {
      return;
    }
    long ticket = refreshing.get();
    if (!refreshing.compareAndSet(ticket, ticket + 1)) {
      return; // another thread is refreshing; the cached values are at most a refresh old
    }
    long[] total = new long[1];
    cachedP95 = compute(0.95, now, total);
    cachedSamples = total[0];
    double q = cachedQuantile;
    if (!Double.isNaN(q)) {
      cachedQuantileValue = compute(q, now);
    }
    cachedAt = now;
    cached = true;
  }

  /** Remembers which other quantile to keep cached (the hedge delay's). */
  void cacheQuantile(double q) {
    if (Double.compare(cachedQuantile, q) != 0) {
      cachedQuantile = q;
      cached = false;
    }
  }

  private long compute(double q, long now) {
    return compute(q, now, null);
  }

  private long compute(double q, long now, long @org.jspecify.annotations.Nullable [] totalOut) {
    long current = Math.floorDiv(now - origin, sliceNanos);
    long[] sum = new long[BUCKETS];
    long total = 0;
    for (int s = 0; s < SLICES; s++) {
      long epoch = epochs[s].get();
      if (epoch < 0 || epoch > current || current - epoch >= SLICES) { // (ROTATING is negative)
        continue; // empty, or aged out of the window
      }
      AtomicLongArray c = counts[s];
      for (int i = 0; i < BUCKETS; i++) {
        long n = c.get(i);
        sum[i] += n;
        total += n;
      }
    }
    if (totalOut != null) {
      totalOut[0] = total;
    }
    if (total == 0) {
      return 0;
    }
    long rank = (long) Math.ceil(q * total);
    long seen = 0;
    for (int i = 0; i < BUCKETS; i++) {
      seen += sum[i];
      if (seen >= rank) {
        return upperBound(i);
      }
    }
    return upperBound(BUCKETS - 1);
  }
}
