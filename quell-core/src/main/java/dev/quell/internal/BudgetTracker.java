package dev.quell.internal;

import dev.quell.RetryBudget;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The retry budgets one telemetry binding reports, held only through weak references: watching a
 * budget never keeps it, or the policy that owns it, alive. Budgets are grouped by (budget name,
 * policy tag); a group reports the most spent of its budgets. When the GC collects a budget its
 * reference is queued, and the next drain (on every call's end, a single field read when the queue is
 * empty; on every registration) forgets it, tells the binding when a group lost its last budget, and
 * when a policy tag lost its last group. So budgets that come and go (scope keys, rebuilt policies)
 * cannot grow the binding's series without bound.
 *
 * <p>The tracker never holds what the binding reports into (a meter registry, an SDK): each method
 * that can change the groups takes the binding's {@link Events}, so a binding kept in a weak map keyed
 * by its registry does not keep that registry alive. {@link #isWatched} is lock-free and
 * allocation-free; changes take this object's lock.
 *
 * @param <T> what the binding keeps with each group: its gauges' ids, its attributes
 */
@Internal
public final class BudgetTracker<T> {
  /** What a binding does when the groups change. Called under the tracker's lock, on the caller's thread. */
  public interface Events<T> {
    /**
     * A (budget name, policy tag) pair is reported for the first time: set up its series (gauges that
     * read {@link Group#mostSpent()}) and return what to keep with the group. If this throws, the
     * budget is not watched.
     */
    T groupAdded(Group<T> group);

    /** Every budget of {@code group} was collected: take its series down. */
    void groupGone(Group<T> group);

    /**
     * Every group tagged {@code policy} is gone, so the policies of that name are gone (a scope key was
     * forgotten, a policy rebuilt under another name): their call series can go too. Never called for
     * the empty tag.
     */
    void ownerGone(String policy);
  }

  private static final Ref[] EMPTY_TABLE = new Ref[2];

  private final ReferenceQueue<RetryBudget> queue = new ReferenceQueue<>();
  /** Identity hash table of the watched budgets; copy-on-write, so readers take no lock. */
  private volatile Ref[] table = EMPTY_TABLE;
  /** Guarded by this. */
  private final Map<List<String>, Group<T>> groups = new LinkedHashMap<>();
  /** How many groups carry each non-empty policy tag; guarded by this. */
  private final Map<String, Integer> groupsByOwner = new HashMap<>();
  /** The groups, for gauge callbacks; copy-on-write. */
  private volatile List<Group<T>> snapshot = List.of();
  private int watchedCount;

  /**
   * The {@code quell.policy} tag of a budget's series: the policy's name when the budget is that
   * policy's own (automatic budgets carry their policy's name), empty for a budget that may serve
   * several policies.
   */
  public static String policyTag(String policy, String budgetName) {
    return budgetName.equals(policy) ? policy : "";
  }

  /** True when {@code budget} is watched already. Lock-free and allocation-free: it runs on every call. */
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

  /**
   * What a binding does at every call's end: starts watching the budget the call spent from, tagged
   * for {@code policy}, unless it is watched already, then drains what the GC reported. Allocates
   * nothing once the budget is watched and the GC has reported nothing.
   */
  public void callEnded(String policy, RetryBudget budget, Events<T> events) {
    if (!budget.isUnbounded() && !isWatched(budget)) {
      watch(budget, policyTag(policy, budget.name()), events);
    }
    drainIfNeeded(events);
  }

  /**
   * Starts watching {@code budget} under {@code policyTag} (the owning policy's name, or empty for a
   * budget that belongs to no single policy), unless it is watched already. Does nothing for
   * {@link RetryBudget#NONE} or {@link RetryBudget#AUTOMATIC} (a marker, not a budget). Drains what
   * the GC reported first. Returns true when the budget was not watched before.
   */
  public synchronized boolean watch(RetryBudget budget, String policyTag, Events<T> events) {
    drainQueued(events);
    if (budget.isUnbounded() || budget == RetryBudget.AUTOMATIC || isWatched(budget)) {
      return false;
    }
    List<String> key = List.of(budget.name(), policyTag);
    Group<T> group = groups.get(key);
    if (group == null) {
      group = new Group<>(budget.name(), policyTag);
      group.data = events.groupAdded(group);
      groups.put(key, group);
      if (!policyTag.isEmpty()) {
        groupsByOwner.merge(policyTag, 1, Integer::sum);
      }
      snapshot = List.copyOf(groups.values());
    }
    group.add(new Ref(budget, queue, group));
    watchedCount++;
    rebuild();
    return true;
  }

  /** Forgets collected budgets if the GC has reported any; returns how many. A single field read when it has not. */
  public int drainIfNeeded(Events<T> events) {
    Reference<? extends RetryBudget> ref = queue.poll();
    if (ref == null) {
      return 0;
    }
    synchronized (this) {
      drop((Ref) ref, events);
      return 1 + drainQueued(events);
    }
  }

  /**
   * Forgets every budget the GC has collected and reported so far; returns how many budget references
   * were dropped. Normally this happens by itself; tests call it to be exact.
   */
  public synchronized int drain(Events<T> events) {
    return drainQueued(events);
  }

  /** Budgets watched, collected ones not yet drained included. */
  public synchronized int watchedBudgets() {
    return watchedCount;
  }

  /** The groups reported now, in the order they were first reported. Lock-free: for gauge callbacks. */
  public List<Group<T>> groups() {
    return snapshot;
  }

  /** For tests: clears and queues the references to {@code budget}, as the GC does once it is unreachable. */
  public synchronized void simulateCollected(RetryBudget budget) {
    for (Ref ref : table) {
      if (ref != null && ref.get() == budget) {
        ref.enqueue();
      }
    }
  }

  private int drainQueued(Events<T> events) {
    int dropped = 0;
    Reference<? extends RetryBudget> ref;
    while ((ref = queue.poll()) != null) {
      drop((Ref) ref, events);
      dropped++;
    }
    return dropped;
  }

  @SuppressWarnings("unchecked")
  private void drop(Ref ref, Events<T> events) {
    Group<T> group = (Group<T>) ref.group;
    if (!group.remove(ref)) {
      return;
    }
    watchedCount--;
    if (group.isEmpty()) {
      groups.remove(List.of(group.budgetName, group.policyTag));
      snapshot = List.copyOf(groups.values());
      events.groupGone(group);
      String owner = group.policyTag;
      if (!owner.isEmpty() && groupsByOwner.merge(owner, -1, Integer::sum) == 0) {
        groupsByOwner.remove(owner);
        events.ownerGone(owner);
      }
    }
    rebuild();
  }

  /** Rebuilds the identity table from the groups' live references. */
  private void rebuild() {
    List<Ref> live = new ArrayList<>();
    for (Group<T> group : groups.values()) {
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

  /** A weak reference to a watched budget that knows its group. */
  private static final class Ref extends WeakReference<RetryBudget> {
    final Group<?> group;

    Ref(RetryBudget budget, ReferenceQueue<RetryBudget> queue, Group<?> group) {
      super(budget, queue);
      this.group = group;
    }
  }

  /**
   * The budgets reported under one (budget name, policy tag): usually one; more when budgets share a
   * name (a policy rebuilt with the same name, say), and then the most spent one is reported. Holds
   * its budgets weakly and nothing of the tracker, so a gauge may hold the group strongly.
   *
   * @param <T> what the binding keeps with the group
   */
  public static final class Group<T> {
    private final String budgetName;
    private final String policyTag;
    /** Set once under the tracker's lock, before the group is published in a snapshot. */
    private @Nullable T data;
    /** Copy-on-write under the tracker's lock; read lock-free by gauge callbacks. */
    private volatile Ref[] members = new Ref[0];

    Group(String budgetName, String policyTag) {
      this.budgetName = budgetName;
      this.policyTag = policyTag;
    }

    /** The budgets' name: the {@code quell.budget} tag. */
    public String budgetName() {
      return budgetName;
    }

    /** The {@code quell.policy} tag: the owning policy's name, or empty. */
    public String policyTag() {
      return policyTag;
    }

    /** What {@link Events#groupAdded} returned for this group. */
    public T data() {
      T d = data;
      if (d == null) {
        throw new IllegalStateException("group " + budgetName + "/" + policyTag + " has no data yet");
      }
      return d;
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

    /** The most spent budget's utilization, NaN when all were collected. */
    public double utilization() {
      RetryBudget budget = mostSpent();
      return budget == null ? Double.NaN : budget.utilization();
    }

    /** The most spent budget's tokens, NaN when all were collected. */
    public double tokens() {
      RetryBudget budget = mostSpent();
      return budget == null ? Double.NaN : budget.tokens();
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

    @Override
    public String toString() {
      return "BudgetTracker.Group[" + budgetName + ", " + policyTag + ", " + members.length + " budgets]";
    }
  }
}
