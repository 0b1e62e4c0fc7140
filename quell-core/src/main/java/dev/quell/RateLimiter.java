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
 * so admission under contention is exactly what some sequential order would give. Starts conform to
 * the bucket: in any window of length {@code w}, at most {@code burst + perSecond × w} admitted
 * attempts start, refunds included (see {@link #refund}).
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
   * Takes one token at {@code now} if one is there, or reserves the next one if the wait for it is
   * at most {@code maxWait} and shorter than {@code attempt.timeoutNanos} (the time left before the
   * call's deadline). Admitted: sets the attempt's wait and keeps the bucket's new {@code emptyAt}
   * in its mark, for a refund. Refused: sets its Retry-After to the wait for the next token.
   */
  boolean acquire(AttemptRecord attempt, int index, long now) {
    long remaining = attempt.timeoutNanos;
    while (true) {
      long empty = emptyAt.get();
      long base = now - empty > spanNanos ? now - spanNanos : empty;
      long next = base + intervalNanos;
      long wait = next - now;
      if (wait > 0 && (wait > maxWaitNanos || wait >= remaining)) {
        attempt.retryAfterNanos = wait;
        return false;
      }
      if (emptyAt.compareAndSet(empty, next)) {
        attempt.waitNanos = Math.max(0, wait);
        long[] marks = attempt.marks;
        if (marks != null && index < marks.length) {
          marks[index] = next;
        }
        return true;
      }
    }
  }

  /**
   * Gives back the token of an admission that never started, whose {@code mark} is the
   * {@code emptyAt} it set. Only the latest admission can be undone: once another attempt has
   * taken a token after it, the later one's slot was planned around this one, and handing the
   * token back would let two attempts share a slot (or, after a refill, overfill the bucket), so
   * the token is simply spent. The limiter errs on the side of sending less.
   */
  boolean refund(long mark) {
    return emptyAt.compareAndSet(mark, mark - intervalNanos);
  }

  /** Whole tokens in the bucket at {@code now}. */
  int tokensAt(long now) {
    long filled = now - emptyAt.get();
    if (filled <= 0) {
      return 0;
    }
    return (int) Math.min(burst, filled / intervalNanos);
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

  /** The sustained rate, for {@link Resilience#explain()}. */
  double perSecond() {
    return perSecond;
  }

  @Override
  Gate gate() {
    return gate;
  }

  /** The clock it refills from: the core's {@code now} must come from the same one. */
  TimeSource timeSource() {
    return time;
  }

  @Override
  Limiter copy(String name) {
    return new RateLimiter(name, perSecond, burst, maxWaitNanos, time);
  }

  @Override
  public String toString() {
    return "Limiter.rate[" + name + ", " + perSecond + "/s, burst=" + burst
        + (maxWaitNanos > 0 ? ", maxWait=" + java.time.Duration.ofNanos(maxWaitNanos) : "")
        + ", available=" + available() + "]";
  }

  /** The core's view: reserve on admit, give back the token of an attempt that never started. */
  private final class RateGate extends Gate {
    @Override
    StopReason refusal() {
      return StopReason.LIMITED;
    }

    @Override
    boolean tryAdmit(AttemptRecord attempt, int index, long now) {
      if (!acquire(attempt, index, now)) {
        return false;
      }
      inFlight.increment();
      return true;
    }

    @Override
    boolean needsEndTime() {
      return false; // a release only gives back what was not used
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      inFlight.decrement();
      long[] marks = attempt.marks;
      if (how == NOT_STARTED && marks != null && index < marks.length) {
        refund(marks[index]);
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
