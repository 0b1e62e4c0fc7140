package dev.quell;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** One thing that happened during a call. Immutable. */
public final class ResilienceEvent {

  /** What happened. The types marked terminal end a call; each call has exactly one. */
  public enum Type {
    /** An attempt is starting ({@link #attempt()} is its number; hedges say {@link #isHedge()}). */
    ATTEMPT_STARTED(false),
    /** An attempt ended; {@link #verdict()} and {@link #attemptDuration()} say how. */
    ATTEMPT_ENDED(false),
    /**
     * A retry is due after {@link #delay()}, and the budget would fund it now. The budget is charged
     * when the retry starts: if other callers spend what is left meanwhile, the call ends
     * {@link #REJECTED_BY_BUDGET} instead.
     */
    RETRYING(false),
    /** Terminal: an attempt succeeded. */
    SUCCEEDED(true),
    /** Terminal: the failure was permanent, so it was not retried. */
    NOT_RETRIED(true),
    /** Terminal: every allowed attempt failed. */
    EXHAUSTED(true),
    /** Terminal: the retry budget refused the retry; the call ends after the {@link #delay()} pause. */
    REJECTED_BY_BUDGET(true),
    /** Terminal: an open circuit breaker refused the attempt. */
    REJECTED_BY_BREAKER(true),
    /** Terminal: a limiter refused the attempt. */
    LIMITED(true),
    /** Terminal: the deadline passed or the next retry could not start before it. */
    DEADLINE_EXCEEDED(true),
    /** Terminal: the caller cancelled or interrupted the call. */
    CANCELLED(true),
    /** Terminal: the process is draining and no new attempt may start. */
    DRAINING(true),
    /** A hedge attempt started. */
    HEDGE_STARTED(false),
    /** A hedge attempt's answer won the call. */
    HEDGE_WON(false),
    /** A losing attempt was cancelled and its answer discarded. */
    HEDGE_DISCARDED(false),
    /** A hedge was due but not started (budget, criticality or limits). */
    HEDGE_SUPPRESSED(false),
    /** A circuit breaker changed state while admitting or releasing this call's attempt ({@link #breakerState()}). */
    BREAKER_TRANSITION(false),
    /** This call runs inside another resilient call that also retries. */
    NESTED_RETRY(false);

    private final boolean terminal;

    Type(boolean terminal) {
      this.terminal = terminal;
    }

    /** True for the types that end a call. */
    public boolean isTerminal() {
      return terminal;
    }
  }

  private final Type type;
  private final String policy;
  private final int attempt;
  private final boolean hedge;
  private final Duration elapsed;
  private final @Nullable Duration attemptDuration;
  private final @Nullable Duration delay;
  private final @Nullable Verdict verdict;
  private final @Nullable Throwable failure;
  private final @Nullable StopReason stopReason;
  private final @Nullable RetryBudget budget;
  private final Criticality criticality;
  private final CircuitBreaker.@Nullable State breakerState;

  ResilienceEvent(Type type, String policy, int attempt, boolean hedge, Duration elapsed,
      @Nullable Duration attemptDuration, @Nullable Duration delay, @Nullable Verdict verdict,
      @Nullable Throwable failure, @Nullable StopReason stopReason, @Nullable RetryBudget budget,
      Criticality criticality, CircuitBreaker.@Nullable State breakerState) {
    this.type = type;
    this.policy = policy;
    this.attempt = attempt;
    this.hedge = hedge;
    this.elapsed = elapsed;
    this.attemptDuration = attemptDuration;
    this.delay = delay;
    this.verdict = verdict;
    this.failure = failure;
    this.stopReason = stopReason;
    this.budget = budget;
    this.criticality = criticality;
    this.breakerState = breakerState;
  }

  /** What happened. */
  public Type type() { return type; }

  /** The name of the policy. */
  public String policy() { return policy; }

  /** The attempt concerned (1 for the first); for terminal events, the number of attempts made. */
  public int attempt() { return attempt; }

  /** True when the attempt concerned is a hedge. */
  public boolean isHedge() { return hedge; }

  /** Time since the call started. */
  public Duration elapsed() { return elapsed; }

  /** For {@link Type#ATTEMPT_ENDED}: how long the attempt ran. */
  public Optional<Duration> attemptDuration() { return Optional.ofNullable(attemptDuration); }

  /** For {@link Type#RETRYING}: the backoff before the retry; for {@link Type#REJECTED_BY_BUDGET}: the guarded pause about to be served. */
  public Optional<Duration> delay() { return Optional.ofNullable(delay); }

  /** For {@link Type#ATTEMPT_ENDED} and terminal events: the verdict on the last attempt. */
  public Optional<Verdict> verdict() { return Optional.ofNullable(verdict); }

  /** The failure of the attempt concerned (or of the last attempt), if it threw. */
  public Optional<Throwable> failure() { return Optional.ofNullable(failure); }

  /** For terminal events: why the call ended. */
  public Optional<StopReason> stopReason() { return Optional.ofNullable(stopReason); }

  /** The live budget the call spends from, if any. */
  public Optional<RetryBudget> budget() { return Optional.ofNullable(budget); }

  /** The call's criticality. */
  public Criticality criticality() { return criticality; }

  /** For {@link Type#BREAKER_TRANSITION}: the state the breaker moved to. */
  public Optional<CircuitBreaker.State> breakerState() { return Optional.ofNullable(breakerState); }

  /** True for events that end a call. */
  public boolean isTerminal() { return type.isTerminal(); }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ResilienceEvent[").append(type).append(' ').append(policy)
        .append(" attempt=").append(attempt);
    if (hedge) sb.append(" hedge");
    sb.append(" elapsed=").append(elapsed.toMillis()).append("ms");
    if (delay != null) sb.append(" delay=").append(delay.toMillis()).append("ms");
    if (verdict != null) sb.append(" verdict=").append(verdict);
    if (stopReason != null) sb.append(" stop=").append(stopReason);
    if (breakerState != null) sb.append(" breaker=").append(breakerState);
    if (failure != null) sb.append(" failure=").append(failure);
    return sb.append(']').toString();
  }
}
