package dev.quell.micrometer.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.internal.BudgetTracker;
import dev.quell.internal.Internal;
import dev.quell.internal.TelemetryNames;
import dev.quell.internal.WeakTracker;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * Quell's state for one {@link MeterRegistry}: the budgets it watches and the listener that feeds it.
 * There is one per registry (looked up through a weak map), so two listeners or a listener and
 * {@code bindBudget} never register competing gauges for the same budget.
 *
 * <p>Budgets are held weakly by a {@link BudgetTracker}: watching a budget never keeps it, or the
 * policy that owns it, alive. The GC's reports are picked up on every call's end (a single field read
 * when there are none) and on every registration; the gauges of a (budget name, policy) pair whose
 * budgets are all gone are removed from the registry, and so are the call meters of a policy name
 * whose own budgets are all gone. So budgets that come and go (scope keys, policies rebuilt on
 * reload) cannot grow the registry without bound.
 *
 * <p>Circuit breakers, limiters and the policy instances that measure latency are held the same way,
 * by {@link WeakTracker}s, from the first call of a policy that holds them (or a {@code bind…}): a
 * group of them loses its meters once all its members are collected.
 *
 * <p>This object never refers to its registry (callers pass it in), so the weak map can let both go.
 */
@Internal
public final class RegistryBinding {
  private static final Map<MeterRegistry, RegistryBinding> BINDINGS = new WeakHashMap<>();

  /** Each group keeps the ids of its two gauges. */
  private final BudgetTracker<List<Meter.Id>> budgets = new BudgetTracker<>();
  /** Every policy instance seen, so that a call of one seen before costs one lock-free lookup. */
  private final WeakTracker<Resilience, Boolean> policies = new WeakTracker<>(0);
  /** Each group keeps the ids of its meters, here and below. */
  private final WeakTracker<CircuitBreaker, List<Meter.Id>> breakers =
      new WeakTracker<>(TelemetryNames.BREAKER_COUNTERS);
  private final WeakTracker<Limiter, List<Meter.Id>> limiters = new WeakTracker<>(0);
  /** The policy instances that measure latency (measured timing, or a hedge by extra load). */
  private final WeakTracker<Resilience, List<Meter.Id>> timings = new WeakTracker<>(0);
  /** Written under this binding's lock, read without it when a policy name's budgets are gone. */
  private volatile @Nullable WeakReference<MicrometerListener> listener;

  private RegistryBinding() {}

  /** The binding of {@code registry}, created on first use. */
  public static RegistryBinding of(MeterRegistry registry) {
    synchronized (BINDINGS) {
      return BINDINGS.computeIfAbsent(registry, r -> new RegistryBinding());
    }
  }

  /** The listener for {@code registry}: the same instance for as long as anything holds it. */
  public static MicrometerListener listener(MeterRegistry registry) {
    RegistryBinding binding = of(registry);
    synchronized (binding) {
      MicrometerListener existing = binding.liveListener();
      if (existing == null) {
        existing = new MicrometerListener(registry, binding);
        binding.listener = new WeakReference<>(existing);
      }
      return existing;
    }
  }

  /** What this binding does to {@code registry} when the watched budgets change. Held by the caller, never here. */
  Gauges gauges(MeterRegistry registry) {
    return new Gauges(registry);
  }

  /**
   * At a call's end: watches the call's budget unless it has gauges, and drops the meters of whatever
   * the GC collected (a few field reads when it collected nothing).
   */
  void callEnded(String policy, RetryBudget budget, Gauges gauges) {
    budgets.callEnded(policy, budget, gauges);
    policies.drainIfNeeded(gauges.policies);
    breakers.drainIfNeeded(gauges.breakers);
    limiters.drainIfNeeded(gauges.limiters);
    timings.drainIfNeeded(gauges.timings);
  }

  /** After a call of {@code policy}: one lock-free lookup for an instance seen before, else {@link #watchPolicy}. */
  void policyCalled(Resilience policy, Gauges gauges) {
    if (!policies.isWatched(policy)) {
      watchPolicy(policy, gauges);
    }
  }

  /**
   * Registers the meters of what {@code policy} holds live — its circuit breaker, limiters and measured
   * timing — unless they have them, tagged as its calls would tag them. (Its budget is watched apart,
   * at every call's end or by {@code bindBudget}.)
   */
  public void watchPolicy(Resilience policy, MeterRegistry registry) {
    watchPolicy(policy, gauges(registry));
  }

