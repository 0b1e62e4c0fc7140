package dev.quell;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The token bucket behind {@link Limiter#rate}.
 *
 * <p>The whole bucket is one long, {@code emptyAt}: the instant at which the bucket is (or was)
 * empty, so that it holds {@code min(burst, (now - emptyAt) / interval)} tokens at {@code now}
 * (the "theoretical arrival time" of the generic cell rate algorithm). Taking a token moves
 * {@code emptyAt} forward by one interval from {@code max(emptyAt, now - burst·interval)}; that
 * clamp is the bucket's capacity, so time spent full is never banked. A token is available at once
 * only if the new {@code emptyAt} is not after {@code now}: there is no pre-payment, and a reserved
 * future token ({@code emptyAt} after {@code now}) makes the reserving attempt wait, not the next
 * caller. Refill is lazy and exact — it is implied by the clock — and every change is a single CAS,
 * so admission under contention is exactly what some sequential order would give.
 *
 * <p>Time is integer nanoseconds and the interval between permits is rounded up to a whole
 * nanosecond, so the limiter never admits more than {@code burst + perSecond × elapsed}; it admits
 * at least 99.9% of that at a million a second or less. Only differences of clock readings are
 * used, so readings near {@code Long.MIN_VALUE} or {@code Long.MAX_VALUE} work.
 */
final class RateLimiter extends Limiter {
  static final double MAX_PER_SECOND = 1e9;
  /** A full refill may take at most 100 years, so that every span and wait fits a long with room to spare. */
  static final double MAX_REFILL_NANOS = 100.0 * 365 * 24 * 3600 * 1e9;

  private final String name;
  private final double perSecond;
  private final int burst;
  private final long intervalNanos;
  private final long spanNanos;
  private final long maxWaitNanos;
  private final TimeSource time;

  private final AtomicLong emptyAt;
  private final LongAdder inFlight = new LongAdder();
  private final Gate gate = new RateGate();

  RateLimiter(String name, double perSecond, int burst, long maxWaitNanos, TimeSource time) {
    this.name = name;
    this.perSecond = perSecond;
    this.burst = burst;
    this.intervalNanos = interval(perSecond);
    this.spanNanos = intervalNanos * burst;
    this.maxWaitNanos = maxWaitNanos;
    this.time = time;
    this.emptyAt = new AtomicLong(time.nanoTime() - spanNanos); // starts full
  }

  static long interval(double perSecond) {
    return Math.max(1, (long) Math.ceil(1e9 / perSecond));
  }

  /** The time a full refill takes, as a double so that absurd parameters can be checked without overflow. */
  static double refillNanos(double perSecond, int burst) {
    return Math.max(1, Math.ceil(1e9 / perSecond)) * burst;
  }

  /**
   * Takes one token at {@code now} if one is there, or reserves the next one if the wait for it
   * is at most {@code maxWait} and shorter than {@code remaining}. Returns the wait (0 = at once),
   * or {@code -(time to the next token) - 1} when refused.
   */
  long acquire(long now, long remaining) {
    while (true) {
      long empty = emptyAt.get();
      long base = now - empty > spanNanos ? now - spanNanos : empty;
      long next = base + intervalNanos;
      long wait = next - now;
      if (wait > 0 && (wait > maxWaitNanos || wait >= remaining)) {
        return -wait - 1;
      }
      if (emptyAt.compareAndSet(empty, next)) {
        return Math.max(0, wait);
      }
    }
  }

  /** Gives back one token taken for an attempt that never started; never above a full bucket. */
  void refund(long now) {
    while (true) {
      long empty = emptyAt.get();
      if (now - empty >= spanNanos) {
        return; // full already: the token would overflow the bucket
      }
      long back = empty - intervalNanos;
      long refunded = now - back > spanNanos ? now - spanNanos : back;
      if (emptyAt.compareAndSet(empty, refunded)) {
        return;
      }
    }
  }

  /** Whole tokens in the bucket at {@code now}. */
  int tokensAt(long now) {
    long filled = now - emptyAt.get();
    if (filled <= 0) {
      return 0;
    }
    return (int) Math.min(burst, filled / intervalNanos);
  }

  /** Nanoseconds until the next token at {@code now}: 0 if one is there. */
  long nanosToNextToken(long now) {
    long empty = emptyAt.get();
    long base = now - empty > spanNanos ? now - spanNanos : empty;
    return Math.max(0, base + intervalNanos - now);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int limit() {
    return burst;
  }

  @Override
  public int inFlight() {
    return (int) Math.max(0, Math.min(Integer.MAX_VALUE, inFlight.sum()));
  }

  @Override
  public int available() {
    return tokensAt(time.nanoTime());
  }

  long intervalNanos() {
    return intervalNanos;
  }

  @Override
  Gate gate() {
    return gate;
  }

  @Override
  public String toString() {
    return "Limiter.rate[" + name + ", " + perSecond + "/s, burst=" + burst
        + (maxWaitNanos > 0 ? ", maxWait=" + java.time.Duration.ofNanos(maxWaitNanos) : "")
        + ", available=" + available() + "]";
  }

  /** The core's view: reserve on admit, refund an attempt that never started. */
  private final class RateGate extends Gate {
    @Override
    StopReason refusal() {
      return StopReason.LIMITED;
    }

    @Override
    boolean tryAdmit(AttemptRecord attempt, int index, long now) {
      // the core sets timeoutNanos to the time left before the deadline before it asks the gates
      long got = acquire(now, attempt.timeoutNanos);
      if (got < 0) {
        attempt.retryAfterNanos = -(got + 1);
        return false;
      }
      attempt.waitNanos = got;
      inFlight.increment();
      return true;
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      inFlight.decrement();
      if (how == NOT_STARTED) {
        refund(now);
      }
    }

    @Override
    long maxWaitNanos() {
      return maxWaitNanos;
    }

    @Override
    public String toString() {
      return RateLimiter.this.toString();
    }
  }
}
