package dev.quell.opentelemetry.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.internal.BudgetTracker;
import dev.quell.internal.Internal;
import dev.quell.internal.TelemetryNames;
import dev.quell.internal.WeakTracker;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.MeterBuilder;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.function.Function;
import java.util.function.ToIntFunction;
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
 *
 * <p>Circuit breakers, limiters and the policy instances that measure latency are held the same way,
 * by {@link WeakTracker}s, from the first call of a policy that holds them (or a {@code bind…}): their
 * asynchronous instruments report the groups alive at each collection.
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
  final LongCounter hedges;
  /** Each group keeps its {@code quell.budget} and {@code quell.policy} attributes. */
  private final BudgetTracker<Attributes> budgets = new BudgetTracker<>();
  private final BudgetEvents events = new BudgetEvents();
  /** Every policy instance seen, so that a call of one seen before costs one lock-free lookup. */
  private final WeakTracker<Resilience, Boolean> policies = new WeakTracker<>(0);
  private final WeakTracker<CircuitBreaker, BreakerAttributes> breakers =
      new WeakTracker<>(TelemetryNames.BREAKER_COUNTERS);
  private final WeakTracker<Limiter, Attributes> limiters = new WeakTracker<>(0);
  /** The policy instances that measure latency (measured timing, or a hedge by extra load). */
  private final WeakTracker<Resilience, Attributes> timings = new WeakTracker<>(0);
  private final WeakTracker.Events<Resilience, Boolean> policyEvents = new Quiet<>(g -> Boolean.TRUE);
  private final WeakTracker.Events<CircuitBreaker, BreakerAttributes> breakerEvents =
      new Quiet<>(g -> new BreakerAttributes(g.name(), g.policyTag()));
  private final WeakTracker.Events<Limiter, Attributes> limiterEvents = new Quiet<>(g -> {
    Limiter first = g.newest();
    return Attributes.of(Names.LIMITER, g.name(), Names.KIND,
        first == null ? "other" : TelemetryNames.limiterKind(first), Names.POLICY, g.policyTag());
  });
  private final WeakTracker.Events<Resilience, Attributes> timingEvents =
      new Quiet<>(g -> Attributes.of(Names.POLICY, g.name()));
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
    hedges = meter.counterBuilder(TelemetryNames.HEDGES).setUnit("{hedge}")
        .setDescription("Hedges started, won, discarded (attempts that lost the race) and suppressed (due but refused)")
        .build();
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
    liveInstruments(meter);
  }

  /** The asynchronous instruments of breakers, limiters and measured timing, read at each collection. */
  private void liveInstruments(Meter meter) {
    WeakTracker<CircuitBreaker, BreakerAttributes> b = breakers;
    WeakTracker<Limiter, Attributes> l = limiters;
    WeakTracker<Resilience, Attributes> t = timings;
    meter.gaugeBuilder(TelemetryNames.BREAKER_STATE).ofLongs().setUnit("1")
        .setDescription("1 for the state the circuit breaker is in, 0 for the others")
        .buildWithCallback(m -> {
          drainIfNeeded();
          for (WeakTracker.Group<CircuitBreaker, BreakerAttributes> g : b.groups()) {
            CircuitBreaker breaker = g.newest();
            if (breaker != null) {
              CircuitBreaker.State now = breaker.state();
              for (int slot = 0; slot < TelemetryNames.BREAKER_REFUSALS_SLOT; slot++) {
                m.record(TelemetryNames.breakerState(slot) == now ? 1 : 0, g.data().byState[slot]);
              }
            }
          }
        });
    meter.counterBuilder(TelemetryNames.BREAKER_TRANSITIONS).setUnit("{transition}")
        .setDescription("Times the circuit breaker moved into the state, moves made by hand included")
        .buildWithCallback(m -> {
          for (WeakTracker.Group<CircuitBreaker, BreakerAttributes> g : b.groups()) {
            for (int slot = 0; slot < TelemetryNames.BREAKER_REFUSALS_SLOT; slot++) {
              int counter = slot;
              m.record(g.total(counter, cb -> TelemetryNames.breakerCount(cb.metrics(), counter)),
                  g.data().byState[slot]);
            }
          }
        });
    meter.counterBuilder(TelemetryNames.BREAKER_REFUSALS).setUnit("{attempt}")
        .setDescription("Attempts the circuit breaker refused: open, isolated, no probe permit, or ramping")
        .buildWithCallback(m -> {
          for (WeakTracker.Group<CircuitBreaker, BreakerAttributes> g : b.groups()) {
            m.record(g.total(TelemetryNames.BREAKER_REFUSALS_SLOT,
                cb -> TelemetryNames.breakerCount(cb.metrics(), TelemetryNames.BREAKER_REFUSALS_SLOT)), g.data().all);
          }
        });
    meter.gaugeBuilder(TelemetryNames.BREAKER_FAILURE_RATE).setUnit("1")
        .setDescription("Share of the attempts in the circuit breaker's window that failed, 0..1")
        .buildWithCallback(m -> {
          for (WeakTracker.Group<CircuitBreaker, BreakerAttributes> g : b.groups()) {
            CircuitBreaker breaker = g.newest();
            if (breaker != null) {
              m.record(breaker.metrics().failureRate(), g.data().all);
            }
          }
        });
    limiterGauge(meter, l, TelemetryNames.LIMITER_LIMIT, Limiter::limit,
        "The most attempts the limiter admits at once: burst, bulkhead size, or the adaptive limit now");
    limiterGauge(meter, l, TelemetryNames.LIMITER_IN_FLIGHT, Limiter::inFlight,
        "Attempts the limiter admitted that have not ended");
    limiterGauge(meter, l, TelemetryNames.LIMITER_AVAILABLE, Limiter::available,
        "Attempts the limiter would admit now without waiting");
    limiterGauge(meter, l, TelemetryNames.LIMITER_QUEUED, Limiter::queued,
        "Attempts queued for a permit of the limiter");
    limiterShare(meter, l, TelemetryNames.LIMITER_REJECTION_PROBABILITY, Limiter::rejectionProbability,
        "The share of first attempts an adaptive throttle refuses now; 0 for other limiters");
    timingGauge(meter, t, TelemetryNames.ATTEMPT_P95, MeasuredTiming.Stats::p95,
        "The live 95th percentile of the policy's successful attempts");
    timingGauge(meter, t, TelemetryNames.ATTEMPT_CEILING, MeasuredTiming.Stats::attemptCeiling,
        "The attempt timeout in force now: measured, or the configured one");
    timingGauge(meter, t, TelemetryNames.HEDGE_DELAY, MeasuredTiming.Stats::hedgeDelay,
        "The hedge delay in force now");
  }

  private static void limiterShare(Meter meter, WeakTracker<Limiter, Attributes> tracker, String name,
      java.util.function.ToDoubleFunction<Limiter> read, String description) {
    meter.gaugeBuilder(name).setUnit("1").setDescription(description)
        .buildWithCallback((io.opentelemetry.api.metrics.ObservableDoubleMeasurement m) -> {
          for (WeakTracker.Group<Limiter, Attributes> g : tracker.groups()) {
            Limiter limiter = g.newest();
            if (limiter != null) {
              m.record(read.applyAsDouble(limiter), g.data());
            }
          }
        });
  }

  private static void limiterGauge(Meter meter, WeakTracker<Limiter, Attributes> tracker, String name,
      ToIntFunction<Limiter> read, String description) {
    meter.gaugeBuilder(name).ofLongs().setUnit("{attempt}").setDescription(description)
        .buildWithCallback((ObservableLongMeasurement m) -> {
          for (WeakTracker.Group<Limiter, Attributes> g : tracker.groups()) {
            Limiter limiter = g.newest();
            if (limiter != null) {
              m.record(read.applyAsInt(limiter), g.data());
            }
          }
        });
  }

  private static void timingGauge(Meter meter, WeakTracker<Resilience, Attributes> tracker, String name,
      Function<MeasuredTiming.Stats, Optional<Duration>> read, String description) {
    meter.gaugeBuilder(name).setUnit("s").setDescription(description + "; not reported while there is none")
        .buildWithCallback(m -> {
          for (WeakTracker.Group<Resilience, Attributes> g : tracker.groups()) {
            Resilience policy = g.newest();
            Optional<Duration> d = policy == null ? Optional.empty() : policy.timing().flatMap(read);
            if (d.isPresent()) {
              m.record(d.get().toNanos() / 1e9, g.data());
            }
          }
        });
  }

  /** Forgets the live objects the GC has collected, if it reported any. */
  private void drainIfNeeded() {
    policies.drainIfNeeded(policyEvents);
    breakers.drainIfNeeded(breakerEvents);
    limiters.drainIfNeeded(limiterEvents);
    timings.drainIfNeeded(timingEvents);
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

  /** At a call's end: reports the call's budget unless it is reported, and forgets collected objects. */
  void callEnded(String policy, RetryBudget budget) {
    budgets.callEnded(policy, budget, events);
    drainIfNeeded();
  }

  /** After a call of {@code policy}: one lock-free lookup for an instance seen before, else {@link #watchPolicy}. */
  void policyCalled(Resilience policy) {
    if (!policies.isWatched(policy)) {
      watchPolicy(policy);
    }
  }

  /**
   * Reports what {@code policy} holds live — its circuit breaker, limiters and measured timing — from
   * now on, attributed as its calls would attribute them. (Its budget is watched apart.)
   */
  public void watchPolicy(Resilience policy) {
    String name = policy.name();
    policies.watch(policy, name, name, policyEvents);
    CircuitBreaker breaker = policy.breaker().orElse(null);
    if (breaker != null) {
      breakers.watch(breaker, breaker.name(), BudgetTracker.policyTag(name, breaker.name()), breakerEvents);
    }
    for (Limiter limiter : policy.limiters()) {
      limiters.watch(limiter, limiter.name(), BudgetTracker.policyTag(name, limiter.name()), limiterEvents);
    }
    if (policy.timing().isPresent()) {
      timings.watch(policy, name, name, timingEvents);
    }
  }

  /** Reports {@code breaker} from now on under {@code policyTag}, unless it is reported already. */
  public void watchBreaker(CircuitBreaker breaker, String policyTag) {
    breakers.watch(breaker, breaker.name(), policyTag, breakerEvents);
  }

  /** Reports {@code limiter} from now on under {@code policyTag}, unless it is reported already. */
  public void watchLimiter(Limiter limiter, String policyTag) {
    limiters.watch(limiter, limiter.name(), policyTag, limiterEvents);
  }

  /** Forgets every budget and live object the GC has collected and reported so far; returns how many budgets. */
  public int expunge() {
    policies.drain(policyEvents);
    breakers.drain(breakerEvents);
    limiters.drain(limiterEvents);
    timings.drain(timingEvents);
    return budgets.drain(events);
  }

  /** The breakers this instance reports. */
  public WeakTracker<CircuitBreaker, BreakerAttributes> breakers() {
    return breakers;
  }

  /** The limiters this instance reports. */
  public WeakTracker<Limiter, Attributes> limiters() {
    return limiters;
  }

  /** The policy instances whose measured timing this instance reports. */
  public WeakTracker<Resilience, Attributes> timings() {
    return timings;
  }

  /** Policy instances seen. */
  public WeakTracker<Resilience, Boolean> policies() {
    return policies;
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

  /** Attributes of a breaker group: without a state (refusals, failure rate) and with each state. */
  public static final class BreakerAttributes {
    final Attributes all;
    final Attributes[] byState = new Attributes[TelemetryNames.BREAKER_REFUSALS_SLOT];

    BreakerAttributes(String breaker, String policyTag) {
      all = Attributes.of(Names.BREAKER, breaker, Names.POLICY, policyTag);
      for (int slot = 0; slot < byState.length; slot++) {
        byState[slot] = all.toBuilder().put(Names.STATE, TelemetryNames.breakerState(slot).name()).build();
      }
    }
  }

  /** Tracker events whose groups need only attributes: a gone group is simply not reported any more. */
  private static final class Quiet<M, T> implements WeakTracker.Events<M, T> {
    private final Function<WeakTracker.Group<M, T>, T> added;

    Quiet(Function<WeakTracker.Group<M, T>, T> added) {
      this.added = added;
    }

    @Override
    public T groupAdded(WeakTracker.Group<M, T> group) {
      return added.apply(group);
    }

    @Override
    public void groupGone(WeakTracker.Group<M, T> group) {}
  }
}
