package dev.quell;

import static dev.quell.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;

class RateLimiterTest {
  private static final long MS = 1_000_000L;
  private final SteppingClock clock = new SteppingClock();

  @Test
  void startsFullAndRefusesTheAttemptAfterTheBurstWithTheTimeToTheNextPermit() {
    Limiter limiter = Limiter.rate(10, 5, clock);
    Gate gate = limiter.gate();
    long now = clock.nanoTime();
    assertThat(limiter.available()).isEqualTo(5);
    for (int i = 0; i < 5; i++) {
      AttemptRecord a = attempt(now);
      assertThat(gate.tryAdmit(a, 0, now)).as("attempt %d", i).isTrue();
      assertThat(a.waitNanos).isZero();
    }
    AttemptRecord refused = attempt(now);
    assertThat(gate.tryAdmit(refused, 0, now)).isFalse();
    assertThat(refused.retryAfterNanos).isEqualTo(100 * MS);
    assertThat(gate.refusal()).isEqualTo(StopReason.LIMITED);
    assertThat(limiter.available()).isZero();
    assertThat(limiter.inFlight()).isEqualTo(5);
    assertThat(limiter.limit()).isEqualTo(5);
  }

  @Test
  void refillsLazilyFromTheClockAndNeverAboveTheBurst() {
    Limiter limiter = Limiter.rate(10, 5, clock);
    drain(limiter);
    clock.advance(Duration.ofMillis(250));
    assertThat(limiter.available()).isEqualTo(2);
    AttemptRecord a = attempt(clock.nanoTime());
    assertThat(limiter.gate().tryAdmit(a, 0, clock.nanoTime())).isTrue();
    assertThat(limiter.available()).isEqualTo(1);
    clock.advance(Duration.ofHours(1));
    assertThat(limiter.available()).isEqualTo(5); // an idle hour banks no more than the burst
    assertThat(drain(limiter)).isEqualTo(5);
  }

  @Test
  void withABurstOfOnePermitsAreEvenlySpacedAndNoBoundaryLetsTwoThrough() {
    // Resilience4j#1356: a fixed window admits up to twice its limit across a window boundary
    Limiter limiter = Limiter.rate(10, 1, clock);
    long start = clock.nanoTime();
    long last = Long.MIN_VALUE;
    int admitted = 0;
    for (int ms = 0; ms <= 2000; ms++) {
      long now = start + ms * MS;
      if (limiter.gate().tryAdmit(attempt(now), 0, now)) {
        if (admitted > 0) {
          assertThat(now - last).isGreaterThanOrEqualTo(100 * MS);
        }
        last = now;
        admitted++;
      }
    }
    assertThat(admitted).isEqualTo(21); // one at 0, then one every 100 ms up to 2000
  }

  @Test
  void anAttemptWithNothingInTheBucketIsNeverAdmittedAtOnce() {
    // Guava#7130: a limiter that grants now and bills the next caller admits a burst it was told not to
    Limiter limiter = Limiter.rate(5, 1, clock);
    long now = clock.nanoTime();
    assertThat(limiter.gate().tryAdmit(attempt(now), 0, now)).isTrue();
    AttemptRecord next = attempt(now);
    assertThat(limiter.gate().tryAdmit(next, 0, now)).isFalse();
    assertThat(next.retryAfterNanos).isEqualTo(200 * MS);
  }

  @Test
  void aBoundedWaitReservesTheNextPermitAndTheReservingAttemptPaysForIt() {
    Limiter limiter = Limiter.rate(5, 1, Duration.ofSeconds(10), clock);
    long now = clock.nanoTime();
    AttemptRecord first = attempt(now);
    AttemptRecord second = attempt(now);
    AttemptRecord third = attempt(now);
    assertThat(limiter.gate().tryAdmit(first, 0, now)).isTrue();
    assertThat(limiter.gate().tryAdmit(second, 0, now)).isTrue();
    assertThat(limiter.gate().tryAdmit(third, 0, now)).isTrue();
    assertThat(first.waitNanos).isZero();
    assertThat(second.waitNanos).isEqualTo(200 * MS);
    assertThat(third.waitNanos).isEqualTo(400 * MS);
    assertThat(limiter.gate().maxWaitNanos()).isEqualTo(Duration.ofSeconds(10).toNanos());
  }

