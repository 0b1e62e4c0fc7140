package dev.quell;

import static dev.quell.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Limiter.AdaptiveConfig;
import dev.quell.Limiter.AdaptiveConfig.Mode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AdaptiveLimiterTest {
  private static final long MS = 1_000_000L;
  private long now = 1_000 * MS;

  @Test
  void theDefaultFindsTheKneeFromFiveToAThousandStartingAtTwenty() {
    AdaptiveConfig d = AdaptiveConfig.DEFAULT;
    assertThat(d.mode()).isEqualTo(Mode.KNEE);
    assertThat(d.initialLimit()).isEqualTo(20);
    assertThat(d.minLimit()).isEqualTo(5);
    assertThat(d.maxLimit()).isEqualTo(1000);
    assertThat(Limiter.adaptive().limit()).isEqualTo(20);
  }

  @Test
  void theLossModesDefaultsAreNetflixsAimd() {
    AdaptiveConfig c = AdaptiveConfig.loss();
    assertThat(c.mode()).isEqualTo(Mode.LOSS);
    assertThat(c.initialLimit()).isEqualTo(20);
    assertThat(c.minLimit()).isEqualTo(20);
    assertThat(c.maxLimit()).isEqualTo(200);
    assertThat(c.backoffRatio()).isEqualTo(0.9);
    Limiter limiter = Limiter.adaptive(c);
    assertThat(limiter.limit()).isEqualTo(20);
    assertThat(limiter.name()).startsWith("adaptive-");
  }

  /** Admits {@code n} attempts at once and ends them all as {@code how} after {@code rttMillis}. */
  private static void wave(AdaptiveLimiter limiter, int n, int how, long rttMillis) {
    List<long[]> admitted = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int inFlight = limiter.tryAcquire();
      if (inFlight > 0) {
        admitted.add(new long[] {inFlight, limiter.epoch()});
      }
    }
    for (long[] a : admitted) {
      limiter.releasePermit(how, (int) a[0], (int) a[1], rttMillis * MS);
    }
  }

  private static AdaptiveLimiter knee(int initial) {
    return (AdaptiveLimiter) Limiter.adaptive(AdaptiveConfig.DEFAULT.withInitialLimit(initial));
  }

  @Test
  void theKneeModeGrowsWhileLatencyStaysFlatAndTheLimitIsUsed() {
    AdaptiveLimiter limiter = knee(20);
    for (int i = 0; i < 10; i++) {
      wave(limiter, limiter.limit(), Gate.SUCCEEDED, 20);
    }
    assertThat(limiter.limit()).isGreaterThan(100); // slow start: half again each window
    assertThat(limiter.baselineNanos()).isCloseTo(20.0 * MS, within(0.05 * 20 * MS));
  }

  @Test
  void theKneeModeShrinksWhenLatencyRisesAboveItsBaseline() {
    AdaptiveLimiter limiter = knee(100);
    for (int i = 0; i < 5; i++) {
      wave(limiter, 100, Gate.SUCCEEDED, 20);
    }
    int before = limiter.limit();
    for (int i = 0; i < 5 && limiter.limit() == before; i++) {
      wave(limiter, before, Gate.SUCCEEDED, 40); // until a window closes
    }
    assertThat(limiter.limit()).isLessThan(before).isGreaterThanOrEqualTo(before / 2);
  }

  /**
   * Admits {@code n} attempts at once and ends them: {@code lostShare} of them as timeouts (after
   * {@code timeoutMillis}), spread evenly among the rest, which answer after {@code rttMillis}.
   */
  private static void mixedWave(AdaptiveLimiter limiter, int n, double lostShare, long rttMillis, long timeoutMillis) {
    List<long[]> admitted = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int inFlight = limiter.tryAcquire();
      if (inFlight > 0) {
        admitted.add(new long[] {inFlight, limiter.epoch()});
      }
    }
    for (int i = 0; i < admitted.size(); i++) {
      long[] a = admitted.get(i);
      boolean lost = Math.floor((i + 1) * lostShare) > Math.floor(i * lostShare);
      limiter.releasePermit(lost ? Gate.TIMED_OUT : Gate.SUCCEEDED, (int) a[0], (int) a[1],
          (lost ? timeoutMillis : rttMillis) * MS);
    }
  }

  @Test
  void moreTimeoutsThanUsualShrinkTheLimitWhileTheAnsweredAttemptsAreStillFast() {
    // timeouts near the latency itself: half the attempts time out even below the knee
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(AdaptiveConfig.DEFAULT.withInitialLimit(100)
        .withMaxLimit(100));
    for (int i = 0; i < 40; i++) {
      mixedWave(limiter, 100, 0.5, 10, 20);
    }
    assertThat(limiter.limit()).isEqualTo(100); // the usual share of timeouts is no reason to shrink
    // past the cliff: four in five time out, while those that answer are as fast as ever
    for (int i = 0; i < 4 && limiter.limit() == 100; i++) {
      mixedWave(limiter, 100, 0.8, 10, 20);
    }
    assertThat(limiter.limit()).isLessThan(100).isGreaterThanOrEqualTo(50);
  }

  @Test
  void aRunOfDecreasesIsOneCongestionAndTheLimitProbesGentlyNearWhereItBegan() {
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(AdaptiveConfig.DEFAULT.withInitialLimit(100)
        .withMaxLimit(100));
    for (int i = 0; i < 10; i++) {
      wave(limiter, 100, Gate.SUCCEEDED, 20);
    }
    // congestion at 100: latency doubles, then the queue it built times out a whole window
    for (int i = 0; i < 4 && limiter.limit() == 100; i++) {
      wave(limiter, 100, Gate.SUCCEEDED, 40);
    }
    int afterLatency = limiter.limit();
    assertThat(afterLatency).isLessThan(100);
    for (int i = 0; i < 4 && limiter.limit() == afterLatency; i++) {
      wave(limiter, limiter.limit(), Gate.TIMED_OUT, 60);
    }
    assertThat(limiter.limit()).isLessThan(afterLatency);
    // latency is flat again: the limit climbs back quickly, and by one a window from 85% of where
    // the congestion began (100), not from the lower limits the run of decreases passed through
    double previous = limiter.exactLimit();
    List<Double> steps = new ArrayList<>();
    for (int i = 0; i < 400 && limiter.exactLimit() < 100; i++) {
      wave(limiter, limiter.limit(), Gate.SUCCEEDED, 20);
      double now = limiter.exactLimit();
      if (now != previous) {
        if (previous >= 85) {
          steps.add(now - previous);
        }
        previous = now;
      }
    }
    assertThat(limiter.limit()).isEqualTo(100);
    assertThat(steps).hasSizeGreaterThan(5); // the last step is cut short by the maximum
    assertThat(steps.subList(0, steps.size() - 1)).allSatisfy(step -> assertThat(step).isCloseTo(1.0, within(1e-9)));
  }

  @Test
  void aSmallShareOfASharedDependencyDoesNotTakeTheOthersQueueingAsItsBaselineFromTwoSmallWindows() {
    // one of ten clients of a dependency: a limit of 10, so windows of a few dozen attempts
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(AdaptiveConfig.DEFAULT.withInitialLimit(10)
        .withMaxLimit(10));
    for (int i = 0; i < 40; i++) {
      wave(limiter, 10, Gate.SUCCEEDED, 20);
    }
    double baseline = limiter.baselineNanos();
    // the others queue the dependency: latency doubles, and this client's decreases do not bring it down
    int ended = 0;
    while (ended < 200) {
      int n = limiter.limit();
      wave(limiter, n, Gate.SUCCEEDED, 40);
      ended += n;
    }
    assertThat(limiter.baselineNanos()).isEqualTo(baseline);
    assertThat(limiter.limit()).isLessThan(10);
    // but a dependency that stays that slow over enough attempts is taken as slower for good
    for (int i = 0; i < 400; i++) {
      wave(limiter, limiter.limit(), Gate.SUCCEEDED, 40);
    }
    assertThat(limiter.baselineNanos()).isCloseTo(40.0 * MS, within(0.05 * 40 * MS));
  }

  @Test
  void aBurstOfTimeoutsCostsOneDecreaseNotACollapseToTheMinimum() {
    AdaptiveLimiter limiter = knee(200);
    wave(limiter, 200, Gate.SUCCEEDED, 20);
    // everything in flight times out: the first window of losses halves the limit, and the rest,
    // admitted before that decrease, are not counted again
    List<long[]> admitted = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      admitted.add(new long[] {limiter.tryAcquire(), limiter.epoch()});
    }
    for (long[] a : admitted) {
      limiter.releasePermit(Gate.TIMED_OUT, (int) a[0], (int) a[1], 60 * MS);
    }
    assertThat(limiter.limit()).isGreaterThanOrEqualTo(limiter.config().initialLimit() / 2 - 1);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void cancellationsAndAttemptsThatNeverStartedAreNeutralInTheKneeMode() {
    AdaptiveLimiter limiter = knee(50);
    for (int i = 0; i < 1000; i++) {
      wave(limiter, 50, i % 2 == 0 ? Gate.CANCELLED : Gate.NOT_STARTED, 1 + i);
    }
    assertThat(limiter.exactLimit()).isEqualTo(50.0);
    assertThat(limiter.baselineNanos()).isNaN();
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void healthChecksInAQuietSpellDoNotPoisonTheBaseline() {
    AdaptiveLimiter limiter = knee(100);
    for (int i = 0; i < 20; i++) {
      wave(limiter, limiter.limit(), Gate.SUCCEEDED, 20);
    }
    int before = limiter.limit();
    double baseline = limiter.baselineNanos();
    // a quiet spell: one health check at a time, 1 ms each, thousands of them
    for (int i = 0; i < 5000; i++) {
      wave(limiter, 1, Gate.SUCCEEDED, 1);
    }
    assertThat(limiter.baselineNanos()).isEqualTo(baseline);
    // the load comes back at its usual latency: nothing to shrink for
    wave(limiter, before, Gate.SUCCEEDED, 20);
    assertThat(limiter.limit()).isGreaterThanOrEqualTo(before);
  }

  @Test
  void aDependencyThatBecameSlowerForGoodIsTakenAsTheNewBaselineAfterTwoDecreases() {
    AdaptiveLimiter limiter = knee(100);
    for (int i = 0; i < 20; i++) {
      wave(limiter, limiter.limit(), Gate.SUCCEEDED, 20);
    }
    for (int i = 0; i < 10; i++) {
      wave(limiter, limiter.limit(), Gate.SUCCEEDED, 40); // twice as slow, whatever the limit
    }
    assertThat(limiter.baselineNanos()).isCloseTo(40.0 * MS, within(0.05 * 40 * MS));
    assertThat(limiter.limit()).isGreaterThanOrEqualTo(50);
  }

  @Test
  void admitsUpToTheLimitAndRefusesWithoutARetryAfter() {
    Limiter limiter = Limiter.adaptive(AdaptiveConfig.loss().withMinLimit(1).withInitialLimit(3));
    for (int i = 0; i < 3; i++) {
      assertThat(limiter.gate().tryAdmit(attempt(now), 0, now)).isTrue();
    }
    AttemptRecord refused = attempt(now);
    assertThat(limiter.gate().tryAdmit(refused, 0, now)).isFalse();
    assertThat(refused.retryAfterNanos).isEqualTo(-1);
    assertThat(limiter.gate().refusal()).isEqualTo(StopReason.LIMITED);
    assertThat(limiter.inFlight()).isEqualTo(3);
    assertThat(limiter.available()).isZero();
  }

  @Test
  void failuresTimeoutsAndThrottlingShrinkTheLimitByTheBackoffRatioDownToTheMinimum() {
    AdaptiveLimiter limiter = loss(5, 20, 200);
    end(limiter, Gate.FAILED);
    assertThat(limiter.exactLimit()).isEqualTo(18.0);
    end(limiter, Gate.TIMED_OUT);
    assertThat(limiter.exactLimit()).isCloseTo(16.2, within(1e-9));
    end(limiter, Gate.THROTTLED);
    assertThat(limiter.exactLimit()).isCloseTo(14.58, within(1e-9));
    assertThat(limiter.limit()).isEqualTo(14);
    for (int i = 0; i < 50; i++) {
      end(limiter, Gate.FAILED);
    }
    assertThat(limiter.exactLimit()).isEqualTo(5.0);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void successesGrowTheLimitByOneOnlyWhileAtLeastHalfOfItIsInUse() {
    AdaptiveLimiter limiter = loss(5, 20, 200);
    end(limiter, Gate.SUCCEEDED); // alone in flight: 1 × 2 < 20, the limit is not being tested
    assertThat(limiter.exactLimit()).isEqualTo(20.0);
    List<AttemptRecord> ten = admit(limiter, 10); // the tenth met 10 in flight: 10 × 2 ≥ 20
    for (AttemptRecord a : ten) {
      limiter.gate().release(a, 0, Gate.SUCCEEDED, now);
    }
    assertThat(limiter.exactLimit()).isEqualTo(21.0);
    List<AttemptRecord> twenty = admit(limiter, 20);
    for (AttemptRecord a : twenty) {
      limiter.gate().release(a, 0, Gate.SUCCEEDED, now);
    }
    assertThat(limiter.exactLimit()).isEqualTo(21.0 + 10); // those admitted 11th to 20th each add one
  }

  @Test
  void aPermanentErrorIsAnAnswerAndGrowsLikeASuccess() {
    AdaptiveLimiter limiter = loss(1, 2, 10);
    List<AttemptRecord> both = admit(limiter, 2);
    limiter.gate().release(both.get(0), 0, Gate.REJECTED, now);
    limiter.gate().release(both.get(1), 0, Gate.REJECTED, now);
    assertThat(limiter.exactLimit()).isEqualTo(4.0);
  }

  @Test
  void cancelledAttemptsAndAttemptsThatNeverStartedAreNeutral() {
    AdaptiveLimiter limiter = loss(1, 4, 10);
    List<AttemptRecord> all = admit(limiter, 4);
    limiter.gate().release(all.get(0), 0, Gate.CANCELLED, now);
    limiter.gate().release(all.get(1), 0, Gate.NOT_STARTED, now);
    limiter.gate().release(all.get(2), 0, Gate.CANCELLED, now);
    limiter.gate().release(all.get(3), 0, Gate.NOT_STARTED, now);
    assertThat(limiter.exactLimit()).isEqualTo(4.0);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void theLimitNeverRisesAboveTheMaximum() {
    AdaptiveLimiter limiter = loss(1, 2, 3);
    for (int round = 0; round < 10; round++) {
      for (AttemptRecord a : admit(limiter, limiter.limit())) {
        limiter.gate().release(a, 0, Gate.SUCCEEDED, now);
      }
    }
    assertThat(limiter.exactLimit()).isEqualTo(3.0);
  }

  @Test
  void aLimitThatFallsBelowWhatIsInFlightRefusesUntilEnoughEnd() {
    AdaptiveLimiter limiter = loss(1, 10, 10);
    List<AttemptRecord> ten = admit(limiter, 10);
    limiter.gate().release(ten.get(0), 0, Gate.TIMED_OUT, now); // 9 in flight, limit 9
    limiter.gate().release(ten.get(1), 0, Gate.TIMED_OUT, now); // 8 in flight, limit 8.1
    assertThat(limiter.limit()).isEqualTo(8);
    assertThat(limiter.available()).isZero();
    assertThat(limiter.gate().tryAdmit(attempt(now), 0, now)).isFalse();
    limiter.gate().release(ten.get(2), 0, Gate.CANCELLED, now);
    assertThat(limiter.gate().tryAdmit(attempt(now), 0, now)).isTrue();
  }

  @Test
  void gradientModeGrowsWhileLatencyHoldsAndShrinksWhenItRises() {
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(
        AdaptiveConfig.gradient().withMinLimit(4).withInitialLimit(20).withMaxLimit(100));
    for (int i = 0; i < 200; i++) {
      loadedEnd(limiter, 10 * MS, Gate.SUCCEEDED); // steady 10 ms with the limit in use
    }
    double grown = limiter.exactLimit();
    assertThat(grown).isGreaterThan(20.0);
    for (int i = 0; i < 20; i++) {
      loadedEnd(limiter, 40 * MS, Gate.SUCCEEDED); // latency four times the long-run average: queueing
    }
    assertThat(limiter.exactLimit()).isLessThan(grown * 0.5);
    assertThat(limiter.exactLimit()).isGreaterThanOrEqualTo(4.0);
  }

  @Test
  void gradientModeHoldsTheLimitWhenItIsNotInUse() {
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(AdaptiveConfig.gradient());
    for (int i = 0; i < 50; i++) {
      AttemptRecord a = attempt(now - 10 * MS);
      limiter.gate().tryAdmit(a, 0, now - 10 * MS);
      limiter.gate().release(a, 0, Gate.SUCCEEDED, now);
    }
    assertThat(limiter.exactLimit()).isEqualTo(20.0);
  }

  @Test
  void gradientModeStillShrinksOnLossAndIgnoresCancellations() {
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(AdaptiveConfig.gradient().withMinLimit(1));
    loadedEnd(limiter, 10 * MS, Gate.THROTTLED);
    assertThat(limiter.exactLimit()).isEqualTo(18.0);
    loadedEnd(limiter, 500 * MS, Gate.CANCELLED);
    loadedEnd(limiter, 500 * MS, Gate.REJECTED);
    assertThat(limiter.exactLimit()).isEqualTo(18.0);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void theConfigurationIsAnImmutableValue() {
    AdaptiveConfig base = AdaptiveConfig.loss();
    AdaptiveConfig changed = base.withMinLimit(2).withInitialLimit(5).withMaxLimit(50).withBackoffRatio(0.5)
        .withMode(Mode.GRADIENT).withTolerance(2).withSmoothing(1).withLongWindow(100);
    assertThat(base).isEqualTo(AdaptiveConfig.loss());
    assertThat(base.minLimit()).isEqualTo(20);
    assertThat(changed.minLimit()).isEqualTo(2);
    assertThat(changed.initialLimit()).isEqualTo(5);
    assertThat(changed.maxLimit()).isEqualTo(50);
    assertThat(changed.backoffRatio()).isEqualTo(0.5);
    assertThat(changed.mode()).isEqualTo(Mode.GRADIENT);
    assertThat(changed.tolerance()).isEqualTo(2.0);
    assertThat(changed.smoothing()).isEqualTo(1.0);
    assertThat(changed.longWindow()).isEqualTo(100);
    assertThat(changed).isEqualTo(base.withMinLimit(2).withInitialLimit(5).withMaxLimit(50).withBackoffRatio(0.5)
        .withMode(Mode.GRADIENT).withTolerance(2).withSmoothing(1).withLongWindow(100));
    assertThat(changed.hashCode()).isEqualTo(changed.withMode(Mode.GRADIENT).hashCode());
    assertThat(changed).isNotEqualTo(changed.withLongWindow(101));
    assertThat(AdaptiveConfig.gradient()).isEqualTo(base.withMode(Mode.GRADIENT));
    assertThat(changed.toString()).contains("GRADIENT", "min=2", "tolerance=2.0");
    assertThat(base.toString()).doesNotContain("tolerance");
  }

  @Test
  void eachSettingRejectsBadValuesByName() {
    AdaptiveConfig c = AdaptiveConfig.DEFAULT;
    assertThatThrownBy(() -> c.withBackoffRatio(0.49)).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("adaptive backoffRatio was 0.49");
    assertThatThrownBy(() -> c.withBackoffRatio(1.0)).hasMessageContaining("backoffRatio was 1.0");
    assertThatThrownBy(() -> c.withBackoffRatio(Double.NaN)).hasMessageContaining("backoffRatio was NaN");
    assertThatThrownBy(() -> c.withMinLimit(0)).hasMessageContaining("adaptive minLimit was 0");
    assertThatThrownBy(() -> c.withMaxLimit(-1)).hasMessageContaining("adaptive maxLimit was -1");
    assertThatThrownBy(() -> c.withInitialLimit(Integer.MAX_VALUE))
        .hasMessageContaining("adaptive initialLimit was 2147483647");
    assertThatThrownBy(() -> c.withTolerance(0.9)).hasMessageContaining("adaptive tolerance was 0.9");
    assertThatThrownBy(() -> c.withTolerance(Double.POSITIVE_INFINITY)).hasMessageContaining("tolerance was Infinity");
    assertThatThrownBy(() -> c.withSmoothing(0)).hasMessageContaining("adaptive smoothing was 0.0");
    assertThatThrownBy(() -> c.withSmoothing(Double.NaN)).hasMessageContaining("smoothing was NaN");
    assertThatThrownBy(() -> c.withLongWindow(9)).hasMessageContaining("adaptive longWindow was 9");
    assertThatThrownBy(() -> c.withMode((Mode) nothing())).hasMessageContaining("adaptive mode was null");
    assertThatThrownBy(() -> Limiter.adaptive((AdaptiveConfig) nothing()))
        .hasMessageContaining("adaptive limiter config was null");
  }

  @Test
  void inconsistentLimitsAreRejectedWhenTheLimiterIsBuiltWhateverTheOrderOfTheSettings() {
    AdaptiveConfig raisedFloor = AdaptiveConfig.loss().withMaxLimit(10); // fine so far: initial and min are 20
    ResilienceConfigurationException e = catchThrowableOfType(ResilienceConfigurationException.class,
        () -> Limiter.adaptive(raisedFloor));
    assertThat(e.problems()).containsExactly(
        "adaptive minLimit was 20: must not be above maxLimit (10)",
        "adaptive initialLimit was 20: must be in [minLimit, maxLimit] = [20, 10]");
    assertThat(Limiter.adaptive(raisedFloor.withMinLimit(1).withInitialLimit(10)).limit()).isEqualTo(10);
    assertThatThrownBy(() -> Limiter.adaptive(AdaptiveConfig.loss().withInitialLimit(201)))
        .hasMessageContaining("initialLimit was 201");
  }

  @Test
  void theLargestLimitsWorkWithoutOverflow() {
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(AdaptiveConfig.loss()
        .withMaxLimit(AdaptiveConfig.MAX_LIMIT).withInitialLimit(AdaptiveConfig.MAX_LIMIT));
    assertThat(limiter.limit()).isEqualTo(AdaptiveConfig.MAX_LIMIT);
    AttemptRecord a = attempt(now); // one record for all: only its mark (the last in-flight count) is read
    for (int i = 0; i < 600_000; i++) {
      assertThat(limiter.gate().tryAdmit(a, 0, now)).isTrue();
    }
    assertThat(limiter.inFlight()).isEqualTo(600_000);
    for (int i = 0; i < 600_000; i++) {
      limiter.gate().release(a, 0, Gate.SUCCEEDED, now);
    }
    assertThat(limiter.limit()).isEqualTo(AdaptiveConfig.MAX_LIMIT);
    assertThat(limiter.inFlight()).isZero();
  }

  private AdaptiveLimiter loss(int min, int initial, int max) {
    return (AdaptiveLimiter) Limiter.adaptive(
        AdaptiveConfig.loss().withMinLimit(min).withMaxLimit(max).withInitialLimit(initial));
  }

  private void end(AdaptiveLimiter limiter, int how) {
    AttemptRecord a = attempt(now);
    assertThat(limiter.gate().tryAdmit(a, 0, now)).isTrue();
    limiter.gate().release(a, 0, how, now);
  }

  /** One attempt of {@code rtt} ending as {@code how}, admitted while the limit was fully in use. */
  private void loadedEnd(AdaptiveLimiter limiter, long rtt, int how) {
    AttemptRecord a = attempt(now);
    assertThat(limiter.gate().tryAdmit(a, 0, now)).isTrue();
    a.marks[0] = limiter.limit(); // as if it met a full house
    a.startNanos = now;
    now += rtt;
    limiter.gate().release(a, 0, how, now);
  }

  private List<AttemptRecord> admit(Limiter limiter, int n) {
    List<AttemptRecord> admitted = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      AttemptRecord a = attempt(now);
      assertThat(limiter.gate().tryAdmit(a, 0, now)).as("attempt %d", i).isTrue();
      admitted.add(a);
    }
    return admitted;
  }

  private static Object nothing() {
    return null;
  }
}
