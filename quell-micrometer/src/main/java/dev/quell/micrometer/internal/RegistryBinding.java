package dev.quell.micrometer.internal;

import dev.quell.RetryBudget;
import dev.quell.internal.Internal;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Quell's state for one {@link MeterRegistry}: the budgets it watches and the listener that feeds it.
 * There is one per registry (looked up through a weak map), so two listeners or a listener and
 * {@code bindBudget} never register competing gauges for the same budget.
 *
 * <p>Budgets are held only through weak references: watching a budget never keeps it, or the policy
 * that owns it, alive. When a budget is collected its reference is queued; the queue is polled on
 * every call's end (a single field read when empty) and on every registration, and the gauges of a
 * name whose budgets are all gone are removed from the registry. So budgets that come and go (scope
 * keys, policies rebuilt on reload) cannot grow the registry without bound.
 *
 * <p>This object never refers to its registry (callers pass it in), so the weak map can let both go.
 */
@Internal
public final class RegistryBinding {
  private static final Map<MeterRegistry, RegistryBinding> BINDINGS = new WeakHashMap<>();
  private static final BudgetRef[] EMPTY = new BudgetRef[2];

  private final ReferenceQueue<RetryBudget> queue = new ReferenceQueue<>();
  /** Identity hash table of every budget being watched; copy-on-write, so readers take no lock. */
  private volatile BudgetRef[] watched = EMPTY;
  /** Gauges by (budget name, policy tag); guarded by this. */
  private final Map<List<String>, BudgetGauges> gauges = new HashMap<>();
  private int watchedCount;
  private @Nullable WeakReference<MicrometerListener> listener;

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
      MicrometerListener existing = binding.listener == null ? null : binding.listener.get();
      if (existing == null) {
        existing = new MicrometerListener(registry, binding);
        binding.listener = new WeakReference<>(existing);
      }
      return existing;
    }
  }

  /** True when {@code budget} already has gauges. Lock-free and allocation-free: it runs on every call. */
  boolean isWatched(RetryBudget budget) {
    BudgetRef[] table = watched;
    int mask = table.length - 1;
    int i = spread(System.identityHashCode(budget)) & mask;
    while (true) {
      BudgetRef ref = table[i];
      if (ref == null) {
        return false;
      }
      if (ref.get() == budget) {
        return true;
      }
      i = (i + 1) & mask;
    }
  }

  /** Removes the gauges of collected budgets if the GC has reported any. Cheap when it has not. */
  void expungeIfNeeded(MeterRegistry registry) {
    Reference<? extends RetryBudget> ref = queue.poll();
    if (ref != null) {
      synchronized (this) {
        drop((BudgetRef) ref, registry);
        expungeQueued(registry);
      }
    }
  }

  /**
   * Registers gauges for {@code budget} unless it has them. {@code policyTag} is the
   * {@code quell.policy} tag: the owning policy's name, or empty for a budget that belongs to no
   * single policy. Budgets with the same name and tag share one pair of gauges, which reports the
   * most spent of them.
   */
  public synchronized void watch(RetryBudget budget, String policyTag, MeterRegistry registry) {
    expungeQueued(registry);
    if (budget.isUnbounded() || isWatched(budget)) {
      return;
    }
    List<String> key = List.of(budget.name(), policyTag);
    BudgetGauges group = gauges.get(key);
    if (group == null) {
      group = new BudgetGauges(key);
      Tags tags = Tags.of(MeterNames.TAG_BUDGET, budget.name(), MeterNames.TAG_POLICY, policyTag);
      Gauge utilization = Gauge.builder(MeterNames.BUDGET_UTILIZATION, group, BudgetGauges::utilization)
          .description("How much of the retry budget is spent: 0 untouched, 1 refusing retries")
          .tags(tags).strongReference(true).register(registry);
      Gauge tokens = Gauge.builder(MeterNames.BUDGET_TOKENS, group, BudgetGauges::tokens)
          .description("Retries the budget could fund now")
          .tags(tags).strongReference(true).register(registry);
      group.ids = List.of(utilization.getId(), tokens.getId());
      gauges.put(key, group);
    }
    BudgetRef ref = new BudgetRef(budget, queue, group);
    group.add(ref);
    watchedCount++;
    rebuild();
  }

  /**
   * Removes the gauges of every budget the GC has collected and reported so far; returns how many
   * budget references were dropped. Normally this happens by itself; tests call it to be exact.
   */
  public synchronized int expunge(MeterRegistry registry) {
    return expungeQueued(registry);
  }

  /** Number of budgets watched, collected ones not yet expunged included. */
  public synchronized int watchedBudgets() {
    return watchedCount;
  }

  /** Number of (budget name, policy) pairs that have gauges. */
  public synchronized int gaugeGroups() {
    return gauges.size();
  }

  /** For tests: clears and queues every watched reference to {@code budget}, as the GC would once it is unreachable. */
  synchronized void simulateCollected(RetryBudget budget) {
    for (BudgetRef ref : watched) {
      if (ref != null && ref.get() == budget) {
        ref.enqueue();
      }
    }
  }

  private int expungeQueued(MeterRegistry registry) {
    int dropped = 0;
    Reference<? extends RetryBudget> ref;
    while ((ref = queue.poll()) != null) {
      drop((BudgetRef) ref, registry);
      dropped++;
    }
    return dropped;
  }

  private void drop(BudgetRef ref, MeterRegistry registry) {
    BudgetGauges group = ref.group;
    if (!group.remove(ref)) {
      return;
    }
    watchedCount--;
    if (group.isEmpty()) {
      for (Meter.Id id : group.ids) {
        registry.remove(id);
      }
      gauges.remove(group.key);
      String owner = group.key.get(1);
      MicrometerListener l = listener == null ? null : listener.get();
      if (!owner.isEmpty() && l != null) {
        l.retire(owner); // the policies of that name are gone: so are their call meters
      }
    }
    rebuild();
  }

  /** Rebuilds the identity table from the groups' live references. */
  private void rebuild() {
    List<BudgetRef> live = new ArrayList<>();
    for (BudgetGauges group : gauges.values()) {
      for (BudgetRef ref : group.members) {
        if (ref.get() != null) {
          live.add(ref);
        }
      }
    }
    int size = 2;
    while (size < live.size() * 2 + 2) {
      size <<= 1;
    }
    BudgetRef[] table = new BudgetRef[size];
    for (BudgetRef ref : live) {
      RetryBudget budget = ref.get();
      if (budget == null) {
        continue;
      }
      int i = spread(System.identityHashCode(budget)) & (size - 1);
      while (table[i] != null) {
        i = (i + 1) & (size - 1);
      }
      table[i] = ref;
    }
    watched = table;
  }

  private static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B9;
  }

  /** A weak reference to a watched budget that knows its gauges. */
  static final class BudgetRef extends WeakReference<RetryBudget> {
    final BudgetGauges group;

    BudgetRef(RetryBudget budget, ReferenceQueue<RetryBudget> queue, BudgetGauges group) {
      super(budget, queue);
      this.group = group;
    }
  }

  /**
   * The state behind the two gauges of one (budget name, policy) pair. Usually one budget; more when
   * budgets share a name (a policy rebuilt with the same name, say): then the most spent one is shown.
   */
  static final class BudgetGauges {
    final List<String> key;
    List<Meter.Id> ids = List.of();
    /** Copy-on-write under the binding's lock; read lock-free by the registry. */
    volatile BudgetRef[] members = new BudgetRef[0];

    BudgetGauges(List<String> key) {
      this.key = key;
    }

    void add(BudgetRef ref) {
      BudgetRef[] old = members;
      BudgetRef[] next = java.util.Arrays.copyOf(old, old.length + 1);
      next[old.length] = ref;
      members = next;
    }

    boolean remove(BudgetRef ref) {
      BudgetRef[] old = members;
      for (int i = 0; i < old.length; i++) {
        if (old[i] == ref) {
          BudgetRef[] next = new BudgetRef[old.length - 1];
          System.arraycopy(old, 0, next, 0, i);
          System.arraycopy(old, i + 1, next, i, old.length - i - 1);
          members = next;
          return true;
        }
      }
      return false;
    }

    boolean isEmpty() {
      return members.length == 0;
    }

    private @Nullable RetryBudget mostSpent() {
      RetryBudget chosen = null;
      double highest = -1;
      for (BudgetRef ref : members) {
        RetryBudget budget = ref.get();
        if (budget != null) {
          double u = budget.utilization();
          if (u > highest) {
            highest = u;
            chosen = budget;
          }
        }
      }
      return chosen;
    }

    double utilization() {
      RetryBudget budget = mostSpent();
      return budget == null ? Double.NaN : budget.utilization();
    }

    double tokens() {
      RetryBudget budget = mostSpent();
      return budget == null ? Double.NaN : budget.tokens();
    }
  }
}