  @Test
  void aWaitLongerThanMaxWaitIsRefusedAndReservesNothing() {
    Limiter limiter = Limiter.rate(1, 1, Duration.ofMillis(1500), clock);
    long now = clock.nanoTime();
    drain(limiter);
    AttemptRecord waits = attempt(now);
    assertThat(limiter.gate().tryAdmit(waits, 0, now)).isTrue();
    assertThat(waits.waitNanos).isEqualTo(1000 * MS);
    AttemptRecord tooLong = attempt(now);
    assertThat(limiter.gate().tryAdmit(tooLong, 0, now)).isFalse();
    assertThat(tooLong.retryAfterNanos).isEqualTo(2000 * MS);
    clock.advance(Duration.ofMillis(600));
    now = clock.nanoTime();
    AttemptRecord fits = attempt(now);
    assertThat(limiter.gate().tryAdmit(fits, 0, now)).isTrue();
    assertThat(fits.waitNanos).isEqualTo(1400 * MS); // the refused one took nothing
  }

  @Test
  void aWaitThatWouldEndAtOrAfterTheDeadlineIsRefused() {
    Limiter limiter = Limiter.rate(1, 1, Duration.ofMinutes(1), clock);
    drain(limiter);
    long now = clock.nanoTime();
    AttemptRecord shortDeadline = attempt(now, 500 * MS);
    assertThat(limiter.gate().tryAdmit(shortDeadline, 0, now)).isFalse();
    assertThat(shortDeadline.retryAfterNanos).isEqualTo(1000 * MS);
    AttemptRecord exactDeadline = attempt(now, 1000 * MS);
    assertThat(limiter.gate().tryAdmit(exactDeadline, 0, now)).as("would start just as its deadline passes").isFalse();
    AttemptRecord fits = attempt(now, 1000 * MS + 1);
    assertThat(limiter.gate().tryAdmit(fits, 0, now)).isTrue();
    assertThat(fits.waitNanos).isEqualTo(1000 * MS);
  }

  @Test
  void aPermitThatIsThereIsTakenWhateverTheDeadline() {
    Limiter limiter = Limiter.rate(1, 1, clock);
    long now = clock.nanoTime();
    assertThat(limiter.gate().tryAdmit(attempt(now, 1), 0, now)).isTrue();
  }

  @Test
  void anAttemptThatNeverStartedGetsItsTokenBackAndTheNextCallerWaitsNoLonger() {
    Limiter limiter = Limiter.rate(5, 1, Duration.ofSeconds(10), clock);
    Gate gate = limiter.gate();
    long now = clock.nanoTime();
    drain(limiter);
    AttemptRecord reserved = attempt(now);
    assertThat(gate.tryAdmit(reserved, 0, now)).isTrue();
    assertThat(reserved.waitNanos).isEqualTo(200 * MS);
    gate.release(reserved, 0, Gate.NOT_STARTED, now); // a later gate refused it, or the call ended first
    AttemptRecord next = attempt(now);
    assertThat(gate.tryAdmit(next, 0, now)).isTrue();
    assertThat(next.waitNanos).isEqualTo(200 * MS);
    assertThat(limiter.inFlight()).isEqualTo(1);
  }

  @Test
  void aTokenGivenBackAfterAnotherWasTakenIsSpentRatherThanShared() {
    // burst 1: A is admitted at 0 and B at 150 ms; then A turns out never to have started. Had A never
    // been admitted, B would have found the bucket empty after it at 150 ms: giving A's token back now
    // would let C start beside B, two in one slot.
    Limiter limiter = Limiter.rate(10, 1, clock);
    Gate gate = limiter.gate();
    long start = clock.nanoTime();
    AttemptRecord a = attempt(start);
    assertThat(gate.tryAdmit(a, 0, start)).isTrue();
    long later = clock.advance(Duration.ofMillis(150));
    AttemptRecord b = attempt(later);
    assertThat(gate.tryAdmit(b, 0, later)).isTrue();
    gate.release(a, 0, Gate.NOT_STARTED, later);
    AttemptRecord c = attempt(later);
    assertThat(gate.tryAdmit(c, 0, later)).isFalse();
    assertThat(c.retryAfterNanos).isEqualTo(100 * MS);
  }

