package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Envoy's retry budget, behind {@link RetryBudget#concurrent}: retries and hedges in flight at most
 * {@code percent} of the calls in flight, never fewer than {@code minimum}.
 *
 * <p>One long holds both counts — calls in flight (high half) and funded retries and hedges in
 * flight (low half) — so a spend checks the allowance against the very counts it changes, in one
 * CAS. The percentage is fixed point (millionths), so {@code 0.29 × 100} is exactly 29.
 */
final class ConcurrentAllowance extends RetryBudget {
  static final long MICROS = 1_000_000L;
  private static final long ONE_CALL = 1L << 32;

  private final String name;
  private final double percent;
  private final long percentMicros;
  private final int minimum;
  private final AtomicLong state = new AtomicLong();

  @Override
  RetryBudget named(String name) {
    return new ConcurrentAllowance(name, percent, minimum);
  }

  ConcurrentAllowance(String name, double percent, int minimum) {
    new Problems()
        .require(Double.isFinite(percent) && percent > 0 && percent <= 1, "concurrent budget percent", percent,
            "must be in (0, 1] (0.2 means 20%); to turn the budget off use RetryBudget.NONE")
        .require(minimum >= 0 && minimum <= 1_000_000, "concurrent budget minimum", minimum,
            "must be in [0, 1000000]")
        .throwIfAny();
    this.name = name;
    this.percent = percent;
    this.percentMicros = Math.max(1, Math.round(percent * MICROS));
    this.minimum = minimum;
  }

  static int callsOf(long s) {
    return (int) (s >>> 32);
  }

  static int additionalOf(long s) {
    return (int) s;
  }

  /** Retries and hedges allowed in flight when {@code calls} calls are. */
  long allowance(int calls) {
    return Math.max(minimum, calls * percentMicros / MICROS);
  }

  /**
   * Whether one more retry at {@code criticality} fits in state {@code s}. Lower levels leave a share
   * of the allowance beyond the retry itself unspent, as every kind does: a budget with nothing in
   * flight funds every level.
   */
  private boolean fits(long s, Criticality criticality) {
    long allowed = allowance(callsOf(s));
    long room = allowed - additionalOf(s);
    return room >= 1 && room - 1 >= (long) Math.floor(criticality.reserve() * (allowed - 1));
  }

  @Override
  public boolean trySpend(Criticality criticality) {
    while (true) {
      long s = state.get();
      if (!fits(s, criticality)) {
        return false;
      }
      if (state.compareAndSet(s, s + 1)) {
        return true;
      }
    }
  }

  @Override
  boolean wouldFund(Criticality criticality) {
    return fits(state.get(), criticality);
  }

  /** 0 when a retry at this level fits now; -1 otherwise, because only traffic makes room. */
  @Override
  long retryAfterNanos(Criticality criticality) {
    return fits(state.get(), criticality) ? 0 : -1;
  }

  @Override
  void callStarted() {
    while (true) {
      long s = state.get();
      if (callsOf(s) == Integer.MAX_VALUE || state.compareAndSet(s, s + ONE_CALL)) {
        return;
      }
    }
  }

  @Override
  void callEnded() {
    while (true) {
      long s = state.get();
      if (callsOf(s) == 0 || state.compareAndSet(s, s - ONE_CALL)) {
        return; // never below zero, whatever a caller does
      }
    }
  }

  @Override
  void additionalEnded() {
    while (true) {
      long s = state.get();
      if (additionalOf(s) == 0 || state.compareAndSet(s, s - 1)) {
        return;
      }
    }
  }

  @Override
  public void deposit() {}

  @Override
  public void recordFailure() {}

  /** Zero while there is room; empty otherwise, because only traffic (calls ending or starting) makes room. */
  @Override
  public Optional<Duration> retryAfter() {
    long s = state.get();
    return allowance(callsOf(s)) - additionalOf(s) >= 1 ? Optional.of(Duration.ZERO) : Optional.empty();
  }

  @Override
  public String name() {
    return name;
  }

  /** Retries and hedges in flight over the current allowance, 0..1. */
  @Override
  public double utilization() {
    long s = state.get();
    long allowed = allowance(callsOf(s));
    if (allowed == 0) {
      return 1.0;
    }
    return Math.min(1.0, (double) additionalOf(s) / allowed);
  }

  /** Retries or hedges it would fund right now: the allowance less those in flight. */
  @Override
  public double tokens() {
    long s = state.get();
    return Math.max(0, allowance(callsOf(s)) - additionalOf(s));
  }

  /** The current allowance: {@code max(minimum, percent × calls in flight)}; it moves with traffic. */
  @Override
  public double capacity() {
    return allowance(callsOf(state.get()));
  }

  /** The share of calls in flight, for {@link Resilience#explain()}. */
  double percent() {
    return percent;
  }

  /** The retries and hedges always allowed in flight, for {@link Resilience#explain()}. */
  int minimum() {
    return minimum;
  }

  /** Calls in flight, for tests. */
  int callsInFlight() {
    return callsOf(state.get());
  }

  /** Funded retries and hedges in flight, for tests. */
  int additionalInFlight() {
    return additionalOf(state.get());
  }

  @Override
  public String toString() {
    long s = state.get();
    return "RetryBudget.concurrent[" + name + ", percent=" + percent + ", minimum=" + minimum + ", calls="
        + callsOf(s) + ", additional=" + additionalOf(s) + "/" + allowance(callsOf(s)) + "]";
  }
}
