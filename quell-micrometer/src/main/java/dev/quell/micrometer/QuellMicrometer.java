package dev.quell.micrometer;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.internal.BudgetTracker;
import dev.quell.micrometer.internal.RegistryBinding;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Micrometer meters for Quell policies and retry budgets.
 *
 * <pre>{@code
 * MeterRegistry registry = ...;
 * Resilience inventory = Resilience.DEFAULT
 *     .withName("inventory")
 *     .withListener(QuellMicrometer.listener(registry));
 * }</pre>
 *
 * <p>Every call of a policy with the listener records:
 * <ul>
 *   <li>{@code quell.calls} (counter; tags {@code quell.policy}, {@code quell.outcome} = the
 *       {@link dev.quell.StopReason}) and {@code quell.call.duration} (timer, same tags);
 *   <li>{@code quell.attempts} (counter; tags {@code quell.policy}, {@code kind} = first, retry or
 *       hedge): attempts ÷ calls is the live load multiplier the policy puts on its dependency;
 *   <li>{@code quell.attempt.duration} (timer; tags {@code quell.policy}, {@code quell.verdict} = OK,
 *       TRANSIENT, THROTTLED, PERMANENT or CANCELLED);
 *   <li>{@code quell.rejections} (counter; tags {@code quell.policy}, {@code quell.outcome}): calls
 *       that ended because Quell refused work (BUDGET_EXHAUSTED, DEPENDENCY_UNAVAILABLE, LIMITED,
 *       DRAINING);
 *   <li>{@code quell.hedges} (counter; tags {@code quell.policy}, {@code quell.hedge} = started, won,
 *       discarded or suppressed).
 * </ul>
 * What a policy holds live gets meters of its own, from the policy's first call (or a
 * {@code bind…} method):
 * <ul>
 *   <li>its circuit breaker (tags {@code quell.breaker}, {@code quell.policy}): {@code quell.breaker.state}
 *       (one gauge per {@code state}, 1 for the state it is in and 0 for the others),
 *       {@code quell.breaker.transitions} (function counter by target {@code state}),
 *       {@code quell.breaker.refusals} (function counter) and {@code quell.breaker.failure.rate} (gauge,
 *       0..1). The counters read the breaker's own {@link dev.quell.CircuitBreaker#metrics()}, so
 *       {@code isolate()} and {@code reset()} count too;
 *   <li>each limiter (tags {@code quell.limiter}, {@code kind} = rate, concurrency or adaptive,
 *       {@code quell.policy}): gauges {@code quell.limiter.limit}, {@code quell.limiter.in_flight},
 *       {@code quell.limiter.available} and {@code quell.limiter.queued};
 *   <li>when the policy measures latency ({@link Resilience#timing()}), gauges in seconds (tag
 *       {@code quell.policy}): {@code quell.attempt.p95}, {@code quell.attempt.ceiling} and, when it
 *       hedges, {@code quell.hedge.delay}; NaN while there is no value.
 * </ul>
 * {@code quell.policy} is the owning policy's name for a breaker or limiter of the policy's own (one
 * built from a {@code CircuitBreaker.Config}, a scope key's adaptive limit), empty for a shared one.
 * and the budget the call spent from gets the gauges {@code quell.budget.utilization} (0..1; near 1
 * means the budget is refusing retries) and {@code quell.budget.tokens} (tags {@code quell.budget} =
 * the budget's name, {@code quell.policy} = the owning policy's name, empty for a shared budget), from
 * the first call that reports it. Use {@link #bindBudget(RetryBudget, MeterRegistry)} to show a budget
 * before any call has used it.
 *
 * <p>Recording adds no allocation per call beyond what the registry's meters make themselves.
 * Budgets, breakers, limiters and policies are held weakly: one that becomes garbage is collected, and
 * its meters are removed from the registry soon after (on a later call's end or the next
 * registration); objects of the same name and {@code quell.policy} share their meters, whose gauges
 * read the one watched last and whose counters add them all up. Once every
 * budget a policy name owned is gone, that name's call and attempt meters are removed too. So the
 * keys of a {@link dev.quell.PolicyScope} (each a policy named {@code template:key}) cannot grow the
 * registry without bound. As a safety net, at most 2000 policy names get meters of their own; later
 * names share {@code quell.policy="_other"}. Thread-safe.
 */
public final class QuellMicrometer {
  private QuellMicrometer() {}

  /**
   * The listener that records Quell's meters into {@code registry}. Returns the same instance for the
   * same registry while it is in use, so policies built with it compare equal. Pass it to
   * {@link Resilience#withListener}; the policy that method returns is the one whose automatic budget
   * is watched.
   */
  public static ResilienceListener listener(MeterRegistry registry) {
    return RegistryBinding.listener(Objects.requireNonNull(registry, "registry"));
  }

  /**
   * Registers the budget gauges for {@code budget} now, with an empty {@code quell.policy} tag: for
   * shared budgets and budgets you made yourself. The budget is held weakly. Does nothing for
   * {@link RetryBudget#NONE}, for {@link RetryBudget#AUTOMATIC} (a marker: bind the policy instead),
   * or for a budget already bound.
   */
  public static void bindBudget(RetryBudget budget, MeterRegistry registry) {
    Objects.requireNonNull(budget, "budget");
    Objects.requireNonNull(registry, "registry");
    if (budget == RetryBudget.AUTOMATIC) {
      return;
    }
    RegistryBinding.of(registry).watch(budget, "", registry);
  }

  /**
   * Registers now the meters of everything {@code policy} holds live — its budget, circuit breaker,
   * limiters and measured timing — tagged as its first call would tag them: to show them on a
   * dashboard before traffic arrives. Held weakly. Does nothing for what already has meters.
   */
  public static void bind(Resilience policy, MeterRegistry registry) {
    bindBudget(policy, registry);
    RegistryBinding.of(registry).watchPolicy(policy, registry);
  }

  /**
   * Registers the meters of {@code breaker} now, with an empty {@code quell.policy} tag: for a breaker
   * shared by several policies. Held weakly. Does nothing for a breaker that has them.
   */
  public static void bindBreaker(CircuitBreaker breaker, MeterRegistry registry) {
    Objects.requireNonNull(breaker, "breaker");
    Objects.requireNonNull(registry, "registry");
    RegistryBinding.of(registry).watchBreaker(breaker, "", registry);
  }

  /**
   * Registers the gauges of {@code limiter} now, with an empty {@code quell.policy} tag. Held weakly.
   * Does nothing for a limiter that has them.
   */
  public static void bindLimiter(Limiter limiter, MeterRegistry registry) {
    Objects.requireNonNull(limiter, "limiter");
    Objects.requireNonNull(registry, "registry");
    RegistryBinding.of(registry).watchLimiter(limiter, "", registry);
  }

  /**
   * Registers the budget gauges for the live budget of {@code policy} ({@link Resilience#budget()})
   * now, tagged as its first call would tag them. Useful to show a policy's budget on a dashboard
   * before traffic arrives.
   */
  public static void bindBudget(Resilience policy, MeterRegistry registry) {
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(registry, "registry");
    RetryBudget budget = policy.budget();
    RegistryBinding.of(registry).watch(budget, BudgetTracker.policyTag(policy.name(), budget.name()), registry);
  }
}