  @Test
  void aReservationGivenBackWhileAnotherWaitsBehindItIsSpentRatherThanShared() {
    Limiter limiter = Limiter.rate(10, 1, Duration.ofSeconds(1), clock);
    Gate gate = limiter.gate();
    long now = clock.nanoTime();
    drain(limiter);
    AttemptRecord first = attempt(now);
    AttemptRecord second = attempt(now);
    gate.tryAdmit(first, 0, now); // starts at 100 ms
    gate.tryAdmit(second, 0, now); // starts at 200 ms
    gate.release(first, 0, Gate.NOT_STARTED, now);
    AttemptRecord third = attempt(now);
    assertThat(gate.tryAdmit(third, 0, now)).isTrue();
    assertThat(third.waitNanos).as("not 200 ms, beside the second").isEqualTo(300 * MS);
    gate.release(third, 0, Gate.NOT_STARTED, now); // the latest one can be given back
    AttemptRecord fourth = attempt(now);
    assertThat(gate.tryAdmit(fourth, 0, now)).isTrue();
    assertThat(fourth.waitNanos).isEqualTo(300 * MS);
  }

  @Test
  void attemptsThatStartedKeepTheirTokenHoweverTheyEnd() {
    for (int how : new int[] {Gate.SUCCEEDED, Gate.FAILED, Gate.TIMED_OUT, Gate.THROTTLED, Gate.REJECTED, Gate.CANCELLED}) {
      Limiter limiter = Limiter.rate(1, 2, clock);
      long now = clock.nanoTime();
      AttemptRecord a = attempt(now);
      assertThat(limiter.gate().tryAdmit(a, 0, now)).isTrue();
      limiter.gate().release(a, 0, how, now);
      assertThat(limiter.available()).as("ended as %d", how).isEqualTo(1);
      assertThat(limiter.inFlight()).isZero();
    }
  }

  @Test
  void aRefundNeverFillsTheBucketAboveItsBurst() {
    Limiter limiter = Limiter.rate(10, 3, clock);
    long now = clock.nanoTime();
    AttemptRecord a = attempt(now);
    assertThat(limiter.gate().tryAdmit(a, 0, now)).isTrue();
    clock.advance(Duration.ofSeconds(5));
    limiter.gate().release(a, 0, Gate.NOT_STARTED, clock.nanoTime());
    assertThat(limiter.available()).isEqualTo(3);
    assertThat(drain(limiter)).isEqualTo(3);
  }

  @Test
  void clockReadingsNearLongMaxValueWrapAroundCorrectly() {
    SteppingClock edge = new SteppingClock(Long.MAX_VALUE - 150 * MS);
    Limiter limiter = Limiter.rate(10, 2, edge);
    assertThat(drain(limiter, edge)).isEqualTo(2);
    edge.advance(Duration.ofMillis(300)); // the reading wraps past Long.MAX_VALUE to near Long.MIN_VALUE
    assertThat(edge.nanoTime()).isNegative();
    assertThat(limiter.available()).isEqualTo(2);
    assertThat(drain(limiter, edge)).isEqualTo(2);
    AttemptRecord refused = attempt(edge.nanoTime());
    assertThat(limiter.gate().tryAdmit(refused, 0, edge.nanoTime())).isFalse();
    assertThat(refused.retryAfterNanos).isEqualTo(100 * MS);
  }

  @Test
  void theIntervalIsRoundedUpSoTheRateIsNeverExceeded() {
    RateLimiter limiter = (RateLimiter) Limiter.rate(3, 1, clock);
    assertThat(limiter.intervalNanos()).isEqualTo(333_333_334L);
    assertThat(((RateLimiter) Limiter.rate(1e9, 1, clock)).intervalNanos()).isEqualTo(1);
    assertThat(((RateLimiter) Limiter.rate(0.5, 1, clock)).intervalNanos()).isEqualTo(2_000_000_000L);
  }

