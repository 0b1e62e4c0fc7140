package dev.quell.micrometer.internal;

import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.internal.CallObserver;
import dev.quell.internal.CallObservers;
import dev.quell.internal.Internal;
import dev.quell.internal.PolicyTable;
import dev.quell.internal.TelemetryNames;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The listener behind {@code QuellMicrometer.listener}. The core calls it through the primitive
 * {@link CallObserver} methods, so recording a call allocates nothing of ours: meters are looked up
 * by policy name (the last one is remembered by identity) and then by enum ordinal. {@link #onEvent}
 * does the same from an event object, for callers that only speak {@link ResilienceListener}.
 *
 * <p>Breaker transitions need nothing here: the breaker's function counters read its own metrics.
 *
 * <p>Meters are kept per policy name, so the number of policy names must be bounded (they are
 * configuration). Budgets are watched weakly through the registry's {@link RegistryBinding}.
 */
@Internal
public final class MicrometerListener implements ResilienceListener, CallObserver {
  /**
   * The most policy names given meters of their own; past it, new names share the name
   * {@value #OVERFLOW_POLICY}. A safety net: names come and go with scope keys, and their meters are
   * retired when their budgets are collected, but a scope over a shared budget leaves no such trace.
   */
  static final int MAX_POLICY_NAMES = PolicyTable.MAX_NAMES;
  static final String OVERFLOW_POLICY = PolicyTable.OVERFLOW_NAME;

  private final MeterRegistry registry;
  private final RegistryBinding binding;
  private final RegistryBinding.Gauges gauges;
  private final PolicyTable<PolicyMeters> byPolicy;

  MicrometerListener(MeterRegistry registry, RegistryBinding binding) {
    this.registry = registry;
    this.binding = binding;
    this.gauges = binding.gauges(registry);
    this.byPolicy = new PolicyTable<>(p -> new PolicyMeters(p, registry));
  }

  /**
   * Drops the meters of {@code policy}: called when every budget that policy name owned was collected,
   * which means the policies of that name are gone (a scope key was forgotten, a policy rebuilt under
   * another name). A policy of that name that shows up again starts new meters from zero, which
   * Prometheus' rate() reads as a counter reset.
   */
  void retire(String policy) {
    PolicyMeters m = byPolicy.remove(policy);
    if (m != null) {
      m.retire();
    }
  }

  /** Number of policy names with meters now. */
  int policyNames() {
    return byPolicy.size();
  }

  @Override
  public void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge) {
    byPolicy.get(policy).attempts(TelemetryNames.kind(attempt, hedge)).increment();
  }

  @Override
  public void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
      @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
    byPolicy.get(policy).attemptDuration(TelemetryNames.verdict(verdict))
        .record(Math.max(0, durationNanos), TimeUnit.NANOSECONDS);
  }

  @Override
  public void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos) {
    // counted when the retry starts, as an attempt of kind "retry"
  }

  @Override
  public void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
      @Nullable Verdict verdict, long elapsedNanos) {
    PolicyMeters m = byPolicy.get(policy);
    m.calls(reason).increment();
    m.callDuration(reason).record(Math.max(0, elapsedNanos), TimeUnit.NANOSECONDS);
    if (TelemetryNames.isRejection(reason)) {
      m.rejections(reason).increment();
    }
    binding.callEnded(policy, budget, gauges);
  }

  @Override
  public void hedged(String policy, RetryBudget budget, Criticality criticality, ResilienceEvent.Type type,
      int attempt) {
    int hedge = TelemetryNames.hedge(type);
    if (hedge >= 0) {
      byPolicy.get(policy).hedges(hedge).increment();
    }
  }

  @Override
  public void policyCalled(Resilience policy) {
    binding.policyCalled(policy, gauges);
  }

  @Override
  public void onEvent(ResilienceEvent event) {
    CallObservers.dispatch(event, this);
  }

  /** The registry this listener records to. */
  public MeterRegistry registry() {
    return registry;
  }

  @Override
  public String toString() {
    return "QuellMicrometer.listener[" + registry.getClass().getSimpleName() + "]";
  }
}
