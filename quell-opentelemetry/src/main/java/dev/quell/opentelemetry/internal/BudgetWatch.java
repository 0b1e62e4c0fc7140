package dev.quell.opentelemetry.internal;

import dev.quell.RetryBudget;
import dev.quell.internal.Internal;
import io.opentelemetry.api.common.Attributes;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The budgets one OpenTelemetry instance reports, held only through weak references: watching a
 * budget never keeps it, or the policy that owns it, alive. Budgets are grouped by (name, policy
 * tag); a group reports the most spent of its budgets, and a group whose budgets were all collected
 * is dropped, so budgets that come and go (scope keys, rebuilt policies) cannot grow the set of
 * reported series without bound. The GC's reports are picked up on every call's end (a single field
 * read when there are none), on every registration and on every collection of the gauges.
 */
@Internal
public final class BudgetWatch {
  private static final Ref[] EMPTY_TABLE = new Ref[2];

  private final ReferenceQueue<RetryBudget> queue = new ReferenceQueue<>();
  /** Identity hash table of the watched budgets; copy-on-write, so readers take no lock. */
  private volatile Ref[] table = EMPTY_TABLE;
  /** Guarded by this. */
  private final Map<List<String>, Group> groups = new LinkedHashMap<>();
  /** The groups, for the gauge callbacks; copy-on-write. */
  private volatile Group[] snapshot = new Group[0];
  private int watchedCount;
  /** Told the policy name whose own budgets were all collected. */
  private volatile @Nullable Consumer<String> ownerGone;

  /** Sets who is told when every budget a policy name owned was collected. */
  void onOwnerGone(Consumer<String> consumer) {
    ownerGone = consumer;
  }

  /** True when {@code budget} is reported already. Lock-free and allocation-free: it runs on every call. */
  public boolean isWatched(RetryBudget budget) {
    Ref[] t = table;
    int mask = t.length - 1;
    int i = spread(System.identityHashCode(budget)) & mask;
    while (true) {
      Ref ref = t[i];
      if (ref == null) {
        return false;
      }
      if (ref.get() == budget) {
        return true;
      }
      i = (i + 1) & mask;
    }
  }

  /** Forgets collected budgets if the GC has reported any. Cheap when it has not. */
  public void expungeIfNeeded() {
    Reference<? extends RetryBudget> ref = queue.poll();
    if (ref != null) {
      synchronized (this) {
        drop((Ref) ref);
        expungeQueued();
      }
    }
  }

  /** Starts reporting {@code budget} under {@code policyTag}, unless it is reported already. */
  public synchronized void watch(RetryBudget budget, String policyTag) {
    expungeQueued();
    if (budget.isUnbounded() || budget == RetryBudget.AUTOMATIC || isWatched(budget)) {
      return;
    }
    List<String> key = List.of(budget.name(), policyTag);
    Group group = groups.get(key);
    if (group == null) {
      group = new Group(key, Attributes.of(Names.BUDGET, budget.name(), Names.POLICY, policyTag));
      groups.put(key, group);
      snapshot = groups.values().toArray(new Group[0]);
    }
    group.add(new Ref(budget, queue, group));
    watchedCount++;
    rebuild();
  }

  /** Forgets every budget the GC has collected and reported so far; returns how many. */
  public synchronized int expunge() {
    return expungeQueued();
  }

  /** Budgets watched, collected ones not yet expunged included. */
  public synchronized int watchedBudgets() {
    return watchedCount;
  }

  /** The groups reported now. */
  public Group[] groups() {
    return snapshot;
  }

  /** For tests: clears and queues the references to {@code budget}, as the GC would once it is unreachable. */
  public synchronized void simulateCollected(RetryBudget budget) {
    for (Ref ref : table) {
      if (ref != null && ref.get() == budget) {
        ref.enqueue();
      }
    }
  }

  private int expungeQueued() {
    int dropped = 0;
    Reference<? extends RetryBudget> ref;
    while ((ref = queue.poll()) != null) {
      drop((Ref) ref);
      dropped++;
    }
    return dropped;
  }

  private void drop(Ref ref) {
    Group group = ref.group;
    if (!group.remove(ref)) {
      return;
    }
    watchedCount--;
    if (group.isEmpty()) {
      groups.remove(group.key);
      snapshot = groups.values().toArray(new Group[0]);
      String owner = group.key.get(1);
      Consumer<String> c = ownerGone;
      if (!owner.isEmpty() && c != null) {
        c.accept(owner);
      }
    }
    rebuild();
  }

  private void rebuild() {
    List<Ref> live = new ArrayList<>();
    for (Group group : groups.values()) {
      for (Ref ref : group.members) {
        if (ref.get() != null) {
          live.add(ref);
        }
      }
    }
    int size = 2;
    while (size < live.size() * 2 + 2) {
      size <<= 1;
    }
    Ref[] t = new Ref[size];
    for (Ref ref : live) {
      RetryBudget budget = ref.get();
      if (budget == null) {
        continue;
      }
      int i = spread(System.identityHashCode(budget)) & (size - 1);
      while (t[i] != null) {
        i = (i + 1) & (size - 1);
      }
      t[i] = ref;
    }
    table = t;
  }

  private static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B9;
  }

  static final class Ref extends WeakReference<RetryBudget> {
    final Group group;

    Ref(RetryBudget budget, ReferenceQueue<RetryBudget> queue, Group group) {
      super(budget, queue);
      this.group = group;
    }
  }

  /** The budgets reported under one (name, policy tag): usually one. */
  public static final class Group {
    final List<String> key;
    /** {@code quell.budget} and {@code quell.policy}. */
    public final Attributes attributes;
    private volatile Ref[] members = new Ref[0];

    Group(List<String> key, Attributes attributes) {
      this.key = key;
      this.attributes = attributes;
    }

    void add(Ref ref) {
      Ref[] old = members;
      Ref[] next = Arrays.copyOf(old, old.length + 1);
      next[old.length] = ref;
      members = next;
    }

    boolean remove(Ref ref) {
      Ref[] old = members;
      for (int i = 0; i < old.length; i++) {
        if (old[i] == ref) {
          Ref[] next = new Ref[old.length - 1];
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

    /** The most spent live budget of the group, or null when all were collected. */
    public @Nullable RetryBudget mostSpent() {
      RetryBudget chosen = null;
      double highest = -1;
      for (Ref ref : members) {
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
  }
}
