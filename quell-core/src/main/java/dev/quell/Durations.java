package dev.quell;

import java.time.Duration;

/** Duration arithmetic that never overflows: every duration from outside is saturated, never trusted to fit. */
final class Durations {
  private Durations() {}

  /** {@code d} in nanoseconds, saturated to {@code [Long.MIN_VALUE, Long.MAX_VALUE]} instead of throwing. */
  static long toNanosSaturated(Duration d) {
    long seconds = d.getSeconds();
    if (seconds >= Long.MAX_VALUE / 1_000_000_000L - 1) {
      return Long.MAX_VALUE;
    }
    if (seconds <= Long.MIN_VALUE / 1_000_000_000L + 1) {
      return Long.MIN_VALUE;
    }
    return seconds * 1_000_000_000L + d.getNano();
  }

  /** {@code a + b} for non-negative {@code b}, saturated at Long.MAX_VALUE. */
  static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? (b < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : r;
  }

  /** A duration of {@code nanos}, or {@code ChronoUnit.FOREVER}'s for Long.MAX_VALUE ("no limit"). */
  static Duration ofNanosOrForever(long nanos) {
    return nanos == Long.MAX_VALUE ? java.time.temporal.ChronoUnit.FOREVER.getDuration() : Duration.ofNanos(nanos);
  }
}
