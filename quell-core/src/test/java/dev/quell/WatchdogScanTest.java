package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The watchdog's decisions, one pass at a time, at times the test chooses: a watchdog of the
 * test's own whose {@link Watchdog#scan} it calls by hand, so that every boundary (a tick before
 * and at a timeout, a hedge delay, a drain's cut-off, the idle second) is hit exactly and nothing
 * depends on how fast this machine is. Owners are threads never started: interrupting one only
 * sets its flag, which the test then reads.
 */
class WatchdogScanTest {
  private static final long T0 = 1_000_000_000_000L;
  private static final long MS = 1_000_000L;

  private final Watchdog watchdog = new Watchdog();
  private final List<Watchdog.Slot> active = new ArrayList<>();

  private Watchdog.Slot slotOf(Thread owner) {
    Watchdog.Slot slot = new Watchdog.Slot(owner);
    active.add(slot);
    return slot;
  }

  private static Thread unstarted() {
    return new Thread(() -> { });
  }

  @Test
  void anAttemptIsTimedFromItsFirstSightingAndInterruptedExactlyAtItsTimeout() {
    Thread owner = unstarted();
    Watchdog.Slot slot = slotOf(owner).arm(10 * MS);
    assertThat(slot.startEstimate(-1)).as("not sighted yet: the fallback").isEqualTo(-1);

    assertThat(watchdog.scan(active, T0)).isEqualTo(Watchdog.TICK_NANOS);
    assertThat(slot.startEstimate(-1)).as("sighted at the first pass").isEqualTo(T0);
    assertThat(owner.isInterrupted()).isFalse();

    watchdog.scan(active, T0 + 10 * MS - 1);
    assertThat(owner.isInterrupted()).as("a nanosecond before its timeout").isFalse();
    assertThat(slot.startEstimate(-1)).as("a later pass does not move the sighting").isEqualTo(T0);

    watchdog.scan(active, T0 + 10 * MS);
    assertThat(owner.isInterrupted()).as("at its timeout").isTrue();
  }

  @Test
  void eachPassLeavesItsReadingAsTheSightingWhetherOrNotAnythingIsArmed() {
    watchdog.scan(active, T0);
    assertThat(watchdog.sighting()).as("nothing armed").isEqualTo(T0);
    slotOf(unstarted()).arm(10 * MS);
    watchdog.scan(active, T0 + 2 * MS);
    assertThat(watchdog.sighting()).as("an attempt armed").isEqualTo(T0 + 2 * MS);
    watchdog.scan(active, Long.MIN_VALUE + 5);
    assertThat(watchdog.sighting()).as("only differences of readings mean anything").isEqualTo(Long.MIN_VALUE + 5);
  }

  @Test
  void aTimeoutOfZeroStillWaitsForTheSecondPass() {
    // the first pass only sights: an attempt is never cut off by the pass that first sees it
    Thread owner = unstarted();
    slotOf(owner).arm(0);
    watchdog.scan(active, T0);
    assertThat(owner.isInterrupted()).isFalse();
    watchdog.scan(active, T0);
    assertThat(owner.isInterrupted()).isTrue();
  }

  @Test
  void aNewArmingIsSightedAfreshAndTimedFromThen() {
    Thread owner = unstarted();
    Watchdog.Slot slot = slotOf(owner).arm(10 * MS);
    watchdog.scan(active, T0);
    slot.disarm();
    slot.arm(10 * MS); // the next attempt, armed 9 ms after the first was sighted
    watchdog.scan(active, T0 + 9 * MS);
    assertThat(slot.startEstimate(-1)).isEqualTo(T0 + 9 * MS);
    watchdog.scan(active, T0 + 18 * MS);
    assertThat(owner.isInterrupted()).as("10 ms from its own sighting, not the old one").isFalse();
    watchdog.scan(active, T0 + 19 * MS);
    assertThat(owner.isInterrupted()).isTrue();
  }

  @Test
  void aDisarmedSlotIsNeverInterruptedNorSighted() {
    Thread owner = unstarted();
    Watchdog.Slot slot = slotOf(owner).arm(MS);
    assertThat(slot.disarm()).isFalse();
    watchdog.scan(active, T0);
    watchdog.scan(active, T0 + 10 * MS);
    assertThat(owner.isInterrupted()).isFalse();
    assertThat(slot.startEstimate(-1)).isEqualTo(-1);
  }

  @Test
  void theOwnersOwnInterruptWinsAndTheSlotStaysArmedForItsOwnerToEnd() {
    Thread owner = unstarted();
    Watchdog.Slot slot = slotOf(owner).arm(MS);
    watchdog.scan(active, T0);
    owner.interrupt(); // cancelled by its caller; the attempt ignored it
    watchdog.scan(active, T0 + 5 * MS);
    assertThat(slot.isArmed()).isTrue();
    assertThat(slot.disarm()).as("not timed out by the watchdog: the caller's interrupt stands").isFalse();
  }

  @Test
  void whenTheWatchdogWinsDisarmReportsTheTimeoutAndTakesTheInterruptBack() {
    Watchdog.Slot slot = slotOf(Thread.currentThread()).arm(MS);
    watchdog.scan(active, T0);
    watchdog.scan(active, T0 + MS);
    assertThat(Thread.currentThread().isInterrupted()).as("the watchdog's interrupt").isTrue();
    assertThat(slot.disarm()).isTrue();
    assertThat(Thread.interrupted()).as("taken back: nothing leaks into later work").isFalse();
    assertThat(slot.isArmed()).isFalse();
    assertThat(slot.disarm()).as("a second disarm finds nothing armed").isFalse();
  }

