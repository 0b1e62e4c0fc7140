package dev.quell.opentelemetry.internal;

import dev.quell.RetryBudget;
import dev.quell.internal.Internal;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.MeterBuilder;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Quell's instruments on one {@link OpenTelemetry} instance, and the budgets it reports. There is one
 * per instance (looked up through a weak map), so the budget gauges are registered once however many
 * listeners are made. This object never refers to the {@code OpenTelemetry} instance itself, so the
 * weak map can let it go.
 */
@Internal
public final class OtelBinding {
  /** The instrumentation scope name. */
  public static final String SCOPE = "dev.quell";
  /** Seconds: 5 ms to 10 s, the boundaries OpenTelemetry's HTTP conventions advise for durations. */
  static final List<Double> DURATION_BUCKETS =
      List.of(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0);
  private static final Map<OpenTelemetry, OtelBinding> BINDINGS = new WeakHashMap<>();

  final LongCounter calls;
  final LongCounter attempts;
  final LongCounter rejections;
  final DoubleHistogram callDuration;
  final DoubleHistogram attemptDuration;
  final BudgetWatch budgets = new BudgetWatch();
  private @Nullable WeakReference<OtelListener> listener;

  private OtelBinding(Meter meter) {
    calls = meter.counterBuilder(Names.CALLS).setUnit("{call}").setDescription("Calls ended, by stop reason").build();
    attempts = meter.counterBuilder(Names.ATTEMPTS).setUnit("{attempt}")
        .setDescription("Attempts started, the first included; attempts / calls is the load multiplier").build();
    rejections = meter.counterBuilder(Names.REJECTIONS).setUnit("{call}")
        .setDescription("Calls Quell ended by refusing work: budget, breaker, limiter or draining").build();
    callDuration = meter.histogramBuilder(Names.CALL_DURATION).setUnit("s")
        .setDescription("Time from the start of a call to its end, backoff and pauses included")
        .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS).build();
    attemptDuration = meter.histogramBuilder(Names.ATTEMPT_DURATION).setUnit("s")
        .setDescription("Time one attempt ran, by the verdict on it")
        .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS).build();
    BudgetWatch watch = budgets;
    meter.gaugeBuilder(Names.BUDGET_UTILIZATION).setUnit("1")
        .setDescription("How much of the retry budget is spent: 0 untouched, 1 refusing retries")
        .buildWithCallback(m -> {
          watch.expungeIfNeeded();
          for (BudgetWatch.Group g : watch.groups()) {
            RetryBudget b = g.mostSpent();
            if (b != null) {
              m.record(b.utilization(), g.attributes);
            }
          }
        });
    meter.gaugeBuilder(Names.BUDGET_TOKENS).setUnit("{token}").setDescription("Retries the budget could fund now")
        .buildWithCallback(m -> {
          for (BudgetWatch.Group g : watch.groups()) {
            RetryBudget b = g.mostSpent();
            if (b != null) {
              m.record(b.tokens(), g.attributes);
            }
          }
        });
  }

  /** The binding of {@code openTelemetry}, created on first use. */
  public static OtelBinding of(OpenTelemetry openTelemetry) {
    synchronized (BINDINGS) {
      return BINDINGS.computeIfAbsent(openTelemetry, o -> {
        MeterBuilder builder = o.getMeterProvider().meterBuilder(SCOPE);
        String version = OtelBinding.class.getPackage().getImplementationVersion();
        if (version != null) {
          builder.setInstrumentationVersion(version);
        }
        return new OtelBinding(builder.build());
      });
    }
  }

  /** The listener for {@code openTelemetry}: the same instance for as long as anything holds it. */
  public static OtelListener listener(OpenTelemetry openTelemetry) {
    OtelBinding binding = of(openTelemetry);
    synchronized (binding) {
      OtelListener existing = binding.listener == null ? null : binding.listener.get();
      if (existing == null) {
        existing = new OtelListener(binding);
        WeakReference<OtelListener> ref = new WeakReference<>(existing);
        binding.listener = ref;
        binding.budgets.onOwnerGone(policy -> {
          OtelListener l = ref.get();
          if (l != null) {
            l.retire(policy);
          }
        });
      }
      return existing;
    }
  }

  /** The budgets this instance reports. */
  public BudgetWatch budgets() {
    return budgets;
  }
}
