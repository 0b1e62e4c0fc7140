package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The token bucket behind {@link RetryBudget#of} and {@link RetryBudget#shared}.
 *
 * <p>Balance is kept in micro-tokens in one {@link AtomicLong}; every change to it is a CAS that
 * clamps to {@code [0, capacity]}, so a check and its charge are one step. Deposits sit on every
 * call's success path and read no clock: when the bucket is full — the healthy case — a deposit is
 * a single volatile read that changes nothing, otherwise one CAS. (An earlier version counted
 * deposits in a striped counter folded in later; Lincheck showed that folding late lets a deposit
 * land after a spend that began after it, escaping the cap, so it was not linearizable.) The floor
 * is credited lazily: whoever advances {@code refilledAt} by CAS credits exactly that interval, so
 * no interval is counted twice.
 */
final class TokenBucket extends RetryBudget {
  static final long MICROS = 1_000_000L;

  private final String name;
  private final double fraction;
  private final double minimumPerSecond;
  private final TimeSource time;
  private final long capacityMicros;
  private final long depositMicros;
  private final double microsPerNano;

  private final AtomicLong balance;
  private final AtomicLong refilledAt;
  final AtomicBoolean warnedAboutParameters = new AtomicBoolean();

  TokenBucket(String name, double fraction, double minimumPerSecond, TimeSource time) {
    this(name, fraction, minimumPerSecond, Math.max(1.0, 10.0 * minimumPerSecond), time);
  }

  /** A bucket holding at most {@code capacityTokens} (at least 1), whatever its floor. */
  TokenBucket(String name, double fraction, double minimumPerSecond, double capacityTokens, TimeSource time) {
    validate(fraction, minimumPerSecond);
    this.name = name;
    this.fraction = fraction;
    this.minimumPerSecond = minimumPerSecond;
    this.time = time;
    this.capacityMicros = (long) Math.min(capacityTokens * MICROS, Long.MAX_VALUE / 4.0);
    this.depositMicros = Math.max(1, Math.round(fraction * MICROS));
    this.microsPerNano = minimumPerSecond * MICROS / 1e9;
    this.balance = new AtomicLong(capacityMicros);
    this.refilledAt = new AtomicLong(time.nanoTime());
  }

  static void validate(double fraction, double minimumPerSecond) {
    new Problems()
        .require(Double.isFinite(fraction) && fraction > 0 && fraction <= 1, "budget fraction", fraction,
            "must be in (0, 1]; to turn the budget off use RetryBudget.NONE")
        .require(Double.isFinite(minimumPerSecond) && minimumPerSecond >= 0 && minimumPerSecond <= 1e9,
            "budget minimumPerSecond", minimumPerSecond,
            "must be a finite number of at least 0; to turn the budget off use RetryBudget.NONE")
        .throwIfAny();
  }

  @Override
  RetryBudget named(String name) {
    if (isShared(this)) {
      return this; // a shared budget's name is its identity
    }
    return new TokenBucket(name, fraction, minimumPerSecond, (double) capacityMicros / MICROS, time);
  }

  boolean hasParameters(double fraction, double minimumPerSecond) {
    return Double.compare(fraction, this.fraction) == 0 && Double.compare(minimumPerSecond, this.minimumPerSecond) == 0;
  }

  double fraction() {
    return fraction;
  }

  double minimumPerSecond() {
    return minimumPerSecond;
  }

  /**
   * The balance a retry at {@code criticality} needs: one token, plus the criticality's reserve of
   * the rest of the capacity. A full bucket funds every level (healthy: nothing is refused), even
   * a bucket that holds a single token.
   */
  private long required(Criticality criticality) {
    return MICROS + (long) (criticality.reserve() * (capacityMicros - MICROS));
  }

  @Override
  public boolean trySpend(Criticality criticality) {
    return spendAt(criticality, time.nanoTime());
  }

  @Override
  boolean trySpendAt(Criticality criticality, long now, TimeSource clock) {
    return spendAt(criticality, clock == time ? now : time.nanoTime());
  }

  private boolean spendAt(Criticality criticality, long now) {
    catchUp(now);
    long floor = required(criticality);
    while (true) {
      long current = balance.get();
      if (current < floor) {
        return false;
      }
      if (balance.compareAndSet(current, current - MICROS)) {
        return true;
      }
    }
  }

  @Override
  boolean wouldFund(Criticality criticality) {
    return wouldFundAt(criticality, time.nanoTime(), time);
  }

  @Override
  boolean wouldFundAt(Criticality criticality, long now, TimeSource clock) {
    catchUp(clock == time ? now : time.nanoTime());
    return balance.get() >= required(criticality);
  }

  @Override
  long retryAfterNanos(Criticality criticality) {
    return retryAfterNanosAt(criticality, time.nanoTime(), time);
  }

  @Override
  long retryAfterNanosAt(Criticality criticality, long now, TimeSource clock) {
    catchUp(clock == time ? now : time.nanoTime());
    long missing = required(criticality) - balance.get();
    if (missing <= 0) {
      return 0;
    }
    if (microsPerNano <= 0) {
      return -1;
    }
    double nanos = Math.ceil(missing / microsPerNano);
    return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) nanos;
  }

  @Override
  public void deposit() {
    if (balance.get() < capacityMicros) { // full is the common case: nothing to write, no contention
      add(depositMicros);
    }
  }

  @Override
  public void recordFailure() {}

  @Override
  public Optional<Duration> retryAfter() {
    long nanos = retryAfterNanos(Criticality.CRITICAL);
    return nanos < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(nanos));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public double utilization() {
    catchUp(time.nanoTime());
    return 1.0 - (double) balance.get() / capacityMicros;
  }

  @Override
  public double tokens() {
    catchUp(time.nanoTime());
    return (double) balance.get() / MICROS;
  }

  @Override
  public double capacity() {
    return (double) capacityMicros / MICROS;
  }

  /**
   * Credits the floor's refill up to {@code now}, a reading of this bucket's clock. A reading older
   * than the last catch-up (another thread's, taken later, got there first) credits nothing.
   */
  private void catchUp(long now) {
    if (microsPerNano > 0) {
      long last = refilledAt.get();
      long elapsed = now - last;
      if (elapsed > 0) {
        long credit = (long) (elapsed * microsPerNano);
        if (balance.get() >= capacityMicros) {
          refilledAt.compareAndSet(last, now); // full: time passing adds nothing and must not be banked
        } else if (credit > 0) {
          // advance only by the time the whole micro-tokens stand for, so fractions are never lost
          long used = Math.min(elapsed, (long) Math.ceil(credit / microsPerNano));
          if (refilledAt.compareAndSet(last, last + used)) {
            add(credit);
          }
        }
      }
    }
  }

  private void add(long micros) {
    if (micros <= 0) {
      return;
    }
    while (true) {
      long current = balance.get();
      long next = current >= capacityMicros - micros ? capacityMicros : current + micros;
      if (next == current || balance.compareAndSet(current, next)) {
        return;
      }
    }
  }

  @Override
  public String toString() {
    return "RetryBudget[" + name + ", fraction=" + fraction + ", minimumPerSecond=" + minimumPerSecond
        + ", tokens=" + tokens() + "/" + capacity() + "]";
  }
}
