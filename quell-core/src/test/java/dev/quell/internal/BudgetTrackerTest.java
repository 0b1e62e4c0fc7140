package dev.quell.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The weak budget tracking behind the Micrometer and OpenTelemetry bindings, tested once here: budgets
 * are held weakly, grouped by (name, policy tag), and what the GC collects is forgotten at the next
 * drain, which reports the groups and policy tags that lost their last budget.
 */
class BudgetTrackerTest {
  private static final TimeSource STILL = new StillTime();

  /** Events as a binding sees them, in order. */
  static class Recorded implements BudgetTracker.Events<String> {
    final List<String> log = new ArrayList<>();

    @Override
    public String groupAdded(BudgetTracker.Group<String> group) {
      log.add("added " + group.budgetName() + "/" + group.policyTag());
      return "data of " + group.budgetName();
    }

    @Override
    public void groupGone(BudgetTracker.Group<String> group) {
      log.add("gone " + group.budgetName() + "/" + group.policyTag() + " " + group.data());
    }

    @Override
    public void ownerGone(String policy) {
      log.add("owner gone " + policy);
    }
  }

  private final BudgetTracker<String> tracker = new BudgetTracker<>();
  private final Recorded events = new Recorded();

  private static RetryBudget budget() {
    return RetryBudget.of(0.1, 3, STILL);
  }

  /** A budget of its own called {@code name}: the automatic budget of a new policy of that name. */
  private static RetryBudget named(String name) {
    return Resilience.DEFAULT.withName(name).withTimeSource(STILL).budget();
  }

  /**
   * Runs the GC until {@code done} holds, giving up after 30 s. A full GC clears weak references at
   * once, but the JVM's reference-handler thread enqueues them afterwards: on a busy machine it may
   * not have run yet, so each round yields to it before looking again.
   */
  private static boolean gcUntil(BooleanSupplier done) {
    long giveUpAt = System.nanoTime() + 30_000_000_000L;
    while (!done.getAsBoolean() && System.nanoTime() - giveUpAt < 0) {
      System.gc();
      for (int i = 0; i < 100 && !done.getAsBoolean(); i++) {
        Thread.yield();
      }
    }
    return done.getAsBoolean();
  }

  @Test
  void collectedBudgetsAreForgottenAtTheNextDrain() {
    List<RetryBudget> budgets = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      RetryBudget b = budget();
      budgets.add(b);
      assertThat(tracker.watch(b, "", events)).isTrue();
    }
    assertThat(tracker.watchedBudgets()).isEqualTo(100);
    assertThat(tracker.groups()).hasSize(100);