  private void watchPolicy(Resilience policy, Gauges gauges) {
    String name = policy.name();
    policies.watch(policy, name, name, gauges.policies);
    CircuitBreaker breaker = policy.breaker().orElse(null);
    if (breaker != null) {
      breakers.watch(breaker, breaker.name(), BudgetTracker.policyTag(name, breaker.name()), gauges.breakers);
    }
    for (Limiter limiter : policy.limiters()) {
      limiters.watch(limiter, limiter.name(), BudgetTracker.policyTag(name, limiter.name()), gauges.limiters);
    }
    if (policy.timing().isPresent()) {
      timings.watch(policy, name, name, gauges.timings);
    }
  }

  /** Registers the meters of {@code breaker} unless it has them; {@code policyTag} as for budgets. */
  public void watchBreaker(CircuitBreaker breaker, String policyTag, MeterRegistry registry) {
    breakers.watch(breaker, breaker.name(), policyTag, gauges(registry).breakers);
  }

  /** Registers the gauges of {@code limiter} unless it has them; {@code policyTag} as for budgets. */
  public void watchLimiter(Limiter limiter, String policyTag, MeterRegistry registry) {
    limiters.watch(limiter, limiter.name(), policyTag, gauges(registry).limiters);
  }

  /** True when {@code budget} already has gauges. Lock-free and allocation-free. */
  boolean isWatched(RetryBudget budget) {
    return budgets.isWatched(budget);
  }

  /**
   * Registers gauges for {@code budget} unless it has them. {@code policyTag} is the
   * {@code quell.policy} tag: the owning policy's name, or empty for a budget that belongs to no
   * single policy. Budgets with the same name and tag share one pair of gauges, which reports the
   * most spent of them.
   */
  public void watch(RetryBudget budget, String policyTag, MeterRegistry registry) {
    budgets.watch(budget, policyTag, gauges(registry));
  }

  /**
   * Removes the gauges of every budget the GC has collected and reported so far; returns how many
   * budget references were dropped. Normally this happens by itself; tests call it to be exact.
   */
  public int expunge(MeterRegistry registry) {
    Gauges g = gauges(registry);
    policies.drain(g.policies);
    breakers.drain(g.breakers);
    limiters.drain(g.limiters);
    timings.drain(g.timings);
    return budgets.drain(g);
  }

  /** The breakers this binding reports. */
  public WeakTracker<CircuitBreaker, List<Meter.Id>> breakers() {
    return breakers;
  }

  /** The limiters this binding reports. */
  public WeakTracker<Limiter, List<Meter.Id>> limiters() {
    return limiters;
  }

  /** The policy instances whose measured timing this binding reports. */
  public WeakTracker<Resilience, List<Meter.Id>> timings() {
    return timings;
  }

  /** Policy instances seen. */
  public WeakTracker<Resilience, Boolean> policies() {
    return policies;
  }

  /** Number of budgets watched, collected ones not yet expunged included. */
  public int watchedBudgets() {
    return budgets.watchedBudgets();
  }

  /** Number of (budget name, policy) pairs that have gauges. */
  public int gaugeGroups() {
    return budgets.groups().size();
  }

  /** For tests: clears and queues every watched reference to {@code budget}, as the GC would once it is unreachable. */
  void simulateCollected(RetryBudget budget) {
    budgets.simulateCollected(budget);
  }

  private @Nullable MicrometerListener liveListener() {
    WeakReference<MicrometerListener> ref = listener;
    return ref == null ? null : ref.get();
  }

