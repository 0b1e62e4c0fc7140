package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The watchdog on the real clock: it must stop ticking when idle and still time the next attempt. */
class WatchdogTest {

  @Test
  @Timeout(30)
  void anIdleWatchdogStopsTickingAndTheNextAttemptWakesIt() throws Exception {
    Watchdog.Slot slot = Watchdog.INSTANCE.newSlot();
    // wait (without sleeping) for the watchdog to notice that nothing is armed
    while (!Watchdog.INSTANCE.isIdle()) {
      Thread.onSpinWait();
      Thread.yield();
    }
    slot.arm(20_000_000L); // 20 ms
    assertThat(Watchdog.INSTANCE.isIdle()).as("arming wakes it").isFalse();
    boolean interrupted = false;
    try {
      new CountDownLatch(1).await(); // blocks until the watchdog interrupts it
    } catch (InterruptedException e) {
      interrupted = true;
    }
    assertThat(interrupted).isTrue();
    assertThat(slot.disarm()).as("the watchdog timed it out").isTrue();
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  @Timeout(30)
  void disarmingInTimeWinsAndNoInterruptLeaks() {
    Watchdog.Slot slot = Watchdog.INSTANCE.newSlot();
    for (int i = 0; i < 10_000; i++) {
      slot.arm(1_000_000_000L);
      assertThat(slot.disarm()).isFalse();
    }
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }
}
