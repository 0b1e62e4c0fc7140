package dev.quell;

import static dev.quell.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A breaker on the real clock may be handed the watchdog's last clock sighting — a reading up to
 * about 100 ms old, the attempt marked {@code coarseNow} — instead of a fresh one, so that the
 * synchronous fast path reads no clock on success. These tests pin where it accepts that
 * ({@link Gate#coarseTime}) and that the decisions a stale reading could change — a break, a probe,
 * a ramp — are taken on an exact reading anyway, while an unmarked reading is used as it is.
 */
class CircuitBreakerCoarseTimeTest {
  private static final CircuitBreaker.Config TRIPS_AT_ONCE = CircuitBreaker.Config.DEFAULT
      .withMinimumCalls(1).withFailureRate(0.5).withConsecutiveFailures(0)
      .withBreakDuration(Duration.ofMillis(1)).withMaxBreakDuration(Duration.ofMillis(1));

  @Test
  void aCoarseTimeIsTakenOnlyOnTheRealClockWithBucketsOfASecondOrMoreAndNoSlowCallThreshold() {
    assertThat(CircuitBreaker.of("default", CircuitBreaker.Config.DEFAULT).gate().coarseTime())
        .as("the default window of 30 s: buckets of 3 s").isTrue();
    assertThat(CircuitBreaker.of("ten", CircuitBreaker.Config.DEFAULT.withWindow(Duration.ofSeconds(10)))
        .gate().coarseTime()).as("a window of 10 s: buckets of exactly a second").isTrue();
    assertThat(CircuitBreaker.of("short", CircuitBreaker.Config.DEFAULT.withWindow(Duration.ofMillis(9_999)))
        .gate().coarseTime()).as("buckets under a second").isFalse();
    assertThat(CircuitBreaker.of("slow", CircuitBreaker.Config.DEFAULT.withSlowCalls(Duration.ofSeconds(1), 0.5))
        .gate().coarseTime()).as("a slow-call threshold needs each attempt's length").isFalse();
    assertThat(CircuitBreaker.of("virtual", CircuitBreaker.Config.DEFAULT, new ManualClock()).gate().coarseTime())
        .as("a clock of the caller's own: only its readings mean anything").isFalse();
  }

  @Test
  void aSuccessAtAReadingOlderThanTheWindowsStartIsStillCounted() {
    CircuitBreaker b = CircuitBreaker.of("counted", CircuitBreaker.Config.DEFAULT);
    long stale = System.nanoTime() - 100_000_000L; // as old as a sighting can be, and before the window began
    AttemptRecord a = attempt(stale);
    assertThat(b.gate().tryAdmit(a, 0, stale)).isTrue();
    b.gate().release(a, 0, Gate.SUCCEEDED, stale);
    assertThat(b.metrics().calls()).isEqualTo(1);
    assertThat(b.metrics().failedCalls()).isZero();
  }

  @Test
  void anOpenBreakerHandedAStaleReadingJudgesItsBreakOnAnExactOne() {
    CircuitBreaker b = CircuitBreaker.of("open", TRIPS_AT_ONCE.withRamp(Duration.ZERO));
    Gate gate = b.gate();
    long before = System.nanoTime();
    AttemptRecord failing = attempt(before);
    assertThat(gate.tryAdmit(failing, 0, before)).isTrue();
    long tripped = System.nanoTime();
    gate.release(failing, 0, Gate.FAILED, tripped);
    assertThat(b.state()).isEqualTo(CircuitBreaker.State.OPEN);
    spinPast(tripped, Duration.ofMillis(20)); // the break of at most 1 ms is over, whatever the machine

    // handed the reading from before the trip, the break would seem not to have begun
    AttemptRecord unmarked = attempt(before);
    assertThat(gate.tryAdmit(unmarked, 0, before))
        .as("a reading not marked coarse is taken as it is: no clock read of its own").isFalse();
    AttemptRecord probe = attempt(before);
    probe.coarseNow = true;
    assertThat(gate.tryAdmit(probe, 0, before)).as("the break is over by the clock").isTrue();
    assertThat(b.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
  }

  @Test
  void aProbeReleasedAtAStaleReadingStartsTheRampFromAnExactOne() {
    CircuitBreaker b = CircuitBreaker.of("ramp", TRIPS_AT_ONCE.withRamp(Duration.ofMinutes(10)));
    Gate gate = b.gate();
    long before = System.nanoTime();
    AttemptRecord failing = attempt(before);
    gate.tryAdmit(failing, 0, before);
    long tripped = System.nanoTime();
    gate.release(failing, 0, Gate.FAILED, tripped);
    spinPast(tripped, Duration.ofMillis(20));
    AttemptRecord probe = attempt(System.nanoTime());
    assertThat(gate.tryAdmit(probe, 0, System.nanoTime())).isTrue();

    // a reading ten minutes old would put the whole ramp in the past and admit everything at once
    long ancient = System.nanoTime() - Duration.ofMinutes(11).toNanos();
    probe.coarseNow = true;
    gate.release(probe, 0, Gate.SUCCEEDED, ancient);
    assertThat(b.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    int admitted = 0;
    for (int i = 0; i < 100; i++) {
      AttemptRecord a = attempt(System.nanoTime());
      if (gate.tryAdmit(a, 0, System.nanoTime())) {
        admitted++;
        gate.release(a, 0, Gate.NOT_STARTED, System.nanoTime());
      }
    }
    assertThat(admitted).as("at the start of a ten-minute ramp, about a tenth passes").isBetween(1, 30);
  }

  /** Waits on the real clock until at least {@code wait} has passed since {@code since}. */
  private static void spinPast(long since, Duration wait) {
    while (System.nanoTime() - since < wait.toNanos()) {
      Thread.onSpinWait();
    }
  }
}
