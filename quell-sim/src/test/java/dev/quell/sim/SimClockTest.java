package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.TimeSource;
import dev.quell.sim.internal.SimClock;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class SimClockTest {

  @Test
  void eventsRunInTimeOrderAndThenInTheOrderTheyWereScheduled() {
    SimClock clock = new SimClock(new SplittableRandom(1));
    List<String> ran = new ArrayList<>();
    clock.schedule(() -> ran.add("b@20"), 20);
    clock.schedule(() -> ran.add("a@10"), 10);
    clock.schedule(() -> ran.add("c@20"), 20);
    clock.schedule(() -> {
      ran.add("d@5");
      clock.schedule(() -> ran.add("e@5+0"), 0);
    }, 5);
    clock.run(Long.MAX_VALUE, () -> false);
    assertThat(ran).containsExactly("d@5", "e@5+0", "a@10", "b@20", "c@20");
    assertThat(clock.nanoTime()).isEqualTo(20);
    assertThat(clock.eventsRun()).isEqualTo(5);
  }

  @Test
  void aCancelledEventNeverRuns() {
    SimClock clock = new SimClock(new SplittableRandom(1));
    List<String> ran = new ArrayList<>();
    TimeSource.Scheduled s = clock.schedule(() -> ran.add("cancelled"), 10);
    clock.schedule(() -> ran.add("kept"), 20);
    assertThat(s.cancel()).isTrue();
    assertThat(s.cancel()).isFalse();
    clock.run(Long.MAX_VALUE, () -> false);
    assertThat(ran).containsExactly("kept");
  }

  @Test
  void manyEventsComeOutSorted() {
    SimClock clock = new SimClock(new SplittableRandom(1));
    SplittableRandom random = new SplittableRandom(2);
    List<Long> seen = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      clock.schedule(() -> seen.add(clock.nanoTime()), random.nextLong(1_000_000));
    }
    clock.run(500_000, () -> false);
    assertThat(seen).isSorted().allMatch(t -> t <= 500_000);
    clock.run(Long.MAX_VALUE, () -> false);
    assertThat(seen).hasSize(10_000).isSorted();
  }

  @Test
  void completingAFutureFromAnEventRunsItsDependentsAtThatVirtualInstant() {
    SimClock clock = new SimClock(new SplittableRandom(1));
    CompletableFuture<String> f = new CompletableFuture<>();
    long[] seenAt = {-1};
    f.thenRun(() -> seenAt[0] = clock.nanoTime());
    clock.schedule(() -> f.complete("done"), 42);
    clock.run(Long.MAX_VALUE, () -> false);
    assertThat(seenAt[0]).isEqualTo(42);
  }

  @Test
  void sleepingAndSchedulingFromAnotherThreadAreRefused() throws Exception {
    SimClock clock = new SimClock(new SplittableRandom(1));
    assertThatThrownBy(() -> clock.sleep(1)).isInstanceOf(UnsupportedOperationException.class);
    Throwable[] thrown = new Throwable[1];
    Thread other = new Thread(() -> {
      try {
        clock.schedule(() -> { }, 1);
      } catch (IllegalStateException e) {
        thrown[0] = e;
      }
    });
    other.start();
    other.join();
    assertThat(thrown[0]).isInstanceOf(IllegalStateException.class);
  }
}