  @Test
  void maxWaitsTooLongForNanosecondsMeanAsLongAsTheDeadlineAllows() {
    for (Duration forever : new Duration[] {ChronoUnit.FOREVER.getDuration(), Duration.ofSeconds(Long.MAX_VALUE)}) {
      Limiter limiter = Limiter.rate(1, 1, forever, clock);
      assertThat(limiter.gate().maxWaitNanos()).isEqualTo(Long.MAX_VALUE);
      drain(limiter);
      long now = clock.nanoTime();
      AttemptRecord a = attempt(now, Duration.ofHours(1).toNanos());
      assertThat(limiter.gate().tryAdmit(a, 0, now)).isTrue();
      assertThat(a.waitNanos).isEqualTo(1000 * MS);
    }
  }

  @Test
  void badParametersAreNamedWithTheirValues() {
    assertThatThrownBy(() -> Limiter.rate(0, 1)).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("rate limiter perSecond was 0.0");
    assertThatThrownBy(() -> Limiter.rate(-3, 1)).hasMessageContaining("perSecond was -3.0");
    assertThatThrownBy(() -> Limiter.rate(Double.NaN, 1)).hasMessageContaining("perSecond was NaN");
    assertThatThrownBy(() -> Limiter.rate(Double.POSITIVE_INFINITY, 1)).hasMessageContaining("perSecond was Infinity");
    assertThatThrownBy(() -> Limiter.rate(2e9, 1)).hasMessageContaining("at most 1e9");
    assertThatThrownBy(() -> Limiter.rate(10, 0)).hasMessageContaining("rate limiter burst was 0");
    assertThatThrownBy(() -> Limiter.rate(10, -5)).hasMessageContaining("burst was -5");
    assertThatThrownBy(() -> Limiter.rate(1e-9, Integer.MAX_VALUE))
        .hasMessageContaining("burst / perSecond was 2147483647 / 1.0E-9")
        .hasMessageContaining("100 years");
    assertThatThrownBy(() -> Limiter.rate(10, 1, Duration.ofMillis(-1))).hasMessageContaining("rate limiter maxWait was");
    assertThatThrownBy(() -> Limiter.rate(10, 1, Duration.ofSeconds(Long.MIN_VALUE)))
        .hasMessageContaining("rate limiter maxWait was");
    assertThatThrownBy(() -> Limiter.rate(10, 1, nullDuration())).hasMessageContaining("rate limiter maxWait was null");
    assertThatThrownBy(() -> Limiter.rate(10, 1, Duration.ZERO, nullTime()))
        .hasMessageContaining("rate limiter timeSource was null");
    ResilienceConfigurationException all = catchThrowableOfType(
        ResilienceConfigurationException.class, () -> Limiter.rate(Double.NaN, 0, Duration.ofSeconds(-1), nullTime()));
    assertThat(all.problems()).hasSize(4);
  }

  @Test
  void aVerySlowRateWithABigBurstWorksWithoutOverflow() {
    Limiter limiter = Limiter.rate(1e-6, 1000, Duration.ofDays(365), clock); // one a ~11.6 days, 1000 banked
    assertThat(drain(limiter)).isEqualTo(1000);
    long now = clock.nanoTime();
    AttemptRecord a = attempt(now);
    assertThat(limiter.gate().tryAdmit(a, 0, now)).isTrue();
    assertThat(a.waitNanos).isEqualTo(1_000_000_000_000_000L);
  }

  @Test
  void toStringShowsTheSettings() {
    assertThat(Limiter.rate(10, 5, Duration.ofMillis(20), clock).toString())
        .contains("10.0/s", "burst=5", "maxWait=PT0.02S", "available=5");
    assertThat(Limiter.rate(10, 5).name()).startsWith("rate-");
  }

  private int drain(Limiter limiter) {
    return drain(limiter, clock);
  }

  static int drain(Limiter limiter, TimeSource clock) {
    int n = 0;
    long now = clock.nanoTime();
    AttemptRecord a = attempt(now, 0); // no time left to wait: take only what is there
    while (limiter.gate().tryAdmit(a, 0, now)) {
      limiter.gate().release(a, 0, Gate.SUCCEEDED, now);
      a = attempt(now, 0);
      n++;
    }
    return n;
  }

  @SuppressWarnings("NullAway")
  private static Duration nullDuration() {
    return null;
  }

  @SuppressWarnings("NullAway")
  private static TimeSource nullTime() {
    return null;
  }
}