  /** The registry side of the trackers' events: meters in, meters out, a gone policy's meters out. */
  final class Gauges implements BudgetTracker.Events<List<Meter.Id>> {
    private final MeterRegistry registry;
    final WeakTracker.Events<Resilience, Boolean> policies = new WeakTracker.Events<>() {
      @Override
      public Boolean groupAdded(WeakTracker.Group<Resilience, Boolean> group) {
        return Boolean.TRUE; // nothing to show: the policy's call meters are made as calls report
      }

      @Override
      public void groupGone(WeakTracker.Group<Resilience, Boolean> group) {}
    };
    final WeakTracker.Events<CircuitBreaker, List<Meter.Id>> breakers = new Removing<>() {
      @Override
      public List<Meter.Id> groupAdded(WeakTracker.Group<CircuitBreaker, List<Meter.Id>> group) {
        return breakerMeters(group);
      }
    };
    final WeakTracker.Events<Limiter, List<Meter.Id>> limiters = new Removing<>() {
      @Override
      public List<Meter.Id> groupAdded(WeakTracker.Group<Limiter, List<Meter.Id>> group) {
        return limiterGauges(group);
      }
    };
    final WeakTracker.Events<Resilience, List<Meter.Id>> timings = new Removing<>() {
      @Override
      public List<Meter.Id> groupAdded(WeakTracker.Group<Resilience, List<Meter.Id>> group) {
        return timingGauges(group);
      }
    };

    private Gauges(MeterRegistry registry) {
      this.registry = registry;
    }

    /** Events whose gone groups take their meters out of the registry. */
    private abstract class Removing<M> implements WeakTracker.Events<M, List<Meter.Id>> {
      @Override
      public void groupGone(WeakTracker.Group<M, List<Meter.Id>> group) {
        for (Meter.Id id : group.data()) {
          registry.remove(id);
        }
      }
    }

    /**
     * One 0/1 gauge per state (the state set dashboards and PromQL handle without a value mapping), the
     * failure rate, and function counters of transitions by target state and of refusals, read from the
     * breaker's own metrics so that moves made by hand count too.
     */
    private List<Meter.Id> breakerMeters(WeakTracker.Group<CircuitBreaker, List<Meter.Id>> group) {
      Tags tags = Tags.of(TelemetryNames.TAG_BREAKER, group.name(), TelemetryNames.TAG_POLICY, group.policyTag());
      List<Meter.Id> ids = new ArrayList<>();
      try {
        for (int slot = 0; slot < TelemetryNames.BREAKER_REFUSALS_SLOT; slot++) {
          CircuitBreaker.State state = TelemetryNames.breakerState(slot);
          Tags withState = tags.and(TelemetryNames.TAG_STATE, state.name());
          ids.add(Gauge.builder(TelemetryNames.BREAKER_STATE, group, g -> {
                CircuitBreaker b = g.newest();
                return b == null ? Double.NaN : b.state() == state ? 1 : 0;
              })
              .description("1 for the state the circuit breaker is in, 0 for the others")
              .tags(withState).strongReference(true).register(registry).getId());
          int counter = slot;
          ids.add(FunctionCounter.builder(TelemetryNames.BREAKER_TRANSITIONS, group,
                  g -> g.total(counter, b -> TelemetryNames.breakerCount(b.metrics(), counter)))
              .description("Times the circuit breaker moved into the state, moves made by hand included")
              .tags(withState).register(registry).getId());
        }
        ids.add(FunctionCounter.builder(TelemetryNames.BREAKER_REFUSALS, group,
                g -> g.total(TelemetryNames.BREAKER_REFUSALS_SLOT,
                    b -> TelemetryNames.breakerCount(b.metrics(), TelemetryNames.BREAKER_REFUSALS_SLOT)))
            .description("Attempts the circuit breaker refused: open, isolated, no probe permit, or ramping")
            .tags(tags).register(registry).getId());
        ids.add(Gauge.builder(TelemetryNames.BREAKER_FAILURE_RATE, group, g -> {
              CircuitBreaker b = g.newest();
              return b == null ? Double.NaN : b.metrics().failureRate();
            })
            .description("Share of the attempts in the circuit breaker's window that failed, 0..1")
            .tags(tags).strongReference(true).register(registry).getId());
      } catch (RuntimeException e) {
        ids.forEach(registry::remove);
        throw e;
      }
      return List.copyOf(ids);
    }

