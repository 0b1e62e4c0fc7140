package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Optional;

/**
 * A fixed number of retries per fixed window, behind {@link RetryBudget#replenishing}. Spending
 * happens only on the retry path, which is cold, so a lock keeps the window roll-over and the
 * charge obviously atomic.
 */
final class ReplenishingAllowance extends RetryBudget {
  private final String name;
  private final int maxTokens;
  private final long periodNanos;
  private final long origin;
  private final TimeSource time;

  private long window;
  private int remaining;

  @Override
  RetryBudget named(String name) {
    return new ReplenishingAllowance(name, maxTokens, Duration.ofNanos(periodNanos), time);
  }

  ReplenishingAllowance(String name, int maxTokens, Duration period, TimeSource time) {
    new Problems()
        .require(maxTokens > 0, "replenishing maxTokens", maxTokens, "must be at least 1; to turn the budget off use RetryBudget.NONE")
        .positive("replenishing period", period)
        .throwIfAny();
    this.name = name;
    this.maxTokens = maxTokens;
    this.periodNanos = period == null ? 1 : Math.max(1, Durations.toNanosSaturated(period));
    this.time = time;
    this.origin = time.nanoTime();
    this.remaining = maxTokens;
  }

  /** Tokens a retry at {@code criticality} must leave: its reserve of all but the last token, so a full allowance funds every level. */
  private int reserve(Criticality criticality) {
    return (int) Math.floor(criticality.reserve() * (maxTokens - 1));
  }

  @Override
  public synchronized boolean trySpend(Criticality criticality) {
    roll();
    if (remaining - 1 < reserve(criticality)) {
      return false;
    }
    remaining--;
    return true;
  }

  @Override
  synchronized boolean wouldFund(Criticality criticality) {
    roll();
    return remaining - 1 >= reserve(criticality);
  }

  @Override
  synchronized long retryAfterNanos(Criticality criticality) {
    roll();
    if (remaining - 1 >= reserve(criticality)) {
      return 0;
    }
    return untilNextWindow();
  }

  /** Nanoseconds until the next window refills the allowance, saturated. */
  private long untilNextWindow() {
    long elapsed = time.nanoTime() - origin;
    long nextStart = window >= Long.MAX_VALUE / periodNanos - 1 ? Long.MAX_VALUE : (window + 1) * periodNanos;
    return Math.max(0, nextStart - elapsed);
  }

  @Override
  public void deposit() {}

  @Override
  public void recordFailure() {}

  @Override
  public synchronized Optional<Duration> retryAfter() {
    roll();
    return Optional.of(Duration.ofNanos(remaining > 0 ? 0 : untilNextWindow()));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public synchronized double utilization() {
    roll();
    return 1.0 - (double) remaining / maxTokens;
  }

  @Override
  public synchronized double tokens() {
    roll();
    return remaining;
  }

  @Override
  public double capacity() {
    return maxTokens;
  }

  /** The window, for {@link Resilience#explain()}. */
  Duration period() {
    return Duration.ofNanos(periodNanos);
  }

  private void roll() {
    long current = Math.max(0, (time.nanoTime() - origin) / periodNanos);
    if (current > window) {
      window = current;
      remaining = maxTokens;
    }
  }

  @Override
  public String toString() {
    return "RetryBudget.replenishing[" + name + ", " + maxTokens + " per " + Duration.ofNanos(periodNanos) + "]";
  }
}
