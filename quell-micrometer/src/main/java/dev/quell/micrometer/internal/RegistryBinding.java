package dev.quell.micrometer.internal;

import dev.quell.RetryBudget;
import dev.quell.internal.BudgetTracker;
import dev.quell.internal.Internal;
import dev.quell.internal.TelemetryNames;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
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
 * <p>This object never refers to its registry (callers pass it in), so the weak map can let both go.
 */
@Internal
public final class RegistryBinding {
  private static final Map<MeterRegistry, RegistryBinding> BINDINGS = new WeakHashMap<>();

  /** Each group keeps the ids of its two gauges. */
  private final BudgetTracker<List<Meter.Id>> budgets = new BudgetTracker<>();
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

  /** At a call's end: watches the call's budget unless it has gauges, and drops those of collected budgets. */
  void callEnded(String policy, RetryBudget budget, Gauges gauges) {
    budgets.callEnded(policy, budget, gauges);
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
    return budgets.drain(gauges(registry));
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

  /** The registry side of the tracker's events: gauges in, gauges out, a gone policy's meters out. */
  final class Gauges implements BudgetTracker.Events<List<Meter.Id>> {
    private final MeterRegistry registry;

    private Gauges(MeterRegistry registry) {
      this.registry = registry;
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