    for (RetryBudget b : budgets.subList(0, 60)) {
      tracker.simulateCollected(b); // what the GC does once nothing else holds the budget
    }
    assertThat(tracker.drain(events)).isEqualTo(60);
    assertThat(tracker.watchedBudgets()).isEqualTo(40);
    assertThat(tracker.groups()).hasSize(40);
    assertThat(events.log.stream().filter(l -> l.startsWith("gone"))).hasSize(60);
    assertThat(events.log).noneMatch(l -> l.startsWith("owner gone")); // the empty tag has no owner
    for (RetryBudget b : budgets.subList(60, 100)) {
      assertThat(tracker.isWatched(b)).isTrue();
    }
    for (RetryBudget b : budgets.subList(0, 60)) {
      assertThat(tracker.isWatched(b)).isFalse();
    }
  }

  @Test
  void watchingTwiceOrWatchingNothingDoesNothing() {
    RetryBudget b = budget();
    assertThat(tracker.watch(b, "p", events)).isTrue();
    assertThat(tracker.watch(b, "p", events)).isFalse();
    assertThat(tracker.watch(b, "", events)).isFalse(); // one budget, one group: the first tag wins
    assertThat(tracker.watch(RetryBudget.NONE, "", events)).isFalse();
    assertThat(tracker.watch(RetryBudget.AUTOMATIC, "", events)).isFalse();
    assertThat(tracker.isWatched(RetryBudget.NONE)).isFalse();
    assertThat(tracker.watchedBudgets()).isEqualTo(1);
    assertThat(events.log).containsExactly("added " + b.name() + "/p");
  }

  @Test
  void budgetsWithTheSameNameAndTagShareAGroupThatShowsTheMostSpent() {
    RetryBudget calm = named("orders");
    RetryBudget busy = named("orders");
    tracker.watch(calm, "orders", events);
    tracker.watch(busy, "orders", events);
    RetryBudget unowned = named("orders");
    tracker.watch(unowned, "", events); // same name, another tag: its own group
    assertThat(tracker.groups()).hasSize(2);
    BudgetTracker.Group<String> group = tracker.groups().get(0);
    assertThat(group.budgetName()).isEqualTo("orders");
    assertThat(group.policyTag()).isEqualTo("orders");
    assertThat(group.data()).isEqualTo("data of orders");

    for (int i = 0; i < 5; i++) {
      busy.trySpend();
    }
    assertThat(group.mostSpent()).isSameAs(busy);
    assertThat(group.utilization()).isEqualTo(busy.utilization());
    assertThat(group.tokens()).isEqualTo(busy.tokens()).isLessThan(calm.tokens());

    tracker.simulateCollected(busy);
    tracker.drain(events);
    assertThat(group.mostSpent()).isSameAs(calm); // the one left
    assertThat(events.log).noneMatch(l -> l.startsWith("gone"));

    tracker.simulateCollected(calm);
    tracker.drain(events);
    assertThat(group.mostSpent()).isNull();
    assertThat(group.utilization()).isNaN();
    assertThat(group.tokens()).isNaN();
    assertThat(tracker.groups()).hasSize(1);
    assertThat(tracker.isWatched(unowned)).isTrue();
    assertThat(events.log).endsWith("gone orders/orders data of orders", "owner gone orders");
  }

  @Test
  void anOwnerIsGoneOnlyWhenItsLastGroupIs() {
    RetryBudget own = named("p");
    RetryBudget other = named("q");
    tracker.watch(own, "p", events);
    tracker.watch(other, "p", events); // not what the bindings do, but a tag may carry several groups
    tracker.simulateCollected(own);
    tracker.drain(events);
    assertThat(events.log).contains("gone p/p data of p").doesNotContain("owner gone p");
    tracker.simulateCollected(other);
    tracker.drain(events);
    assertThat(events.log).endsWith("gone q/p data of q", "owner gone p");

    RetryBudget back = named("p"); // the name shows up again: a new group, a new owner
    tracker.watch(back, "p", events);
    tracker.simulateCollected(back);
    tracker.drain(events);
    assertThat(events.log).endsWith("added p/p", "gone p/p data of p", "owner gone p");
  }

  @Test
  void callEndedWatchesTheCallsBudgetTaggedForItsOwnerAndDrains() {
    RetryBudget own = named("inventory");
    RetryBudget shared = named("pool");
    RetryBudget gone = budget();
    tracker.watch(gone, "", events);
    tracker.simulateCollected(gone);

    tracker.callEnded("inventory", own, events);
    tracker.callEnded("inventory", shared, events);
    tracker.callEnded("inventory", RetryBudget.NONE, events);
    tracker.callEnded("inventory", own, events);

    assertThat(tracker.watchedBudgets()).isEqualTo(2);
    assertThat(tracker.groups()).extracting(g -> g.budgetName() + "/" + g.policyTag())
        .containsExactly("inventory/inventory", "pool/");
    assertThat(BudgetTracker.policyTag("inventory", "inventory")).isEqualTo("inventory");
    assertThat(BudgetTracker.policyTag("inventory", "pool")).isEmpty();
  }

  @Test
  void drainIfNeededIsQuietUntilTheGcReports() {
    RetryBudget b = budget();
    tracker.watch(b, "", events);
    assertThat(tracker.drainIfNeeded(events)).isZero();
    tracker.simulateCollected(b);
    assertThat(tracker.drainIfNeeded(events)).isEqualTo(1);
    assertThat(tracker.drainIfNeeded(events)).isZero();
    assertThat(tracker.watchedBudgets()).isZero();
  }

  @Test
  void aGroupWhoseSetupFailsIsNotWatched() {
    RetryBudget b = budget();
    BudgetTracker.Events<String> failing = new Recorded() {
      @Override
      public String groupAdded(BudgetTracker.Group<String> group) {
        throw new IllegalStateException("registry refused");
      }
    };
    assertThatThrownBy(() -> tracker.watch(b, "", failing)).hasMessage("registry refused");
    assertThat(tracker.isWatched(b)).isFalse();
    assertThat(tracker.groups()).isEmpty();
    assertThat(tracker.watch(b, "", events)).isTrue();
  }

  @Test
  void identityNotEquality() {
    // many budgets in one small table: probing must find each, and only each, by identity
    List<RetryBudget> budgets = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      RetryBudget b = named("same");
      budgets.add(b);
      tracker.watch(b, "", events);
    }
    assertThat(tracker.groups()).hasSize(1);
    assertThat(budgets).allMatch(tracker::isWatched);
    assertThat(tracker.isWatched(named("same"))).isFalse();
  }

  @Test
  void budgetsThatComeAndGoLeaveNothingBehind() {
    for (int round = 0; round < 20; round++) {
      for (int key = 0; key < 50; key++) {
        // like a scope key: a budget per key, reported once and dropped
        tracker.callEnded("scoped", budget(), events);
      }
      assertThat(tracker.watchedBudgets()).isLessThanOrEqualTo(50 * (round + 1));
      assertThat(gcUntil(() -> {
        tracker.drain(events);
        return tracker.watchedBudgets() == 0;
      })).as("the GC cleared every dropped budget").isTrue();
      assertThat(tracker.groups()).isEmpty();
    }
  }

  @Test
  void watchingDoesNotKeepAGarbagePolicyOrItsBudgetAlive() {
    Resilience policy = Resilience.DEFAULT.withName("temporary").withTimeSource(STILL);
    policy.run(() -> {
      throw new IOException("flaky");
    });
    tracker.callEnded(policy.name(), policy.budget(), events);
    assertThat(tracker.isWatched(policy.budget())).isTrue();
    WeakReference<Resilience> policyRef = new WeakReference<>(policy);
    WeakReference<RetryBudget> budgetRef = new WeakReference<>(policy.budget());
    policy = null;
    assertThat(gcUntil(() -> policyRef.get() == null && budgetRef.get() == null)).isTrue();
    assertThat(gcUntil(() -> {
      tracker.drain(events);
      return tracker.groups().isEmpty();
    })).isTrue();
    assertThat(events.log).endsWith("gone temporary/temporary data of temporary", "owner gone temporary");
  }
}
