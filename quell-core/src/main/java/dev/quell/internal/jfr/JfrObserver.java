package dev.quell.internal.jfr;

import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.TimeSource;
import dev.quell.Verdict;
import dev.quell.internal.CallObserver;
import dev.quell.internal.TelemetryNames;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Turns one policy's calls, as the core tells its observers ({@link CallObserver}), into Flight
 * Recorder events: no rule of the core is read anywhere else. One per policy instance, made when a
 * recording first wants its calls; it holds the policy's clock, so that events carry the time the
 * policy sees (simulated time in quell-sim).
 */
final class JfrObserver implements CallObserver {
  private final String key;
  private final TimeSource time;
  private final String limiters;

  JfrObserver(Resilience policy) {
    String name = policy.name();
    int colon = name.indexOf(':');
    this.key = colon < 0 ? "" : name.substring(colon + 1);
    this.time = policy.timeSource();
    List<String> names = new ArrayList<>();
    for (Limiter l : policy.limiters()) {
      names.add(TelemetryNames.limiterKind(l) + ":" + l.name());
    }
    this.limiters = String.join(", ", names);
  }

  @Override
  public void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge) {
    // recorded when it ends, with its latency
  }

  @Override
  public void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
      @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
    try {
      AttemptEvent e = new AttemptEvent();
      if (e.isEnabled()) {
        e.policy = policy;
        e.key = key;
        e.attempt = attempt;
        e.kind = TelemetryNames.kindName(TelemetryNames.kind(attempt, hedge));
        e.latency = durationNanos;
        e.outcome = failure == null ? "returned" : failure.getClass().getName();
        e.verdict = verdict == null ? "CANCELLED" : verdict.kind().name();
        e.criticality = criticality.name();
        e.clock = time.nanoTime();
        e.commit();
      }
    } catch (RuntimeException | LinkageError e) {
      // an event must never break a call
    }
  }

  @Override
  public void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos) {
    // the retry's attempt event says it all
  }

  @Override
  public void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
      @Nullable Verdict verdict, long elapsedNanos) {
    try {
      CallEvent e = new CallEvent();
      if (e.isEnabled()) {
        e.policy = policy;
        e.key = key;
        e.attempts = attempts;
        e.stopReason = reason.name();
        e.verdict = verdict == null ? "" : verdict.kind().name();
        e.elapsed = elapsedNanos;
        e.criticality = criticality.name();
        e.clock = time.nanoTime();
        e.commit();
      }
      if (reason == StopReason.BUDGET_EXHAUSTED) {
        BudgetRefusalEvent b = new BudgetRefusalEvent();
        if (b.isEnabled()) {
          b.policy = policy;
          b.key = key;
          b.budget = budget.name();
          b.attempts = attempts;
          b.utilization = budget.utilization();
          b.tokens = budget.tokens();
          b.commit();
        }
      } else if (reason == StopReason.LIMITED) {
        LimiterRefusalEvent l = new LimiterRefusalEvent();
        if (l.isEnabled()) {
          l.policy = policy;
          l.key = key;
          l.limiters = limiters;
          l.attempts = attempts;
          l.commit();
        }
      }
    } catch (RuntimeException | LinkageError e) {
      // an event must never break a call
    }
  }

  /** Records a breaker's move; see {@link QuellJfr#breakerMoved}. */
  static void breakerMoved(String breaker, CircuitBreaker.State state, String cause) {
    try {
      BreakerTransitionEvent e = new BreakerTransitionEvent();
      if (e.isEnabled()) {
        e.breaker = breaker;
        e.state = state.name();
        e.cause = cause;
        e.commit();
      }
    } catch (RuntimeException | LinkageError e) {
      // an event must never break the breaker
    }
  }
}
