package dev.quell.opentelemetry;

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
 * {@code quell.policy}) for every budget a call has reported or {@link #bindBudget} was given. Budgets
 * are held weakly; a collected budget stops being reported at the next collection. At most 2000 policy
 * names get attributes of their own (later names share {@code quell.policy="_other"}); the SDK's own
 * cardinality limit bounds the series of scope keys it has seen.
 *
 * <p><b>Traces: events on the current span, not a span per call.</b> Each attempt's end
 * ({@code quell.attempt}), each retry ({@code quell.retry}), a refusal ({@code quell.rejected}) and the
 * call's end ({@code quell.call}) are added as events to {@link io.opentelemetry.api.trace.Span#current()}
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

  /** Reports the live budget of {@code policy} from now on, attributed as its first call would attribute it. */
  public static void bindBudget(Resilience policy, OpenTelemetry openTelemetry) {
    Objects.requireNonNull(policy, "policy");
    RetryBudget budget = policy.budget();
    OtelBinding.of(Objects.requireNonNull(openTelemetry, "openTelemetry"))
        .watch(budget, BudgetTracker.policyTag(policy.name(), budget.name()));
  }
}
