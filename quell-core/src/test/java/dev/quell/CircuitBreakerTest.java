package dev.quell;

import static dev.quell.Gate.CANCELLED;
import static dev.quell.Gate.FAILED;
import static dev.quell.Gate.NOT_STARTED;
import static dev.quell.Gate.REJECTED;
import static dev.quell.Gate.SUCCEEDED;
import static dev.quell.Gate.THROTTLED;
import static dev.quell.Gate.TIMED_OUT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker.Config;
import dev.quell.CircuitBreaker.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The breaker's behaviour, one rule per test, driven through its gate as the core drives it. */
class CircuitBreakerTest {
  /** 10 calls at least, half failing, over 10 s; breaks of 1 s doubling to 8 s; no ramp. */
  static final Config TEN = Config.DEFAULT.with(s -> s
      .minimumCalls(10)
      .failureRate(0.5)
      .window(Duration.ofSeconds(10))
      .breakDuration(Duration.ofSeconds(1))
      .maxBreakDuration(Duration.ofSeconds(8))
      .ramp(Duration.ZERO));

  static final long SECOND = 1_000_000_000L;

  /** A random source at the top of every range: equal jitter then gives the whole break. */
  static RandomGenerator highest() {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        return Long.MAX_VALUE;
      }

      @Override
      public long nextLong(long bound) {
        return bound - 1;
      }
    };
  }

  /** A random source at the bottom of every range: equal jitter then gives half the break. */
  static RandomGenerator lowest() {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        return 0;
      }

      @Override
      public long nextLong(long bound) {
        return 0;
      }
    };
  }

  static BreakerHarness harness(Config config) {
    BreakerHarness h = new BreakerHarness(config);
    h.clock.useRandom(highest());
    return h;
  }

  /** Opens a {@link #TEN} breaker with ten failures. */
  static void trip(BreakerHarness h) {
    h.calls(10, FAILED);
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
  }

  @Nested
  class WhenItOpens {
    @Test
    void opensWhenTheFailureRateReachesTheThresholdOnceTheMinimumIsMet() {
      BreakerHarness h = harness(TEN);
      h.calls(5, SUCCEEDED);
      h.calls(4, FAILED);
      assertThat(h.breaker.state()).as("9 calls: below the minimum").isEqualTo(State.CLOSED);
      AttemptRecord tripping = h.call(FAILED);
      assertThat(h.breaker.state()).as("10 calls, 5 failed: 50%% reaches 50%%").isEqualTo(State.OPEN);
      assertThat(tripping.breakerTransition).isEqualTo(State.OPEN.ordinal());
      assertThat(h.breaker.metrics().transitionsTo(State.OPEN)).isEqualTo(1);
    }

    @Test
    void staysClosedWhileTheWindowHoldsFewerThanTheMinimumEvenIfEverythingFails() {
      BreakerHarness h = harness(TEN);
      h.calls(9, FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().failureRate()).isEqualTo(1.0);
    }

    @Test
    void staysClosedBelowTheFailureRate() {
      BreakerHarness h = harness(TEN);
      h.calls(6, SUCCEEDED);
      h.calls(4, FAILED);
      h.calls(6, SUCCEEDED);
      h.calls(5, FAILED);
      assertThat(h.breaker.state()).as("9 of 21 failed").isEqualTo(State.CLOSED);
    }

    @Test
    void aSuccessNeverOpensIt() {
      BreakerHarness h = harness(TEN);
      h.calls(9, FAILED);
      AttemptRecord success = h.call(SUCCEEDED);
      assertThat(h.breaker.state()).as("10 calls, 90%% failed, but the last one succeeded").isEqualTo(State.CLOSED);
      assertThat(success.breakerTransition).isEqualTo(-1);
      h.call(FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void opensOnConsecutiveFailuresWhateverTheWindowSays() {
      BreakerHarness h = harness(TEN.withMinimumCalls(1000).withConsecutiveFailures(3));
      h.calls(2, FAILED);
      h.call(SUCCEEDED);
      h.calls(2, FAILED);
      h.call(REJECTED); // the dependency answered: the run is broken too
      h.calls(2, FAILED);
      h.call(CANCELLED); // says nothing: the run goes on
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().consecutiveFailures()).isEqualTo(2);
      AttemptRecord third = h.call(TIMED_OUT);
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
      assertThat(third.breakerTransition).isEqualTo(State.OPEN.ordinal());
    }

    @Test
    void consecutiveFailuresAreOffByDefault() {
      BreakerHarness h = harness(TEN.withMinimumCalls(1000));
      h.calls(500, FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(Config.DEFAULT.consecutiveFailures()).isZero();
    }

    @Test
    void opensOnTheSlowCallRate() {
      BreakerHarness h = harness(TEN.withMinimumCalls(4).withSlowCalls(Duration.ofSeconds(1), 0.5));
      h.call(SUCCEEDED, Duration.ofMillis(100));
      h.call(SUCCEEDED, Duration.ofSeconds(1)); // exactly the threshold is not slower than it
      h.call(SUCCEEDED, Duration.ofMillis(1001));
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      AttemptRecord slow = h.call(SUCCEEDED, Duration.ofSeconds(2));
      assertThat(h.breaker.state()).as("2 of 4 slower than 1 s").isEqualTo(State.OPEN);
      assertThat(slow.breakerTransition).isEqualTo(State.OPEN.ordinal());
    }

    @Test
    void slowCallsCountNothingWhenDetectionIsOff() {
      BreakerHarness h = harness(TEN);
      for (int i = 0; i < 20; i++) {
        h.call(SUCCEEDED, Duration.ofHours(1));
      }
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().slowCalls()).isZero();
    }

    @Test
    void outcomesOlderThanTheWindowAreForgotten() {
      BreakerHarness h = harness(TEN);
      h.calls(9, FAILED);
      h.clock.advance(Duration.ofSeconds(10));
      assertThat(h.breaker.metrics().calls()).as("a whole window later").isZero();
      h.call(FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().calls()).isEqualTo(1);
    }

    @Test
    void outcomesYoungerThanNineTenthsOfTheWindowAreAlwaysCounted() {
      BreakerHarness h = harness(TEN);
      h.calls(9, FAILED);
      h.clock.advance(Duration.ofSeconds(9).minusNanos(1));
      assertThat(h.breaker.metrics().calls()).isEqualTo(9);
      h.call(FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    }

    @ParameterizedTest
    @ValueSource(ints = {FAILED, TIMED_OUT, THROTTLED})
    void transientFailuresTimeoutsAndThrottledAnswersAreFailures(int how) {
      BreakerHarness h = harness(TEN);
      h.calls(10, how);
      assertThat(h.breaker.state()).as(BreakerHarness.how(how)).isEqualTo(State.OPEN);
    }

    @ParameterizedTest
    @ValueSource(ints = {SUCCEEDED, REJECTED})
    void successesAndPermanentFailuresAreSuccesses(int how) {
      BreakerHarness h = harness(TEN);
      h.calls(10, how);
      h.calls(9, FAILED);
      assertThat(h.breaker.state()).as("9 of 19 failed").isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().calls()).isEqualTo(19);
    }

    @ParameterizedTest
    @ValueSource(ints = {CANCELLED, NOT_STARTED})
    void cancelledAndNeverStartedAttemptsCountForNothing(int how) {
      BreakerHarness h = harness(TEN);
      h.calls(100, how);
      h.calls(9, FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().calls()).isEqualTo(9);
    }

    @Test
    void itsOwnRefusalsAreNeverCounted() {
      BreakerHarness h = harness(TEN);
      trip(h);
      for (int i = 0; i < 50; i++) {
        h.refused();
      }
      assertThat(h.breaker.metrics().calls()).as("the window that opened it, untouched").isEqualTo(10);
      assertThat(h.breaker.metrics().refusals()).isEqualTo(50);
    }

    @Test
    void outcomesOfAttemptsAdmittedBeforeItOpenedAreIgnored() {
      BreakerHarness h = harness(TEN);
      List<AttemptRecord> early = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        early.add(h.admitted());
      }
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      h.call(SUCCEEDED); // the probe closes it
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      for (AttemptRecord r : early) {
        h.end(r, FAILED);
      }
      assertThat(h.breaker.metrics().calls()).as("they belong to the outage before").isZero();
    }
  }

  @Nested
  class WhenOpen {
    @Test
    void refusesWithDependencyUnavailableAndTheTimeUntilTheNextProbe() {
      BreakerHarness h = harness(TEN);
      trip(h);
      assertThat(h.gate.refusal()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(SECOND);
      assertThat(h.breaker.retryAfter()).contains(Duration.ofSeconds(1));
      h.clock.advance(Duration.ofMillis(400));
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(600_000_000L);
      assertThat(h.breaker.retryAfter()).contains(Duration.ofMillis(600));
    }

    @Test
    void staysOpenUntilTheFirstAttemptAfterTheBreak() {
      BreakerHarness h = harness(TEN);
      trip(h);
      h.clock.advance(Duration.ofMinutes(10));
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
      assertThat(h.breaker.retryAfter()).contains(Duration.ZERO);
      AttemptRecord probe = h.admitted();
      assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
      assertThat(probe.breakerTransition).isEqualTo(State.HALF_OPEN.ordinal());
    }

    @Test
    void lateFailuresOfAttemptsAdmittedWhileClosedNeitherCountNorExtendTheBreak() {
      BreakerHarness h = harness(TEN);
      AttemptRecord slowpoke = h.admitted();
      trip(h);
      h.clock.advance(Duration.ofMillis(900));
      h.end(slowpoke, FAILED);
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(100_000_000L);
      assertThat(h.breaker.metrics().calls()).isEqualTo(10);
    }
  }

  @Nested
  class WhenHalfOpen {
    @Test
    void admitsOneProbeAndRefusesTheRestUntilItAnswers() {
      BreakerHarness h = harness(TEN);
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      AttemptRecord probe = h.admitted();
      for (int i = 0; i < 10; i++) {
        h.refused();
        assertThat(h.lastRetryAfter()).as("until the probe is written off").isEqualTo(SECOND);
      }
      assertThat(h.breaker.retryAfter()).contains(Duration.ofSeconds(1));
      h.end(probe, SUCCEEDED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(probe.breakerTransition).isEqualTo(State.CLOSED.ordinal());
      assertThat(h.breaker.metrics().calls()).as("closing starts an empty window").isZero();
      h.calls(9, FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void admitsAtMostTheConfiguredNumberOfProbesAtOnce() {
      BreakerHarness h = harness(TEN.withProbes(3).withProbeSuccesses(3));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      AttemptRecord a = h.admitted();
      AttemptRecord b = h.admitted();
      AttemptRecord c = h.admitted();
      h.refused();
      assertThat(h.breaker.probePermitsHeld()).isEqualTo(3);
      h.end(a, SUCCEEDED);
      AttemptRecord d = h.admitted();
      h.refused();
      h.end(b, SUCCEEDED);
      assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
      h.end(c, SUCCEEDED);
      assertThat(h.breaker.state()).as("three probes succeeded").isEqualTo(State.CLOSED);
      h.end(d, FAILED); // a probe of the episode that is over
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().calls()).isZero();
    }

    @Test
    void probesMaySucceedOneAfterAnother() {
      BreakerHarness h = harness(TEN.withProbeSuccesses(3));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      h.call(SUCCEEDED);
      h.call(REJECTED);
      assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
      h.call(SUCCEEDED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    }

    @ParameterizedTest
    @ValueSource(ints = {FAILED, TIMED_OUT, THROTTLED})
    void aFailingProbeReopensItWithALongerBreak(int how) {
      BreakerHarness h = harness(TEN.withProbes(2));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      AttemptRecord probe = h.admitted();
      AttemptRecord other = h.admitted();
      h.end(probe, how);
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
      assertThat(probe.breakerTransition).isEqualTo(State.OPEN.ordinal());
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(2 * SECOND);
      h.end(other, SUCCEEDED); // the other probe of the failed episode changes nothing
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void aSlowProbeIsAFailedProbe() {
      BreakerHarness h = harness(TEN.withSlowCalls(Duration.ofMillis(500), 0.5));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      h.call(SUCCEEDED, Duration.ofMillis(501));
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    }

    @ParameterizedTest
    @ValueSource(ints = {SUCCEEDED, REJECTED, CANCELLED, NOT_STARTED})
    void everyExitPathThatLeavesItHalfOpenGivesThePermitBack(int how) {
      BreakerHarness h = harness(TEN.withProbeSuccesses(2));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      AttemptRecord first = h.admitted();
      h.refused();
      h.end(first, how);
      assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
      assertThat(h.breaker.probePermitsHeld()).isZero();
      AttemptRecord second = h.admitted();
      assertThat(second).isNotNull();
      h.refused();
    }

    @Test
    void aPermitIsNeverGivenBackTwice() {
      BreakerHarness h = harness(TEN.withProbes(2).withProbeSuccesses(5));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      AttemptRecord a = h.admitted();
      h.admitted();
      h.end(a, CANCELLED);
      h.end(a, CANCELLED); // a buggy second release (Failsafe #391 let this raise the capacity)
      h.admitted();
      h.refused();
      assertThat(h.breaker.probePermitsHeld()).isEqualTo(2);
    }

    @Test
    void aHungProbeIsWrittenOffAfterABreakAndANewProbeIsAdmitted() {
      BreakerHarness h = harness(TEN);
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      AttemptRecord hung = h.admitted();
      h.clock.advance(Duration.ofMillis(999));
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(1_000_000L);
      h.clock.advance(Duration.ofMillis(1));
      AttemptRecord next = h.admitted();
      assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
      assertThat(h.breaker.metrics().expiredProbes()).isEqualTo(1);
      h.refused();
      assertThat(h.lastRetryAfter()).as("the break grew: 2 s").isEqualTo(2 * SECOND);
      h.end(hung, SUCCEEDED); // its late answer is ignored
      assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
      h.clock.advance(Duration.ofSeconds(2));
      AttemptRecord third = h.admitted(); // and the next one hangs too: written off again
      assertThat(h.breaker.metrics().expiredProbes()).isEqualTo(2);
      h.end(next, FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.HALF_OPEN);
      h.end(third, SUCCEEDED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void aStaleClockReadingCannotMakeTheLatestProbeLookOlder() {
      BreakerHarness h = harness(TEN.withProbes(3).withProbeSuccesses(3));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      long start = h.clock.nanoTime();
      h.admitted();
      h.clock.advance(Duration.ofMillis(600));
      h.admitted();
      AttemptRecord stale = h.record();
      assertThat(h.gate.tryAdmit(stale, 0, start + 100_000_000L)).isTrue(); // read its clock 500 ms ago
      h.clock.advance(Duration.ofMillis(500)); // 1.1 s after the first probe, 0.5 s after the latest
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(500_000_000L);
      assertThat(h.breaker.metrics().expiredProbes()).isZero();
    }

    @Test
    void probesAreWrittenOffOnlyWhenEveryPermitHasBeenOutAWholeBreak() {
      BreakerHarness h = harness(TEN.withProbes(2).withProbeSuccesses(2));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      h.admitted();
      h.clock.advance(Duration.ofMillis(800));
      h.admitted(); // the second permit, taken later
      h.clock.advance(Duration.ofMillis(500)); // the first has been out 1.3 s, the second 0.5 s
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(500_000_000L);
      h.clock.advance(Duration.ofMillis(500));
      h.admitted();
      assertThat(h.breaker.metrics().expiredProbes()).isEqualTo(2);
      assertThat(h.breaker.probePermitsHeld()).isEqualTo(1);
    }
  }

  @Nested
  class TheBreak {
    @Test
    void doublesWithEachFailedProbeUpToTheMaximumAndStartsAgainAfterRecovery() {
      BreakerHarness h = harness(TEN);
      trip(h);
      List<Long> breaks = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        h.refused();
        breaks.add(h.lastRetryAfter() / 1_000_000);
        h.clock.advanceNanos(h.lastRetryAfter());
        h.call(FAILED);
      }
      assertThat(breaks).containsExactly(1000L, 2000L, 4000L, 8000L, 8000L, 8000L);
      h.refused();
      h.clock.advanceNanos(h.lastRetryAfter());
      h.call(SUCCEEDED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      trip(h);
      h.refused();
      assertThat(h.lastRetryAfter()).as("recovered: back to the first break").isEqualTo(SECOND);
    }

    @Test
    void drawsEqualJitterFromTheTimeSource() {
      BreakerHarness h = new BreakerHarness(TEN);
      h.clock.useRandom(lowest());
      trip(h);
      h.refused();
      assertThat(h.lastRetryAfter()).as("half the break").isEqualTo(SECOND / 2);
      BreakerHarness seeded = new BreakerHarness(TEN);
      trip(seeded);
      seeded.refused();
      assertThat(seeded.lastRetryAfter()).isBetween(SECOND / 2, SECOND);
    }

    @Test
    void aRandomSourceThatThrowsMeansNoJitterNotNoBreaker() {
      BreakerHarness h = new BreakerHarness(TEN);
      h.clock.useRandom(new RandomGenerator() {
        @Override
        public long nextLong() {
          throw new IllegalStateException("broken");
        }

        @Override
        public long nextLong(long bound) {
          throw new IllegalStateException("broken");
        }
      });
      trip(h);
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(SECOND);
    }

    @Test
    void keepsGrowingWhenItOpensAgainDuringTheRampAndStartsAgainOnceTheRampIsOver() {
      BreakerHarness h = harness(TEN.withRamp(Duration.ofSeconds(10)).withMinimumCalls(1));
      h.call(FAILED);
      h.clock.advance(Duration.ofSeconds(1));
      h.call(SUCCEEDED); // probe: closed, ramping
      h.call(FAILED); // the first attempt after closing always passes
      h.refused();
      assertThat(h.lastRetryAfter()).as("opened again during the ramp").isEqualTo(2 * SECOND);
      h.clock.advance(Duration.ofSeconds(2));
      h.call(SUCCEEDED);
      h.clock.advance(Duration.ofSeconds(10)); // through the whole ramp: recovered
      h.call(FAILED);
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(SECOND);
    }
  }

  @Nested
  class TheRamp {
    @Test
    void admitsAGrowingShareAfterClosingAndRefusesTheRestWithoutRetryAfter() {
      BreakerHarness h = harness(TEN.withRamp(Duration.ofSeconds(10)));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      h.call(SUCCEEDED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      int[] admittedPer1000 = new int[11];
      for (int second = 0; second <= 10; second++) {
        for (int i = 0; i < 1000; i++) {
          AttemptRecord r = h.tryAdmit();
          if (r != null) {
            admittedPer1000[second]++;
            h.end(r, SUCCEEDED);
          } else {
            assertThat(h.lastRetryAfter()).isEqualTo(-1);
          }
        }
        h.clock.advance(Duration.ofSeconds(1));
      }
      for (int second = 0; second < 10; second++) {
        double share = 0.1 + 0.9 * second / 10.0;
        assertThat(admittedPer1000[second]).as("second %d", second).isBetween((int) (share * 1000) - 1,
            (int) (share * 1000) + 2);
      }
      assertThat(admittedPer1000[10]).isEqualTo(1000);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      assertThat(h.breaker.metrics().refusals()).isEqualTo(11 * 1000 - sum(admittedPer1000));
    }

    @Test
    void isOnByDefault() {
      assertThat(Config.DEFAULT.ramp()).isEqualTo(Duration.ofSeconds(10));
      BreakerHarness h = harness(TEN.withRamp(Config.DEFAULT.ramp()));
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      h.call(SUCCEEDED);
      h.admitted();
      h.refused();
    }

    @Test
    void aZeroRampLetsEverythingBackAtOnce() {
      BreakerHarness h = harness(TEN);
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      h.call(SUCCEEDED);
      h.calls(1000, SUCCEEDED);
      assertThat(h.breaker.metrics().refusals()).isZero();
    }

    private int sum(int[] xs) {
      int s = 0;
      for (int x : xs) {
        s += x;
      }
      return s;
    }
  }

  @Nested
  class ByHand {
    @Test
    void isolateRefusesEverythingWithoutRetryAfterUntilReset() {
      BreakerHarness h = harness(TEN);
      h.breaker.isolate();
      assertThat(h.breaker.state()).isEqualTo(State.ISOLATED);
      assertThat(h.breaker.retryAfter()).isEmpty();
      h.clock.advance(Duration.ofDays(365));
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(-1);
      h.breaker.isolate(); // again: nothing changes
      h.breaker.reset();
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      h.call(SUCCEEDED);
      assertThat(h.breaker.metrics().transitionsTo(State.ISOLATED)).isEqualTo(1);
      assertThat(h.breaker.metrics().transitionsTo(State.CLOSED)).isEqualTo(1);
    }

    @Test
    void isolateWritesOffProbesOutAndTheirAnswersAreIgnored() {
      BreakerHarness h = harness(TEN);
      trip(h);
      h.clock.advance(Duration.ofSeconds(1));
      AttemptRecord probe = h.admitted();
      h.breaker.isolate();
      h.end(probe, SUCCEEDED);
      assertThat(h.breaker.state()).isEqualTo(State.ISOLATED);
      assertThat(h.breaker.probePermitsHeld()).isZero();
    }

    @Test
    void resetClosesAtOnceWithAnEmptyWindowAndNoRamp() {
      BreakerHarness h = harness(TEN.withRamp(Duration.ofMinutes(1)));
      List<AttemptRecord> before = new ArrayList<>();
      for (int i = 0; i < 9; i++) {
        before.add(h.admitted());
      }
      h.calls(9, FAILED);
      h.breaker.reset();
      assertThat(h.breaker.metrics().calls()).isZero();
      assertThat(h.breaker.metrics().transitionsTo(State.CLOSED)).as("it was closed already").isZero();
      for (AttemptRecord r : before) {
        h.end(r, FAILED); // admitted before the reset: ignored
      }
      h.call(FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
      h.calls(9, FAILED);
      assertThat(h.breaker.state()).isEqualTo(State.OPEN);
      h.breaker.reset();
      h.calls(1000, SUCCEEDED);
      assertThat(h.breaker.metrics().refusals()).as("no ramp after a reset").isZero();
      assertThat(h.breaker.metrics().transitionsTo(State.CLOSED)).isEqualTo(1);
    }

    @Test
    void resetFromHalfOpenReturnsToTheFirstBreak() {
      BreakerHarness h = harness(TEN);
      trip(h);
      for (int i = 0; i < 3; i++) { // three failed probes: the break is at 8 s
        h.clock.advance(Duration.ofSeconds(8));
        h.call(FAILED);
      }
      h.clock.advance(Duration.ofSeconds(8));
      h.admitted();
      h.breaker.reset();
      trip(h);
      h.refused();
      assertThat(h.lastRetryAfter()).isEqualTo(SECOND);
    }
  }

  @Nested
  class Metrics {
    @Test
    void reportTheWindowTheStateAndTheCounters() {
      BreakerHarness h = harness(TEN.withSlowCalls(Duration.ofSeconds(1), 1.0));
      h.calls(6, SUCCEEDED);
      h.call(SUCCEEDED, Duration.ofSeconds(2));
      h.calls(3, FAILED);
      CircuitBreaker.Metrics m = h.breaker.metrics();
      assertThat(m.state()).isEqualTo(State.CLOSED);
      assertThat(m.calls()).isEqualTo(10);
      assertThat(m.failedCalls()).isEqualTo(3);
      assertThat(m.slowCalls()).isEqualTo(1);
      assertThat(m.failureRate()).isEqualTo(0.3);
      assertThat(m.slowCallRate()).isEqualTo(0.1);
      assertThat(m.consecutiveFailures()).as("that trip is off").isZero();
      h.calls(4, FAILED);
      h.refused();
      h.refused();
      m = h.breaker.metrics();
      assertThat(m.state()).isEqualTo(State.OPEN);
      assertThat(m.calls()).as("the window that opened it").isEqualTo(14);
      assertThat(m.failureRate()).isEqualTo(0.5);
      assertThat(m.refusals()).isEqualTo(2);
      assertThat(m.transitionsTo(State.OPEN)).isEqualTo(1);
      assertThat(m.transitionsTo(State.HALF_OPEN)).isZero();
      assertThat(m.expiredProbes()).isZero();
      h.clock.advance(Duration.ofSeconds(10));
      assertThat(h.breaker.metrics().calls()).as("aged out").isZero();
      assertThat(h.breaker.metrics().failureRate()).isZero();
    }
  }

  @Test
  void worksWhenTheClockReadsNearLongMaxValueAndWrapsAround() {
    SeededClock clock = new SeededClock(Long.MAX_VALUE - 3 * SECOND, 7);
    clock.useRandom(highest());
    BreakerHarness h = new BreakerHarness(TEN.withRamp(Duration.ofSeconds(4)), clock);
    h.calls(9, FAILED);
    clock.advance(Duration.ofSeconds(5)); // across the wrap: Long.MAX_VALUE + 2 s
    assertThat(clock.nanoTime()).isNegative();
    assertThat(h.breaker.metrics().calls()).isEqualTo(9);
    h.call(FAILED);
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    h.refused();
    assertThat(h.lastRetryAfter()).isEqualTo(SECOND);
    clock.advance(Duration.ofSeconds(1));
    h.call(SUCCEEDED);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    clock.advance(Duration.ofSeconds(4));
    h.calls(100, SUCCEEDED);
    assertThat(h.breaker.metrics().refusals()).isEqualTo(1);
  }

  @Test
  void describesItself() {
    CircuitBreaker b = CircuitBreaker.of("inventory");
    assertThat(b.name()).isEqualTo("inventory");
    assertThat(b.config()).isEqualTo(Config.DEFAULT);
    assertThat(b.state()).isEqualTo(State.CLOSED);
    assertThat(b.retryAfter()).contains(Duration.ZERO);
    assertThat(b).hasToString("CircuitBreaker[inventory, CLOSED]");
    assertThat(b.timeSource()).isSameAs(TimeSource.system());
  }
}
