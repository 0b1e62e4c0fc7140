package dev.quell.internal;

import dev.quell.RetryBudget;
import java.util.ArrayList;
import java.util.HashMap;
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

  /** The budgets, grouped by (budget name, policy tag); each group carries this tracker's {@link Group}. */
  private final WeakTracker<RetryBudget, Group<T>> budgets = new WeakTracker<>(0);
  /** How many groups carry each non-empty policy tag; changed only in {@link #budgets}' callbacks, under its lock. */
  private final Map<String, Integer> groupsByOwner = new HashMap<>();
  /** The groups, for gauge callbacks; copy-on-write in {@link #budgets}' callbacks. */
  private volatile List<Group<T>> snapshot = List.of();
  /** The adapter for the binding's events last seen: a binding passes the same ones every call. */
  private volatile @Nullable Adapter adapter;

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
    return budgets.isWatched(budget);
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
  public boolean watch(RetryBudget budget, String policyTag, Events<T> events) {
    Adapter a = adapter(events);
    if (budget.isUnbounded() || budget == RetryBudget.AUTOMATIC) {
      budgets.drain(a);
      return false;
    }
    return budgets.watch(budget, budget.name(), policyTag, a);
  }

  /** Forgets collected budgets if the GC has reported any; returns how many. A single field read when it has not. */
  public int drainIfNeeded(Events<T> events) {
    return budgets.drainIfNeeded(adapter(events));
  }

  /**
   * Forgets every budget the GC has collected and reported so far; returns how many budget references
   * were dropped. Normally this happens by itself; tests call it to be exact.
   */
  public int drain(Events<T> events) {
    return budgets.drain(adapter(events));
  }

  /** Budgets watched, collected ones not yet drained included. */
  public int watchedBudgets() {
    return budgets.watched();
  }

  /** The groups reported now, in the order they were first reported. Lock-free: for gauge callbacks. */
  public List<Group<T>> groups() {
    return snapshot;
  }

  /** For tests: clears and queues the references to {@code budget}, as the GC does once it is unreachable. */
  public void simulateCollected(RetryBudget budget) {
    budgets.simulateCollected(budget);
  }

  private Adapter adapter(Events<T> events) {
    Adapter a = adapter;
    if (a == null || a.events != events) {
      a = new Adapter(events); // (only when the binding changes; a race makes one more, harmlessly)
      adapter = a;
    }
    return a;
  }

  /** The binding's events, told in budget terms; runs under {@link #budgets}' lock. */
  private final class Adapter implements WeakTracker.Events<RetryBudget, Group<T>> {
    final Events<T> events;

    Adapter(Events<T> events) {
      this.events = events;
    }

    @Override
    public Group<T> groupAdded(WeakTracker.Group<RetryBudget, Group<T>> members) {
      Group<T> group = new Group<>(members);
      group.data = events.groupAdded(group); // if this throws, the budget is not watched
      if (!group.policyTag().isEmpty()) {
        groupsByOwner.merge(group.policyTag(), 1, Integer::sum);
      }
      List<Group<T>> next = new ArrayList<>(snapshot);
      next.add(group);
      snapshot = List.copyOf(next);
      return group;
    }

    @Override
    public void groupGone(WeakTracker.Group<RetryBudget, Group<T>> members) {
      Group<T> group = members.data();
      List<Group<T>> next = new ArrayList<>(snapshot);
      next.remove(group);
      snapshot = List.copyOf(next);
      events.groupGone(group);
      String owner = group.policyTag();
      if (!owner.isEmpty() && groupsByOwner.merge(owner, -1, Integer::sum) == 0) {
        groupsByOwner.remove(owner);
        events.ownerGone(owner);
      }
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
    private final WeakTracker.Group<RetryBudget, ?> members;
    /** Set once under the tracker's lock, before the group is published in a snapshot. */
    private @Nullable T data;

    Group(WeakTracker.Group<RetryBudget, ?> members) {
      this.members = members;
    }

    /** The budgets' name: the {@code quell.budget} tag. */
    public String budgetName() {
      return members.name();
    }

    /** The {@code quell.policy} tag: the owning policy's name, or empty. */
    public String policyTag() {
      return members.policyTag();
    }

    /** What {@link Events#groupAdded} returned for this group. */
    public T data() {
      T d = data;
      if (d == null) {
        throw new IllegalStateException("group " + budgetName() + "/" + policyTag() + " has no data yet");
      }
      return d;
    }

    /** The most spent live budget of the group, or null when all were collected. */
    public @Nullable RetryBudget mostSpent() {
      return members.highest(RetryBudget::utilization);
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

    @Override
    public String toString() {
      return "BudgetTracker.Group[" + budgetName() + ", " + policyTag() + ", " + members.size() + " budgets]";
    }
  }
}
