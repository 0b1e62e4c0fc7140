package dev.quell.opentelemetry.internal;

import dev.quell.RetryBudget;
import dev.quell.internal.BudgetTracker;
import dev.quell.internal.Internal;
import dev.quell.internal.TelemetryNames;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
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
 *
 * <p>Budgets are held weakly by a {@link BudgetTracker}, grouped by (name, policy tag); a group
 * reports the most spent of its budgets. The GC's reports are picked up on every call's end (a single
 * field read when there are none), on every registration and on every collection of the gauges; a
 * group whose budgets were all collected stops being reported, and a policy name whose own budgets
 * are all gone loses its attribute sets, so budgets that come and go (scope keys, rebuilt policies)
 * cannot grow the reported series without bound.
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
  /** Each group keeps its {@code quell.budget} and {@code quell.policy} attributes. */
  private final BudgetTracker<Attributes> budgets = new BudgetTracker<>();
  private final BudgetEvents events = new BudgetEvents();
  /** Written under this binding's lock, read without it when a policy name's budgets are gone. */
  private volatile @Nullable WeakReference<OtelListener> listener;

  private OtelBinding(Meter meter) {
    calls = meter.counterBuilder(TelemetryNames.CALLS).setUnit("{call}").setDescription("Calls ended, by stop reason")
        .build();
    attempts = meter.counterBuilder(TelemetryNames.ATTEMPTS).setUnit("{attempt}")
        .setDescription("Attempts started, the first included; attempts / calls is the load multiplier").build();
    rejections = meter.counterBuilder(TelemetryNames.REJECTIONS).setUnit("{call}")
        .setDescription("Calls Quell ended by refusing work: budget, breaker, limiter or draining").build();
    callDuration = meter.histogramBuilder(TelemetryNames.CALL_DURATION).setUnit("s")
        .setDescription("Time from the start of a call to its end, backoff and pauses included")
        .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS).build();
    attemptDuration = meter.histogramBuilder(TelemetryNames.ATTEMPT_DURATION).setUnit("s")
        .setDescription("Time one attempt ran, by the verdict on it")
        .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS).build();
    BudgetTracker<Attributes> tracker = budgets;
    BudgetEvents budgetEvents = events;
    meter.gaugeBuilder(TelemetryNames.BUDGET_UTILIZATION).setUnit("1")
        .setDescription("How much of the retry budget is spent: 0 untouched, 1 refusing retries")
        .buildWithCallback(m -> {
          tracker.drainIfNeeded(budgetEvents);
          for (BudgetTracker.Group<Attributes> g : tracker.groups()) {
            RetryBudget b = g.mostSpent();
            if (b != null) {
              m.record(b.utilization(), g.data());
            }
          }
        });
    meter.gaugeBuilder(TelemetryNames.BUDGET_TOKENS).setUnit("{token}").setDescription("Retries the budget could fund now")
        .buildWithCallback(m -> {
          for (BudgetTracker.Group<Attributes> g : tracker.groups()) {
            RetryBudget b = g.mostSpent();
            if (b != null) {
              m.record(b.tokens(), g.data());
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
      OtelListener existing = binding.liveListener();
      if (existing == null) {
        existing = new OtelListener(binding);
        binding.listener = new WeakReference<>(existing);
      }
      return existing;
    }
  }

  /** Starts reporting {@code budget} under {@code policyTag}, unless it is reported already. */
  public void watch(RetryBudget budget, String policyTag) {
    budgets.watch(budget, policyTag, events);
  }

  /** At a call's end: reports the call's budget unless it is reported, and forgets collected budgets. */
  void callEnded(String policy, RetryBudget budget) {
    budgets.callEnded(policy, budget, events);
  }

  /** Forgets every budget the GC has collected and reported so far; returns how many. */
  public int expunge() {
    return budgets.drain(events);
  }

  /** The budgets this instance reports. */
  public BudgetTracker<Attributes> budgets() {
    return budgets;
  }

  private @Nullable OtelListener liveListener() {
    WeakReference<OtelListener> ref = listener;
    return ref == null ? null : ref.get();
  }

  /** The tracker's events: a group's attributes are built once; a gone policy name's attribute sets are dropped. */
  private final class BudgetEvents implements BudgetTracker.Events<Attributes> {
    @Override
    public Attributes groupAdded(BudgetTracker.Group<Attributes> group) {
      return Attributes.of(Names.BUDGET, group.budgetName(), Names.POLICY, group.policyTag());
    }

    @Override
    public void groupGone(BudgetTracker.Group<Attributes> group) {
      // the gauge callbacks read the tracker's groups: a gone group is simply not reported any more
    }

    @Override
    public void ownerGone(String policy) {
      OtelListener l = liveListener();
      if (l != null) {
        l.retire(policy);
      }
    }
  }
}