    private List<Meter.Id> limiterGauges(WeakTracker.Group<Limiter, List<Meter.Id>> group) {
      Limiter first = group.newest();
      Tags tags = Tags.of(TelemetryNames.TAG_LIMITER, group.name(), TelemetryNames.TAG_KIND,
          first == null ? "other" : TelemetryNames.limiterKind(first), TelemetryNames.TAG_POLICY, group.policyTag());
      List<Meter.Id> ids = new ArrayList<>();
      try {
        ids.add(limiterGauge(group, tags, TelemetryNames.LIMITER_LIMIT, Limiter::limit,
            "The most attempts the limiter admits at once: burst, bulkhead size, or the adaptive limit now"));
        ids.add(limiterGauge(group, tags, TelemetryNames.LIMITER_IN_FLIGHT, Limiter::inFlight,
            "Attempts the limiter admitted that have not ended"));
        ids.add(limiterGauge(group, tags, TelemetryNames.LIMITER_AVAILABLE, Limiter::available,
            "Attempts the limiter would admit now without waiting"));
        ids.add(limiterGauge(group, tags, TelemetryNames.LIMITER_QUEUED, Limiter::queued,
            "Attempts queued for a permit of the limiter"));
        ids.add(limiterGauge(group, tags, TelemetryNames.LIMITER_REJECTION_PROBABILITY, Limiter::rejectionProbability,
            "The share of first attempts an adaptive throttle refuses now; 0 for other limiters"));
      } catch (RuntimeException e) {
        ids.forEach(registry::remove);
        throw e;
      }
      return List.copyOf(ids);
    }

    private Meter.Id limiterGauge(WeakTracker.Group<Limiter, List<Meter.Id>> group, Tags tags, String name,
        ToDoubleFunction<Limiter> read, String description) {
      return Gauge.builder(name, group, g -> {
            Limiter l = g.newest();
            return l == null ? Double.NaN : read.applyAsDouble(l);
          })
          .description(description).tags(tags).strongReference(true).register(registry).getId();
    }

    private List<Meter.Id> timingGauges(WeakTracker.Group<Resilience, List<Meter.Id>> group) {
      Tags tags = Tags.of(TelemetryNames.TAG_POLICY, group.name());
      Resilience first = group.newest();
      List<Meter.Id> ids = new ArrayList<>();
      try {
        ids.add(timingGauge(group, tags, TelemetryNames.ATTEMPT_P95, MeasuredTiming.Stats::p95,
            "The live 95th percentile of the policy's successful attempts"));
        ids.add(timingGauge(group, tags, TelemetryNames.ATTEMPT_CEILING, MeasuredTiming.Stats::attemptCeiling,
            "The attempt timeout in force now: measured, or the configured one"));
        if (first != null && first.hedge().isPresent()) {
          ids.add(timingGauge(group, tags, TelemetryNames.HEDGE_DELAY, MeasuredTiming.Stats::hedgeDelay,
              "The hedge delay in force now"));
        }
      } catch (RuntimeException e) {
        ids.forEach(registry::remove);
        throw e;
      }
      return List.copyOf(ids);
    }

    private Meter.Id timingGauge(WeakTracker.Group<Resilience, List<Meter.Id>> group, Tags tags, String name,
        Function<MeasuredTiming.Stats, Optional<Duration>> read, String description) {
      return Gauge.builder(name, group, g -> {
            Resilience p = g.newest();
            Optional<Duration> d = p == null ? Optional.empty() : p.timing().flatMap(read);
            return d.isPresent() ? d.get().toNanos() / 1e9 : Double.NaN;
          })
          .description(description + "; NaN while there is none").tags(tags).baseUnit("seconds")
          .strongReference(true).register(registry).getId();
    }

    @Override
    public List<Meter.Id> groupAdded(BudgetTracker.Group<List<Meter.Id>> group) {
      Tags tags = Tags.of(TelemetryNames.TAG_BUDGET, group.budgetName(), TelemetryNames.TAG_POLICY, group.policyTag());
      Gauge utilization = Gauge.builder(TelemetryNames.BUDGET_UTILIZATION, group, BudgetTracker.Group::utilization)
          .description("How much of the retry budget is spent: 0 untouched, 1 refusing retries")
          .tags(tags).strongReference(true).register(registry);
      Gauge tokens = Gauge.builder(TelemetryNames.BUDGET_TOKENS, group, BudgetTracker.Group::tokens)
          .description("Retries the budget could fund now")
          .tags(tags).strongReference(true).register(registry);
      return List.of(utilization.getId(), tokens.getId());
    }

    @Override
    public void groupGone(BudgetTracker.Group<List<Meter.Id>> group) {
      for (Meter.Id id : group.data()) {
        registry.remove(id);
      }
    }

    @Override
    public void ownerGone(String policy) {
      MicrometerListener l = liveListener();
      if (l != null) {
        l.retire(policy); // the policies of that name are gone: so are their call meters
      }
    }
  }
}
