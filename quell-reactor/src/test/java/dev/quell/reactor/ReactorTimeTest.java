package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.TimeSource;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The TimeSource adapter over a Reactor Scheduler, on reactor-test's virtual scheduler. */
class ReactorTimeTest {
  private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
  private final ReactorTime time = ReactorTime.of(scheduler);

  @Test
  void readsTheSchedulersClock() {
    long start = time.nanoTime();
    scheduler.advanceTimeBy(Duration.ofMinutes(1));
    assertThat(time.nanoTime() - start).isEqualTo(Duration.ofMinutes(1).toNanos());
  }

  @Test
  void aTimerRunsOnceWhenItsTimeComes() {
    AtomicInteger runs = new AtomicInteger();
    time.schedule(runs::incrementAndGet, Duration.ofSeconds(30).toNanos());
    scheduler.advanceTimeBy(Duration.ofSeconds(29));
    assertThat(runs).hasValue(0);
    scheduler.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(runs).hasValue(1);
    scheduler.advanceTimeBy(Duration.ofMinutes(5));
    assertThat(runs).hasValue(1);
  }

  @Test
  void aTimerDueNowRuns() {
    AtomicInteger runs = new AtomicInteger();
    time.schedule(runs::incrementAndGet, 0);
    scheduler.advanceTime();
    assertThat(runs).hasValue(1);
  }

  @Test
  void cancelSaysWhetherTheTaskWillNowNeverRun() {
    AtomicInteger runs = new AtomicInteger();
    TimeSource.Scheduled pending = time.schedule(runs::incrementAndGet, 1_000);
    assertThat(pending.cancel()).isTrue();
    assertThat(pending.cancel()).as("a second cancel").isFalse();
    scheduler.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(runs).hasValue(0);

    TimeSource.Scheduled ran = time.schedule(runs::incrementAndGet, 1_000);
    scheduler.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(runs).hasValue(1);
    assertThat(ran.cancel()).as("too late").isFalse();
  }

  @Test
  void sleepEndsWhenTheSchedulerReachesItsWakeUp() throws Exception {
    Thread sleeper = new Thread(() -> {
      try {
        time.sleep(Duration.ofHours(1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    sleeper.start();
    while (sleeper.getState() != Thread.State.WAITING) {
      Thread.onSpinWait();
    }
    scheduler.advanceTimeBy(Duration.ofHours(1));
    sleeper.join();
    assertThat(sleeper.isAlive()).isFalse();
  }
}
