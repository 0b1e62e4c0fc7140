package dev.quell;

/**
 * How a computed backoff delay is randomised so that clients that failed together do not retry
 * together. See AWS's "Exponential Backoff And Jitter" for the comparison behind the default.
 */
public enum Jitter {
  /** A uniformly random delay between zero and the computed delay. The default: it spreads retries best. */
  FULL,
  /** Half the computed delay, plus a random share of the other half. */
  EQUAL,
  /** Exactly the computed delay. Only for tests and for a single client. */
  NONE;

  long apply(long nanos, java.util.random.RandomGenerator random) {
    if (nanos <= 0) {
      return 0;
    }
    switch (this) {
      case FULL:
        // [0, nanos]; at the longest delay there is, [0, nanos) (nanos + 1 would overflow)
        return random.nextLong(nanos == Long.MAX_VALUE ? nanos : nanos + 1);
      case EQUAL:
        long half = nanos / 2;
        return half + random.nextLong(nanos - half + 1);
      default:
        return nanos;
    }
  }
}