  @Test
  void aHedgeTaskRunsOnceAtItsDelayAndNeverForAnAttemptThatEnded() {
    AtomicInteger hedges = new AtomicInteger();
    Thread owner = unstarted();
    Watchdog.Slot slot = slotOf(owner).arm(Long.MAX_VALUE, 5 * MS, hedges::incrementAndGet);
    watchdog.scan(active, T0);
    watchdog.scan(active, T0 + 5 * MS - 1);
    assertThat(hedges).as("before its delay").hasValue(0);
    watchdog.scan(active, T0 + 5 * MS);
    assertThat(hedges).as("at its delay").hasValue(1);
    watchdog.scan(active, T0 + 50 * MS);
    assertThat(hedges).as("once per attempt").hasValue(1);
    assertThat(owner.isInterrupted()).as("a hedge does not end the attempt").isFalse();

    slot.disarm();
    slot.arm(Long.MAX_VALUE, 5 * MS, hedges::incrementAndGet); // the next attempt gets its own hedge
    watchdog.scan(active, T0 + 60 * MS);
    slot.disarm();
    watchdog.scan(active, T0 + 70 * MS);
    assertThat(hedges).as("an attempt that answered first sends none").hasValue(1);
  }

  @Test
  void aHedgeTaskThatThrowsDoesNotStopThePassNorTheTimeoutOfItsOwnAttempt() {
    Thread first = unstarted();
    Thread second = unstarted();
    slotOf(first).arm(10 * MS, MS, () -> {
      throw new IllegalStateException("executor shut down");
    });
    slotOf(second).arm(10 * MS);
    watchdog.scan(active, T0);
    watchdog.scan(active, T0 + 10 * MS);
    assertThat(first.isInterrupted()).isTrue();
    assertThat(second.isInterrupted()).isTrue();
  }

  @Test
  void aDrainsCutOffEndsEveryArmedAttemptFromItsInstantOnEvenOnesNotYetSighted() {
    Thread sighted = unstarted();
    Thread fresh = unstarted();
    slotOf(sighted).arm(Long.MAX_VALUE);
    watchdog.scan(active, T0);
    watchdog.cutOffAt(T0 + 3 * MS);
    slotOf(fresh).arm(Long.MAX_VALUE);
    watchdog.scan(active, T0 + 3 * MS - 1);
    assertThat(sighted.isInterrupted()).as("before the cut-off").isFalse();
    assertThat(fresh.isInterrupted()).isFalse();
    watchdog.scan(active, T0 + 3 * MS);
    assertThat(sighted.isInterrupted()).as("at the cut-off, whatever its own timeout").isTrue();
    assertThat(fresh.isInterrupted()).as("sighted and cut off in the same pass").isTrue();
  }

  @Test
  void cancellingTheCutOffGivesAttemptsBackTheirOwnTimeouts() {
    Thread owner = unstarted();
    slotOf(owner).arm(Long.MAX_VALUE);
    watchdog.cutOffAt(T0);
    watchdog.cutOffAt(Long.MAX_VALUE); // no cut-off after all
    watchdog.scan(active, T0);
    watchdog.scan(active, T0 + 10 * MS);
    assertThat(owner.isInterrupted()).isFalse();
  }

  @Test
  void slotsOfDeadOwnersAreForgottenOnlyOnceTheirAttemptEnded() {
    Watchdog.Slot armedDead = slotOf(unstarted()).arm(Long.MAX_VALUE); // an unstarted thread is not alive
    Watchdog.Slot idleDead = slotOf(unstarted());
    Watchdog.Slot idleAlive = slotOf(Thread.currentThread());
    watchdog.scan(active, T0);
    assertThat(active).containsExactlyInAnyOrder(armedDead, idleAlive);
    armedDead.disarm();
    watchdog.scan(active, T0 + MS);
    assertThat(active).containsExactly(idleAlive);
  }

  @Test
  void itTicksWhileAnythingIsArmedAndForASecondAfterThenParksLongAndSaysItIsIdle() {
    Watchdog.Slot slot = slotOf(Thread.currentThread()).arm(Long.MAX_VALUE); // (alive: its slot is kept)
    assertThat(watchdog.scan(active, T0)).isEqualTo(Watchdog.TICK_NANOS);
    assertThat(watchdog.isIdle()).isFalse();
    slot.disarm();
    assertThat(watchdog.scan(active, T0 + Watchdog.IDLE_AFTER_NANOS - 1))
        .as("a nanosecond short of the idle second").isEqualTo(Watchdog.TICK_NANOS);
    assertThat(watchdog.isIdle()).isFalse();
    assertThat(watchdog.scan(active, T0 + Watchdog.IDLE_AFTER_NANOS)).isEqualTo(Watchdog.IDLE_PARK_NANOS);
    assertThat(watchdog.isIdle()).isTrue();
    slot.arm(Long.MAX_VALUE);
    assertThat(watchdog.scan(active, T0 + 2 * Watchdog.IDLE_AFTER_NANOS)).isEqualTo(Watchdog.TICK_NANOS);
    assertThat(watchdog.isIdle()).as("an armed attempt ends the idle spell").isFalse();
    slot.disarm();
  }

  @Test
  void clockReadingsNearTheEndsOfLongWork() {
    // only differences of nanoTime mean anything: a sighting just below Long.MAX_VALUE still times out after it
    Thread owner = unstarted();
    slotOf(owner).arm(10 * MS);
    long nearEnd = Long.MAX_VALUE - 5 * MS;
    watchdog.scan(active, nearEnd);
    watchdog.scan(active, nearEnd + 9 * MS); // wraps past Long.MAX_VALUE
    assertThat(owner.isInterrupted()).isFalse();
    watchdog.scan(active, nearEnd + 10 * MS);
    assertThat(owner.isInterrupted()).isTrue();
  }
}
