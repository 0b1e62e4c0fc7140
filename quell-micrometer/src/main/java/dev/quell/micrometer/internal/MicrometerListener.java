package dev.quell.micrometer.internal;

import dev.quell.Criticality;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.internal.CallObserver;
import dev.quell.internal.Internal;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The listener behind {@code QuellMicrometer.listener}. The core calls it through the primitive
 * {@link CallObserver} methods, so recording a call allocates nothing of ours: meters are looked up
 * by policy name (the last one is remembered by identity) and then by enum ordinal. {@link #onEvent}
 * does the same from an event object, for callers that only speak {@link ResilienceListener}.
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
  static final int MAX_POLICY_NAMES = 2000;
  static final String OVERFLOW_POLICY = "_other";

  private final MeterRegistry registry;
  private final RegistryBinding binding;
  private final ConcurrentHashMap<String, PolicyMeters> byPolicy = new ConcurrentHashMap<>();
  /** The last policy's meters: a racy cache, safe because PolicyMeters has only final fields. */
  private @Nullable PolicyMeters last;

  MicrometerListener(MeterRegistry registry, RegistryBinding binding) {
    this.registry = registry;
    this.binding = binding;
  }

  private PolicyMeters meters(String policy) {
    PolicyMeters m = last;
    if (m != null && m.policy == policy) {
      return m;
    }
    m = byPolicy.get(policy);
    if (m == null) {
      if (byPolicy.size() >= MAX_POLICY_NAMES) {
        return byPolicy.computeIfAbsent(OVERFLOW_POLICY, p -> new PolicyMeters(p, registry));
      }
      m = byPolicy.computeIfAbsent(policy, p -> new PolicyMeters(p, registry));
    }
    last = m;
    return m;
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
      last = null;
      m.retire();
    }
  }

  /** Number of policy names with meters now. */
  int policyNames() {
    return byPolicy.size();
  }

  @Override
  public void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge) {
    meters(policy).attempts(MeterNames.kind(attempt, hedge)).increment();
  }

  @Override
  public void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
      @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
    meters(policy).attemptDuration(MeterNames.verdict(verdict)).record(Math.max(0, durationNanos), TimeUnit.NANOSECONDS);
  }

  @Override
  public void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos) {
    // counted when the retry starts, as an attempt of kind "retry"
  }

  @Override
  public void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
      @Nullable Verdict verdict, long elapsedNanos) {
    PolicyMeters m = meters(policy);
    m.calls(reason).increment();
    m.callDuration(reason).record(Math.max(0, elapsedNanos), TimeUnit.NANOSECONDS);
    if (MeterNames.isRejection(reason)) {
      m.rejections(reason).increment();
    }
    if (!budget.isUnbounded() && !binding.isWatched(budget)) {
      binding.watch(budget, MeterNames.budgetPolicyTag(policy, budget.name()), registry);
    }
    binding.expungeIfNeeded(registry);
  }

  @Override
  public void onEvent(ResilienceEvent event) {
    RetryBudget budget = event.budget().orElse(RetryBudget.NONE);
    switch (event.type()) {
      case ATTEMPT_STARTED:
        attemptStarted(event.policy(), budget, event.criticality(), event.attempt(), event.isHedge());
        break;
      case ATTEMPT_ENDED:
        attemptEnded(event.policy(), budget, event.criticality(), event.attempt(), event.isHedge(),
            event.verdict().orElse(null), event.failure().orElse(null),
            event.attemptDuration().map(Duration::toNanos).orElse(0L));
        break;
      default:
        StopReason reason = event.stopReason().orElse(null);
        if (event.isTerminal() && reason != null) {
          callEnded(event.policy(), budget, event.criticality(), reason, event.attempt(),
              event.verdict().orElse(null), event.elapsed().toNanos());
        }
    }
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
