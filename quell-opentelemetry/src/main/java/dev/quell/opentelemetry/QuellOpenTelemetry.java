package dev.quell.opentelemetry;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.internal.BudgetTracker;
import dev.quell.opentelemetry.internal.OtelBinding;
import io.opentelemetry.api.OpenTelemetry;
import java.util.Objects;

/**
 * OpenTelemetry metrics and span events for Quell policies and retry budgets.
 *
 * <pre>{@code
 * OpenTelemetry otel = ...; // the SDK you configured, or GlobalOpenTelemetry.get()
 * Resilience inventory = Resilience.DEFAULT
 *     .withName("inventory")
 *     .withListener(QuellOpenTelemetry.listener(otel));
 * }</pre>
 *
 * <p><b>Metrics</b> (instrumentation scope {@code dev.quell}), the same names and attributes as the
 * Micrometer module: counters {@code quell.calls} ({@code quell.policy}, {@code quell.outcome}),
 * {@code quell.attempts} ({@code quell.policy}, {@code kind} = first, retry or hedge) and
 * {@code quell.rejections}; histograms {@code quell.call.duration} and {@code quell.attempt.duration}
 * ({@code quell.policy}, {@code quell.verdict}) in seconds; asynchronous gauges
 * {@code quell.budget.utilization} (0..1) and {@code quell.budget.tokens} ({@code quell.budget},
 * {@code quell.policy}) for every budget a call has reported or {@link #bindBudget} was given; counter
 * {@code quell.hedges} ({@code quell.policy}, {@code quell.hedge} = started, won, discarded or
 * suppressed). What a policy holds live is reported from its first call (or {@link #bind}): its circuit
 * breaker ({@code quell.breaker}, {@code quell.policy}) as {@code quell.breaker.state} (one gauge per
 * {@code state}, 1 for the state it is in, 0 for the others), asynchronous counters
 * {@code quell.breaker.transitions} (by target {@code state}) and {@code quell.breaker.refusals} read
 * from the breaker's own metrics (so {@code isolate()} and {@code reset()} count), and
 * {@code quell.breaker.failure.rate}; each limiter ({@code quell.limiter}, {@code kind},
 * {@code quell.policy}) as gauges {@code quell.limiter.limit}, {@code .in_flight}, {@code .available}
 * and {@code .queued}; a policy that measures latency as gauges in seconds {@code quell.attempt.p95},
 * {@code quell.attempt.ceiling} and {@code quell.hedge.delay} (each reported once it has a value).
 * Budgets, breakers, limiters and policies are held weakly; a collected one stops being reported at the
 * next collection. At most 2000 policy
 * names get attributes of their own (later names share {@code quell.policy="_other"}); the SDK's own
 * cardinality limit bounds the series of scope keys it has seen.
 *
 * <p><b>Traces: events on the current span, not a span per call.</b> Each attempt's end
 * ({@code quell.attempt}), each retry ({@code quell.retry}), each hedge event ({@code quell.hedge}), a
 * breaker transition ({@code quell.breaker}), a refusal ({@code quell.rejected}) and the call's end
 * ({@code quell.call}) are added as events to {@link io.opentelemetry.api.trace.Span#current()}
 * when it is recording. For a synchronous call that is the caller's span, so one trace shows why the
 * call made the attempts it did, and each attempt's own client span (from your HTTP or gRPC
 * instrumentation) sits beside the events. Asynchronous calls decide later steps on other threads, where
 * the current span is whatever that thread carries (with the OpenTelemetry Java agent, the caller's);
 * without a recording span there, those events are dropped, never misfiled. Quell opens no span of its
 * own because its listener contract has no per-call handle to hang one on for asynchronous calls.
 *
 * <p>Metric recording allocates nothing of Quell's per call; span events allocate only on a recording
 * span. Thread-safe.
 */
public final class QuellOpenTelemetry {
  private QuellOpenTelemetry() {}

  /**
   * The listener that records Quell's metrics to {@code openTelemetry} and adds span events. Returns the
   * same instance for the same {@code OpenTelemetry} while it is in use. Pass it to
   * {@link Resilience#withListener}.
   */
  public static ResilienceListener listener(OpenTelemetry openTelemetry) {
    return OtelBinding.listener(Objects.requireNonNull(openTelemetry, "openTelemetry"));
  }

  /**
   * Reports {@code budget} from now on, with an empty {@code quell.policy}: for shared budgets and
   * budgets you made yourself. Held weakly. Does nothing for {@link RetryBudget#NONE},
   * {@link RetryBudget#AUTOMATIC} or a budget already reported.
   */
  public static void bindBudget(RetryBudget budget, OpenTelemetry openTelemetry) {
    Objects.requireNonNull(budget, "budget");
    OtelBinding.of(Objects.requireNonNull(openTelemetry, "openTelemetry")).watch(budget, "");
  }

  /**
   * Reports everything {@code policy} holds live — its budget, circuit breaker, limiters and measured
   * timing — from now on, attributed as its first call would attribute them: to show them before
   * traffic arrives. Held weakly.
   */
  public static void bind(Resilience policy, OpenTelemetry openTelemetry) {
    bindBudget(policy, openTelemetry);
    OtelBinding.of(openTelemetry).watchPolicy(policy);
  }

  /** Reports {@code breaker} from now on, with an empty {@code quell.policy}: for a shared breaker. Held weakly. */
  public static void bindBreaker(CircuitBreaker breaker, OpenTelemetry openTelemetry) {
    Objects.requireNonNull(breaker, "breaker");
    OtelBinding.of(Objects.requireNonNull(openTelemetry, "openTelemetry")).watchBreaker(breaker, "");
  }

  /** Reports {@code limiter} from now on, with an empty {@code quell.policy}. Held weakly. */
  public static void bindLimiter(Limiter limiter, OpenTelemetry openTelemetry) {
    Objects.requireNonNull(limiter, "limiter");
    OtelBinding.of(Objects.requireNonNull(openTelemetry, "openTelemetry")).watchLimiter(limiter, "");
  }

  /** Reports the live budget of {@code policy} from now on, attributed as its first call would attribute it. */
  public static void bindBudget(Resilience policy, OpenTelemetry openTelemetry) {
    Objects.requireNonNull(policy, "policy");
    RetryBudget budget = policy.budget();
    OtelBinding.of(Objects.requireNonNull(openTelemetry, "openTelemetry"))
        .watch(budget, BudgetTracker.policyTag(policy.name(), budget.name()));
  }
}
