package dev.quell.opentelemetry.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.internal.BudgetTracker;
import dev.quell.internal.CallObserver;
import dev.quell.internal.CallObservers;
import dev.quell.internal.Internal;
import dev.quell.internal.PolicyTable;
import dev.quell.internal.TelemetryNames;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import org.jspecify.annotations.Nullable;

/**
 * The listener behind {@code QuellOpenTelemetry.listener}. Metrics are recorded with attribute sets
 * built once per policy name and picked by enum ordinal, so recording allocates nothing of ours.
 * Span events go on {@link Span#current()} and only when it is recording, so an unsampled or absent
 * trace costs one context lookup.
 */
@Internal
public final class OtelListener implements ResilienceListener, CallObserver {
  /**
   * The most policy names given attributes of their own (the SDK's default cardinality limit per
   * instrument); past it, new names share {@value #OVERFLOW_POLICY}. Names of scope keys are retired
   * when their budgets are collected; this is the safety net for scopes over a shared budget.
   */
  static final int MAX_POLICY_NAMES = PolicyTable.MAX_NAMES;
  static final String OVERFLOW_POLICY = PolicyTable.OVERFLOW_NAME;

  private static final double NANOS_PER_SECOND = 1e9;

  private final OtelBinding binding;
  private final PolicyTable<PolicyAttributes> byPolicy = new PolicyTable<>(PolicyAttributes::new);

  OtelListener(OtelBinding binding) {
    this.binding = binding;
  }

  /** Forgets the attributes of a policy name whose policies are gone (their budgets were collected). */
  void retire(String policy) {
    byPolicy.remove(policy);
  }

  /** Number of policy names with attributes now. */
  public int policyNames() {
    return byPolicy.size();
  }

  @Override
  public void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge) {
    binding.attempts.add(1, byPolicy.get(policy).kinds[TelemetryNames.kind(attempt, hedge)]);
  }

  @Override
  public void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
      @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
    PolicyAttributes a = byPolicy.get(policy);
    int v = TelemetryNames.verdict(verdict);
    double seconds = Math.max(0, durationNanos) / NANOS_PER_SECOND;
    binding.attemptDuration.record(seconds, a.verdicts[v]);
    Span span = Span.current();
    if (span.isRecording()) {
      var event = Attributes.builder().put(Names.POLICY, policy).put(Names.ATTEMPT, attempt)
          .put(Names.KIND, TelemetryNames.kindName(TelemetryNames.kind(attempt, hedge)))
          .put(Names.VERDICT, TelemetryNames.verdictName(v)).put(Names.DURATION, seconds);
      if (failure != null) {
        event.put(Names.EXCEPTION_TYPE, failure.getClass().getName());
      }
      span.addEvent(Names.EVENT_ATTEMPT, event.build());
    }
  }

  @Override
  public void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos) {
    Span span = Span.current();
    if (span.isRecording()) {
      span.addEvent(Names.EVENT_RETRY, Attributes.of(Names.POLICY, policy, Names.ATTEMPT, (long) attempt + 1,
          Names.DELAY, Math.max(0, delayNanos) / NANOS_PER_SECOND));
    }
  }

  @Override
  public void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
      @Nullable Verdict verdict, long elapsedNanos) {
    PolicyAttributes a = byPolicy.get(policy);
    Attributes outcome = a.outcomes[reason.ordinal()];
    binding.calls.add(1, outcome);
    binding.callDuration.record(Math.max(0, elapsedNanos) / NANOS_PER_SECOND, outcome);
    boolean rejection = TelemetryNames.isRejection(reason);
    if (rejection) {
      binding.rejections.add(1, outcome);
    }
    Span span = Span.current();
    if (span.isRecording()) {
      if (rejection) {
        span.addEvent(Names.EVENT_REJECTED, Attributes.of(Names.POLICY, policy, Names.OUTCOME, reason.name(),
            Names.BUDGET, budget.name(), Names.UTILIZATION, budget.utilization()));
      }
      span.addEvent(Names.EVENT_CALL, Attributes.of(Names.POLICY, policy, Names.OUTCOME, reason.name(),
          Names.ATTEMPTS_MADE, (long) attempts, Names.DURATION, Math.max(0, elapsedNanos) / NANOS_PER_SECOND));
    }
    binding.callEnded(policy, budget);
  }

  @Override
  public void hedged(String policy, RetryBudget budget, Criticality criticality, ResilienceEvent.Type type,
      int attempt) {
    int hedge = TelemetryNames.hedge(type);
    if (hedge < 0) {
      return;
    }
    binding.hedges.add(1, byPolicy.get(policy).hedges[hedge]);
    Span span = Span.current();
    if (span.isRecording()) {
      span.addEvent(Names.EVENT_HEDGE, Attributes.of(Names.POLICY, policy, Names.HEDGE, TelemetryNames.hedgeName(hedge),
          Names.ATTEMPT, (long) attempt));
    }
  }

  @Override
  public void breakerMoved(String policy, @Nullable CircuitBreaker breaker, CircuitBreaker.State state, int attempt) {
    // the breaker's instruments read its own metrics; the span tells where in the trace it moved
    Span span = Span.current();
    if (span.isRecording()) {
      span.addEvent(Names.EVENT_BREAKER, Attributes.of(Names.POLICY, policy, Names.BREAKER,
          breaker == null ? "" : breaker.name(), Names.STATE, state.name(), Names.ATTEMPT, (long) attempt));
    }
  }

  @Override
  public void policyCalled(Resilience policy) {
    binding.policyCalled(policy);
  }

  @Override
  public void onEvent(ResilienceEvent event) {
    CallObservers.dispatch(event, this);
  }

  /** The budgets this listener's OpenTelemetry instance reports. */
  public BudgetTracker<Attributes> budgets() {
    return binding.budgets();
  }

  @Override
  public String toString() {
    return "QuellOpenTelemetry.listener";
  }

  /** Attribute sets of one policy name, built once. */
  static final class PolicyAttributes {
    private static final StopReason[] REASONS = StopReason.values();

    final Attributes[] kinds = new Attributes[TelemetryNames.KINDS];
    final Attributes[] verdicts = new Attributes[TelemetryNames.VERDICTS];
    final Attributes[] outcomes = new Attributes[REASONS.length];
    final Attributes[] hedges = new Attributes[TelemetryNames.HEDGE_EVENTS];

    PolicyAttributes(String policy) {
      for (int i = 0; i < kinds.length; i++) {
        kinds[i] = Attributes.of(Names.POLICY, policy, Names.KIND, TelemetryNames.kindName(i));
      }
      for (int i = 0; i < verdicts.length; i++) {
        verdicts[i] = Attributes.of(Names.POLICY, policy, Names.VERDICT, TelemetryNames.verdictName(i));
      }
      for (int i = 0; i < hedges.length; i++) {
        hedges[i] = Attributes.of(Names.POLICY, policy, Names.HEDGE, TelemetryNames.hedgeName(i));
      }
      for (int i = 0; i < outcomes.length; i++) {
        outcomes[i] = Attributes.of(Names.POLICY, policy, Names.OUTCOME, REASONS[i].name());
      }
    }
  }
}
