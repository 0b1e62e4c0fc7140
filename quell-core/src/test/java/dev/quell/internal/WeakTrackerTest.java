package dev.quell.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The weak tracking of breakers, limiters and policy instances behind the Micrometer and OpenTelemetry
 * bindings, tested once here: objects are held weakly, grouped by (name, policy tag); gauges read the
 * newest live member, counters add all members up and never go backwards when one is collected.
 */
class WeakTrackerTest {

  /** Something live with a count, like a breaker's refusals. Equal by value on purpose: tracking is by identity. */
  static final class Thing {
    final String name;
    long count;

    Thing(String name) {
      this.name = name;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Thing && ((Thing) o).name.equals(name);
    }

    @Override
    public int hashCode() {
      return name.hashCode();
    }
  }

  /** Events as a binding sees them, in order. */
  static class Recorded implements WeakTracker.Events<Thing, String> {
    final List<String> log = new ArrayList<>();

    @Override
    public String groupAdded(WeakTracker.Group<Thing, String> group) {
      Thing first = group.newest();
      log.add("added " + group.name() + "/" + group.policyTag() + " first " + (first == null ? null : first.count));
      return "data of " + group.name();
    }

    @Override
    public void groupGone(WeakTracker.Group<Thing, String> group) {
      log.add("gone " + group.name() + "/" + group.policyTag() + " " + group.data());
    }
  }

  private final WeakTracker<Thing, String> tracker = new WeakTracker<>(1);
  private final Recorded events = new Recorded();

  private boolean watch(Thing t, String tag) {
    return tracker.watch(t, t.name, tag, events);
  }

  /**
   * Runs the GC until {@code done} holds, at most 50 times. Weak references are cleared by a full GC but
   * queued afterwards by the JVM's reference handler thread: each round waits (generously) until that
   * thread has queued a reference of our own cleared by the same GC, so a busy machine cannot outrun it.
   */
  private static boolean gcUntil(BooleanSupplier done) {
    ReferenceQueue<Object> queue = new ReferenceQueue<>();
    for (int i = 0; i < 50 && !done.getAsBoolean(); i++) {
      WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
      System.gc();
      try {
        queue.remove(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return done.getAsBoolean();
      }
      sentinel.clear();
    }
    return done.getAsBoolean();
  }

  private static long total(WeakTracker.Group<Thing, String> group) {
    return group.total(0, t -> t.count);
  }

  @Test
  void collectedObjectsAreForgottenAtTheNextDrainAndTheirGroupGoes() {
    Thing kept = new Thing("kept");
    Thing gone = new Thing("gone");
    gone.count = 7;
    assertThat(watch(kept, "")).isTrue();
    assertThat(watch(gone, "owner")).isTrue();
    assertThat(tracker.watched()).isEqualTo(2);
    tracker.simulateCollected(gone);
    assertThat(tracker.isWatched(gone)).as("cleared: no longer found").isFalse();
    assertThat(tracker.drainIfNeeded(events)).isEqualTo(1);
    assertThat(tracker.drainIfNeeded(events)).isZero();
    assertThat(tracker.watched()).isEqualTo(1);
    assertThat(tracker.groups()).extracting(WeakTracker.Group::name).containsExactly("kept");
    assertThat(events.log).containsExactly("added kept/ first 0", "added gone/owner first 7",
        "gone gone/owner data of gone");
    assertThat(tracker.isWatched(kept)).isTrue();
  }

  @Test
  void watchingTwiceDoesNothingAndIdentityIsWhatCounts() {
    Thing a = new Thing("same");
    Thing b = new Thing("same"); // equal, not the same
    assertThat(watch(a, "")).isTrue();
    assertThat(watch(a, "")).isFalse();
    assertThat(tracker.isWatched(b)).isFalse();
    assertThat(watch(b, "")).isTrue();
    assertThat(tracker.groups()).singleElement().satisfies(g -> assertThat(g.size()).isEqualTo(2));
    List<Thing> many = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      Thing t = new Thing("same");
      many.add(t);
      watch(t, "");
    }
    assertThat(many).allMatch(tracker::isWatched);
    assertThat(tracker.isWatched(new Thing("same"))).isFalse();
    assertThat(tracker.watched()).isEqualTo(1002);
  }

  @Test
  void aGroupShowsItsNewestLiveMember() {
    Thing old = new Thing("inventory");
    Thing rebuilt = new Thing("inventory");
    watch(old, "inventory");
    watch(rebuilt, "inventory");
    WeakTracker.Group<Thing, String> group = tracker.groups().get(0);
    assertThat(group.newest()).isSameAs(rebuilt);
    tracker.simulateCollected(rebuilt);
    assertThat(group.newest()).as("cleared, before any drain").isSameAs(old);
    tracker.drain(events);
    assertThat(group.newest()).isSameAs(old);
    tracker.simulateCollected(old);
    assertThat(group.newest()).isNull();
  }

