package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VirtualTimeTest {

  @Test
  void advanceRunsDueTimersInTimeOrderAtTheirOwnTime() {
    VirtualTime time = VirtualTime.create();
    List<String> fired = new ArrayList<>();
    time.schedule(() -> fired.add("b@" + time.elapsed().toMillis()), Duration.ofMillis(20).toNanos());
    time.schedule(() -> fired.add("a@" + time.elapsed().toMillis()), Duration.ofMillis(10).toNanos());
    time.schedule(() -> fired.add("a2@" + time.elapsed().toMillis()), Duration.ofMillis(10).toNanos());
    time.schedule(() -> fired.add("c@" + time.elapsed().toMillis()), Duration.ofMillis(30).toNanos());

    time.advance(Duration.ofMillis(25));

    assertThat(fired).containsExactly("a@10", "a2@10", "b@20");
    assertThat(time.elapsed()).isEqualTo(Duration.ofMillis(25));
    assertThat(time.pendingTimers()).isEqualTo(1);
  }

  @Test
  void aTimerScheduledByATimerRunsInTheSameAdvanceWhenDue() {
    VirtualTime time = VirtualTime.create();
    List<Long> fired = new ArrayList<>();
    time.schedule(() -> {
      fired.add(time.elapsed().toMillis());
      time.schedule(() -> fired.add(time.elapsed().toMillis()), Duration.ofMillis(5).toNanos());
    }, Duration.ofMillis(5).toNanos());

    time.advance(Duration.ofMillis(10));

    assertThat(fired).containsExactly(5L, 10L);
  }

  @Test
  void cancelledTimersNeverRun() {
    VirtualTime time = VirtualTime.create();
    List<String> fired = new ArrayList<>();
    TimeSource.Scheduled timer = time.schedule(() -> fired.add("x"), 1_000);

    assertThat(timer.cancel()).isTrue();
    assertThat(timer.cancel()).isFalse();
    time.advance(Duration.ofSeconds(1));

    assertThat(fired).isEmpty();
    assertThat(time.pendingTimers()).isZero();
  }

  @Test
  void sleepAdvancesTheClockAndStopsWhenATimerInterruptsTheSleeper() {
    VirtualTime time = VirtualTime.create();
    Thread me = Thread.currentThread();
    time.schedule(me::interrupt, Duration.ofMillis(200).toNanos());

    assertThatThrownBy(() -> time.sleep(Duration.ofMillis(500))).isInstanceOf(InterruptedException.class);

    assertThat(time.elapsed()).isEqualTo(Duration.ofMillis(200));
    assertThat(Thread.interrupted()).as("the flag is consumed by the exception, as the JDK's own sleeps do").isFalse();
  }

  @Test
  void sleepingWithTheFlagSetThrowsAtOnce() {
    VirtualTime time = VirtualTime.create();
    Thread.currentThread().interrupt();

    assertThatThrownBy(() -> time.sleep(1_000)).isInstanceOf(InterruptedException.class);
    assertThat(time.elapsed()).isZero();
  }

  @Test
  void runUntilIdleStopsAtTheLimit() {
    VirtualTime time = VirtualTime.create();
    List<Long> fired = new ArrayList<>();
    Runnable[] tick = new Runnable[1];
    tick[0] = () -> {
      fired.add(time.elapsed().getSeconds());
      time.schedule(tick[0], Duration.ofSeconds(1).toNanos()); // a periodic timer never goes idle
    };
    time.schedule(tick[0], Duration.ofSeconds(1).toNanos());

    Duration passed = time.runUntilIdle(Duration.ofMillis(3500));

    assertThat(fired).containsExactly(1L, 2L, 3L);
    assertThat(passed).isEqualTo(Duration.ofSeconds(3));
    assertThat(time.pendingTimers()).isEqualTo(1);
  }

  @Test
  void jitterRepeatsForASeed() {
    VirtualTime a = VirtualTime.create(7);
    VirtualTime b = VirtualTime.create(7);

    assertThat(a.random().nextLong()).isEqualTo(b.random().nextLong());
    assertThat(a.random().nextDouble()).isEqualTo(b.random().nextDouble());
  }

  @Test
  void advanceRejectsNegativeDurations() {
    assertThatThrownBy(() -> VirtualTime.create().advance(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
  }
}
