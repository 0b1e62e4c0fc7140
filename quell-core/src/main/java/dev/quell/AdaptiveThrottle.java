package dev.quell;

/**
 * Client-side adaptive throttling, behind {@link Limiter#throttle}: the Google SRE book's rule
 * ("Handling Overload"). Over a sliding window it counts {@code requests} (first attempts the
 * application asked for, its own refusals included) and {@code accepts} (attempts the dependency
 * accepted: it answered, well or with a permanent error), and refuses a first attempt locally with
 * probability {@code max(0, (requests − K × accepts) / (requests + 1))}.
 *
 * <p>Each criticality has its own K, so sheddable work is shed first: {@code SHEDDABLE} uses K,
 * {@code SHEDDABLE_PLUS} 1.5 K, {@code CRITICAL} 2 K and {@code CRITICAL_PLUS} 3 K. Retries and
 * hedges are never refused here (the retry budget bounds them) but what the dependency does with
 * them is counted. Cancelled attempts and attempts that never started count for nothing; the
 * throttle's own refusals count as requests (that is what holds the probability steady) and never
 * as the dependency's rejections.
 *
 * <p>The window is cut into {@link #BUCKETS} buckets; counts live under this object's lock, held
 * for a few arithmetic steps (the throttle is opt-in, and a lock is clearer than a lock-free ring).
 */
final class AdaptiveThrottle extends Limiter {
  static final int BUCKETS = 12;

  private final String name;
  private final double k;
  private final long windowNanos;
  private final long bucketNanos;
  private final TimeSource time;
  private final Gate gate = new ThrottleGate();

  // guarded by this
  private final long[] requests = new long[BUCKETS];
  private final long[] accepts = new long[BUCKETS];
  private long bucketStart;
  private int current;
  private boolean started;
  private int inFlight;

  AdaptiveThrottle(String name, double k, long windowNanos, TimeSource time) {
    this.name = name;
    this.k = k;
    this.windowNanos = windowNanos;
    this.bucketNanos = Math.max(1, windowNanos / BUCKETS);
    this.time = time;
  }

  /** The K of a criticality: sheddable work is refused first. */
  double kFor(Criticality c) {
    switch (c) {
      case SHEDDABLE:
        return k;
      case SHEDDABLE_PLUS:
        return 1.5 * k;
      case CRITICAL:
        return 2 * k;
      default:
        return 3 * k;
    }
  }

  /** Moves the ring to {@code now}, clearing the buckets that left the window; the caller holds the lock. */
  private void advance(long now) {
    if (!started) {
      started = true;
      bucketStart = now;
      return;
    }
    long steps = (now - bucketStart) / bucketNanos;
    if (steps <= 0) {
      return;
    }
    for (long i = 0; i < Math.min(steps, BUCKETS); i++) {
      current = (current + 1) % BUCKETS;
      requests[current] = 0;
      accepts[current] = 0;
    }
    bucketStart += steps * bucketNanos;
  }

  /** The probability a first attempt of criticality {@code c} is refused now. */
  synchronized double rejectionProbability(Criticality c, long now) {
    advance(now);
    return probability(c);
  }

  /** The probability at {@link Criticality#CRITICAL}, on this throttle's clock: for dashboards. */
  @Override
  public double rejectionProbability() {
    return rejectionProbability(Criticality.CRITICAL, time.nanoTime());
  }

  private double probability(Criticality c) {
    long r = 0;
    long a = 0;
    for (int i = 0; i < BUCKETS; i++) {
      r += requests[i];
      a += accepts[i];
    }
    return Math.max(0, (r - kFor(c) * a) / (r + 1));
  }

  synchronized boolean admit(boolean first, Criticality c, long now) {
    advance(now);
    if (first) {
      double p = probability(c);
      requests[current]++;
      if (p > 0 && time.random().nextDouble() < p) {
        return false;
      }
    }
    inFlight++;
    return true;
  }

  synchronized void ended(boolean first, int how, long now) {
    advance(now);
    inFlight = Math.max(0, inFlight - 1);
    if (how == Gate.CANCELLED || how == Gate.NOT_STARTED) {
      if (first && requests[current] > 0) {
        requests[current]--; // it says nothing about the dependency: as if it had not been asked
      }
      return;
    }
    if (how == Gate.SUCCEEDED || how == Gate.REJECTED) {
      accepts[current]++;
    }
  }

  long retryAfterNanos(long now) {
    synchronized (this) {
      return Math.max(1, bucketStart + bucketNanos - now);
    }
  }

  @Override
  public String name() {
    return name;
  }

  /** A throttle bounds no count: its limit is the largest int. */
  @Override
  public int limit() {
    return Integer.MAX_VALUE;
  }

  @Override
  public synchronized int inFlight() {
    return inFlight;
  }

  /** Attempts it would admit right now: unbounded while it refuses nothing, else 0. */
  @Override
  public int available() {
    return rejectionProbability() > 0 ? 0 : Integer.MAX_VALUE;
  }

  double k() {
    return k;
  }

  long windowNanos() {
    return windowNanos;
  }

  @Override
  Gate gate() {
    return gate;
  }

  @Override
  Limiter copy(String name) {
    return new AdaptiveThrottle(name, k, windowNanos, time);
  }

  @Override
  public String toString() {
    return "Limiter.throttle[" + name + ", K=" + k + ", window " + windowNanos / 1_000_000 + " ms, p="
        + String.format(java.util.Locale.ROOT, "%.3f", rejectionProbability()) + "]";
  }

  /** The core's view. */
  private final class ThrottleGate extends Gate {
    @Override
    StopReason refusal() {
      return StopReason.LIMITED;
    }

    @Override
    boolean tryAdmit(AttemptRecord attempt, int index, long now) {
      boolean first = attempt.kind == AttemptRecord.FIRST;
      if (admit(first, attempt.criticality, now)) {
        return true;
      }
      attempt.retryAfterNanos = retryAfterNanos(now);
      return false;
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      ended(attempt.kind == AttemptRecord.FIRST, how, now);
    }

    @Override
    public String toString() {
      return AdaptiveThrottle.this.toString();
    }
  }
}