  @Test
  void aGroupsTotalNeverGoesBackwardsWhenAMemberIsCollected() {
    Thing old = new Thing("inventory");
    Thing rebuilt = new Thing("inventory");
    watch(old, "");
    watch(rebuilt, "");
    WeakTracker.Group<Thing, String> group = tracker.groups().get(0);
    old.count = 5;
    rebuilt.count = 2;
    assertThat(total(group)).isEqualTo(7);
    old.count = 6; // counted after the last reading, then collected: that one is lost, nothing more
    tracker.simulateCollected(old);
    assertThat(total(group)).as("cleared, not yet drained: its last reading").isEqualTo(7);
    tracker.drain(events);
    assertThat(total(group)).as("drained: carried").isEqualTo(7);
    rebuilt.count = 4;
    assertThat(total(group)).isEqualTo(9);
  }

  @Test
  void aGroupWhoseSetupFailsIsNotWatchedAndLeavesNoTrace() {
    Thing t = new Thing("refused");
    WeakTracker.Events<Thing, String> failing = new Recorded() {
      @Override
      public String groupAdded(WeakTracker.Group<Thing, String> group) {
        throw new IllegalStateException("registry refused");
      }
    };
    assertThatThrownBy(() -> tracker.watch(t, t.name, "", failing)).hasMessage("registry refused");
    assertThat(tracker.isWatched(t)).isFalse();
    assertThat(tracker.groups()).isEmpty();
    assertThat(tracker.watched()).isZero();
    tracker.simulateCollected(t);
    assertThat(tracker.drain(events)).as("the failed reference was never queued").isZero();
    assertThat(watch(t, "")).isTrue();
    assertThat(tracker.watched()).isEqualTo(1);
  }

  private void watchAndDrop(int n) {
    for (int i = 0; i < n; i++) {
      watch(new Thing("key-" + i), "scoped");
    }
  }

  @Test
  void objectsThatComeAndGoLeaveNothingBehind() {
    for (int round = 0; round < 10; round++) {
      watchAndDrop(50);
      assertThat(gcUntil(() -> {
        tracker.drain(events);
        return tracker.watched() == 0;
      })).as("the GC cleared every dropped object").isTrue();
      assertThat(tracker.groups()).isEmpty();
    }
    assertThat(events.log.stream().filter(l -> l.startsWith("gone"))).hasSize(500);
  }

  @Test
  void manyThreadsWatchingTheSameObjectsWatchEachOnce() throws Exception {
    List<Thing> things = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      things.add(new Thing("t" + (i % 50))); // 50 groups of 10
    }
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<Integer>> firsts = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int offset = t;
        firsts.add(pool.submit(() -> {
          start.await();
          int first = 0;
          for (int i = 0; i < things.size(); i++) {
            Thing thing = things.get((i + offset * 61) % things.size());
            if (!tracker.isWatched(thing) && watch(thing, "")) {
              first++;
            }
            assertThat(tracker.isWatched(thing)).isTrue();
          }
          return first;
        }));
      }
      start.countDown();
      int total = 0;
      for (Future<Integer> f : firsts) {
        total += f.get(30, TimeUnit.SECONDS);
      }
      assertThat(total).as("each object watched by exactly one thread").isEqualTo(500);
    } finally {
      pool.shutdownNow();
    }
    assertThat(tracker.watched()).isEqualTo(500);
    assertThat(tracker.groups()).hasSize(50).allSatisfy(g -> assertThat(g.size()).isEqualTo(10));
    assertThat(events.log).hasSize(50);
  }

  @Test
  void highestPicksTheLiveMemberWithTheLargestMeasureTheOldestOfEqualsAndNeverANaN() {
    WeakTracker<Thing, String> tracker = new WeakTracker<>(0);
    Recorded events = new Recorded();
    Thing nan = new Thing("a");
    nan.count = -1; // measured as NaN below
    Thing low = new Thing("a");
    low.count = 1;
    Thing high = new Thing("a");
    high.count = 5;
    Thing tie = new Thing("a");
    tie.count = 5;
    for (Thing t : List.of(nan, low, high, tie)) {
      tracker.watch(t, "a", "", events);
    }
    WeakTracker.Group<Thing, String> group = tracker.groups().get(0);
    java.util.function.ToDoubleFunction<Thing> measure = t -> t.count < 0 ? Double.NaN : t.count;
    assertThat(group.highest(measure)).isSameAs(high);

    tracker.simulateCollected(high);
    tracker.drain(events);
    assertThat(group.highest(measure)).as("the tie, once the first is gone").isSameAs(tie);

    tracker.simulateCollected(tie);
    tracker.simulateCollected(low);
    tracker.drain(events);
    assertThat(group.highest(measure)).as("only a NaN left: nothing to report").isNull();
  }
}
