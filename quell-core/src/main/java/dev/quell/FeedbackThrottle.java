package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * gRPC's retry throttling (gRFC A6), behind {@link RetryBudget#feedback}. Arithmetic is fixed
 * point in thousandths of a token, as grpc-java does it, so ten credits of 0.1 are exactly one
 * token. Retries are allowed while the balance is strictly above half of the maximum; spending
 * does not change the balance, outcomes do.
 */
final class FeedbackThrottle extends RetryBudget {
  private static final int MILLI = 1000;

  private final String name;
  private final int maxMilli;
  private final int thresholdMilli;
  private final int ratioMilli;
  private final AtomicInteger balance;

  @Override
  RetryBudget named(String name) {
    return new FeedbackThrottle(name, maxMilli / MILLI, ratioMilli / (double) MILLI);
  }

  FeedbackThrottle(String name, int maxTokens, double tokenRatio) {
    new Problems()
        .require(maxTokens > 0 && maxTokens <= 1_000_000, "feedback maxTokens", maxTokens,
            "must be in [1, 1000000]; to turn the budget off use RetryBudget.NONE")
        .require(Double.isFinite(tokenRatio) && tokenRatio >= 0.001 && tokenRatio <= 1_000_000,
            "feedback tokenRatio", tokenRatio, "must be a finite number of at least 0.001")
        .throwIfAny();
    this.name = name;
    this.maxMilli = maxTokens * MILLI;
    this.thresholdMilli = maxMilli / 2;
    // truncate to three decimals, as A6 specifies; the epsilon absorbs binary representation error (0.1 * 1000 = 100.00000000000001)
    this.ratioMilli = (int) (tokenRatio * MILLI + 1e-6);
    this.balance = new AtomicInteger(maxMilli);
  }

  @Override
  public boolean trySpend(Criticality criticality) {
    // Above half: every level may retry. Lower levels must also leave their reserve of the headroom.
    long needed = thresholdMilli + (long) (criticality.reserve() * (maxMilli - thresholdMilli));
    return balance.get() > needed || balance.get() >= maxMilli; // full: healthy, nothing is refused
  }

  @Override
  boolean wouldFund(Criticality criticality) {
    return trySpend(criticality); // spending charges nothing here
  }

  @Override
  long retryAfterNanos(Criticality criticality) {
    return trySpend(criticality) ? 0 : -1; // only successes refill it
  }

  @Override
  public void deposit() {
    int current;
    do {
      current = balance.get();
      if (current >= maxMilli) {
        return;
      }
    } while (!balance.compareAndSet(current, Math.min(maxMilli, current + ratioMilli)));
  }

  @Override
  public void recordFailure() {
    int current;
    do {
      current = balance.get();
      if (current <= 0) {
        return;
      }
    } while (!balance.compareAndSet(current, Math.max(0, current - MILLI)));
  }

  @Override
  public Optional<Duration> retryAfter() {
    return balance.get() > thresholdMilli ? Optional.of(Duration.ZERO) : Optional.empty();
  }

  @Override
  public String name() {
    return name;
  }

  /** 0 at full balance, 1 at or below half: the point where retries stop. */
  @Override
  public double utilization() {
    double headroom = maxMilli - thresholdMilli;
    return Math.min(1.0, Math.max(0.0, (maxMilli - balance.get()) / headroom));
  }

  @Override
  public double tokens() {
    return balance.get() / (double) MILLI;
  }

  @Override
  public double capacity() {
    return maxMilli / (double) MILLI;
  }

  /** What each success adds, as truncated to thousandths; for {@link Resilience#explain()}. */
  double tokenRatio() {
    return ratioMilli / (double) MILLI;
  }

  /** The balance in thousandths of a token, for exact tests. */
  int milliTokens() {
    return balance.get();
  }

  @Override
  public String toString() {
    return "RetryBudget.feedback[" + name + ", tokens=" + tokens() + "/" + capacity() + ", ratio=" + ratioMilli / 1000.0 + "]";
  }
}
