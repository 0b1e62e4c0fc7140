package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The core's rules as functions ({@link Decide}), exercised on their own over plain values: every
 * driver, the fast lanes' retry loop and {@code explain()} call these, so what holds here holds for
 * all of them.
 */
class DecideProperties {

  // ---------------------------------------------------------------- plans

  @Property(tries = 50)
  void aStopPlanCarriesItsReasonAndIsNeverADelay(@ForAll StopReason reason) {
    long plan = Decide.stop(reason);
    assertThat(Decide.stops(plan)).isTrue();
    assertThat(Decide.reason(plan)).isEqualTo(reason);
    assertThat(plan).isNotEqualTo(Decide.AWAIT_OTHERS);
  }

  @Property
  void aDelayIsNeverAStop(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long delay) {
    assertThat(Decide.stops(delay)).isFalse();
    assertThat(Decide.stops(Decide.AWAIT_OTHERS)).isFalse();
  }

  // ---------------------------------------------------------------- after an attempt

  @Property(tries = 2000)
  void afterAnAttemptTheCallGoesOnOnlyWhenEveryBoundAllows(
      @ForAll Verdict.Kind kind, @ForAll boolean othersRunning, @ForAll boolean draining,
      @ForAll("left") long left, @ForAll @IntRange(min = 1, max = 10) int attempts,
      @ForAll @IntRange(min = 1, max = 10) int maxAttempts, @ForAll boolean hedgesEndIt) {
    long plan = Decide.afterAttempt(kind, othersRunning, draining, left, attempts, maxAttempts, hedgesEndIt);
    boolean retryable = kind == Verdict.Kind.TRANSIENT || kind == Verdict.Kind.THROTTLED;
    if (kind == Verdict.Kind.OK) {
      assertThat(Decide.reason(plan)).isEqualTo(StopReason.SUCCEEDED);
    } else if (kind == Verdict.Kind.PERMANENT) {
      assertThat(Decide.reason(plan)).isEqualTo(StopReason.PERMANENT);
    } else if (othersRunning) {
      assertThat(plan).isEqualTo(Decide.AWAIT_OTHERS); // another attempt's end decides, whatever else holds
    } else if (draining) {
      assertThat(Decide.reason(plan)).isEqualTo(StopReason.DRAINING);
    } else if (left <= 0) {
      assertThat(Decide.reason(plan)).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    } else if (attempts >= maxAttempts || hedgesEndIt) {
      assertThat(Decide.reason(plan)).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    } else {
      assertThat(plan).isEqualTo(Decide.GO);
    }
    assertThat(plan == Decide.GO).isEqualTo(retryable && !othersRunning && !draining && left > 0
        && attempts < maxAttempts && !hedgesEndIt);
  }

  @Property(tries = 2000)
  void aRetryWaitsItsDelayOnlyWhenTheDelayEndsBeforeTheDeadline(
      @ForAll @LongRange(min = -1, max = Long.MAX_VALUE) long delay, @ForAll("left") long left) {
    long plan = Decide.afterWait(delay, left);
    if (delay < 0) {
      assertThat(Decide.reason(plan)).isEqualTo(StopReason.PERMANENT); // the backoff failed
    } else if (delay >= left) {
      assertThat(Decide.reason(plan)).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    } else {
      assertThat(plan).isEqualTo(delay);
    }
  }

  // ---------------------------------------------------------------- waits

  @Property(tries = 1000)
  void aWaitIsNeverNegativeNorOverTheMaximum(
      @ForAll @IntRange(min = 1, max = 70) int retry, @ForAll @LongRange(min = 0, max = 10_000) long baseMs,
      @ForAll @LongRange(min = 0, max = 100_000) long extraMs, @ForAll long seed,
      @ForAll("retryAfter") Optional<Duration> retryAfter) {
    long maxMs = baseMs + extraMs;
    Backoff backoff = Backoff.exponential(Duration.ofMillis(baseMs), Duration.ofMillis(baseMs), 2,
        Duration.ofMillis(maxMs));
    long max = Duration.ofMillis(maxMs).toNanos();
    Verdict verdict = retryAfter.isPresent() ? Verdict.throttled(retryAfter.get()) : Verdict.TRANSIENT;
    long wait = Decide.backoffNanos(backoff, max, retry, verdict, new SplittableRandom(seed), null);
    assertThat(wait).isBetween(0L, max);
    if (retryAfter.isEmpty()) {
      // the policy's own backoff decides, drawing from the same random source
      long own = Durations.toNanosSaturated(backoff.delay(retry, verdict, new SplittableRandom(seed)));
      assertThat(wait).isEqualTo(Math.min(own, max));
    }
    if (retryAfter.isPresent()) {
      // the server's Retry-After wins over the backoff, is capped by the maximum and never jittered
      long asked = Durations.toNanosSaturated(retryAfter.get());
      assertThat(wait).isEqualTo(Math.min(asked, max));
      assertThat(Decide.backoffNanos(backoff, max, retry, verdict, new SplittableRandom(seed + 1), null))
          .isEqualTo(wait);
    }
  }

  @Property(tries = 200)
  void aBackoffThatFailsStopsRetryingRatherThanThrowing(@ForAll boolean throwsIt,
      @ForAll @IntRange(min = 1, max = 10) int retry) {
    Backoff broken = new Backoff() {
      @Override
      @SuppressWarnings("NullAway") // (a broken backoff on purpose)
      public Duration delay(int attempt, Verdict verdict, java.util.random.RandomGenerator random) {
        if (throwsIt) {
          throw new IllegalStateException("broken backoff");
        }
        return null;
      }
    };
    assertThat(Decide.backoffNanos(broken, Long.MAX_VALUE, retry, Verdict.TRANSIENT, new SplittableRandom(1), null))
        .isEqualTo(-1);
    assertThat(Decide.reason(Decide.afterWait(-1, Long.MAX_VALUE))).isEqualTo(StopReason.PERMANENT);
  }

  @Property(tries = 500)
  void aRefusalPausesAtMostThePauseAndNeverPastTheDeadline(@ForAll StopReason reason, @ForAll("left") long left) {
    long pause = Decide.refusalPause(reason, left);
    if (reason == StopReason.DEADLINE_EXCEEDED || reason == StopReason.DRAINING) {
      assertThat(pause).isZero();
    } else {
      assertThat(pause).isEqualTo(Math.max(0, Math.min(Decide.REJECTION_PAUSE_NANOS, left)));
    }
  }

  @Property(tries = 1000)
  void timeLeftNeverGrowsAndIsNeverNegative(@ForAll("left") long deadline, @ForAll long start,
      @ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 4) long elapsed,
      @ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 4) long more) {
    long now = start + elapsed;
    long left = Decide.remaining(deadline, start, now);
    assertThat(left).isGreaterThanOrEqualTo(0);
    if (deadline == Long.MAX_VALUE) {
      assertThat(left).isEqualTo(Long.MAX_VALUE);
    } else {
      assertThat(Decide.remaining(deadline, start, now + more)).isLessThanOrEqualTo(left);
      assertThat(left).isEqualTo(Math.max(0, deadline - elapsed)); // the deadline less what has elapsed
    }
    assertThat(Decide.attemptTimeout(Long.MAX_VALUE, left)).isEqualTo(left);
  }

  @Property(tries = 500)
  void theLaterRetryAfterIsReported(@ForAll @LongRange(min = -1, max = 1_000_000_000_000L) long gate,
      @ForAll("retryAfter") Optional<Duration> server) {
    Verdict last = server.isPresent() ? Verdict.throttled(server.get()) : Verdict.TRANSIENT;
    Duration reported = Decide.retryAfter(gate, last);
    long expected = Math.max(gate, server.map(Durations::toNanosSaturated).orElse(-1L));
    if (expected < 0) {
      assertThat(reported).isNull();
    } else {
      assertThat(reported).isEqualTo(Duration.ofNanos(expected));
    }
  }

  // ---------------------------------------------------------------- gates

  /** A gate that admits or refuses as told and counts what it holds. */
  static class Counting extends Gate {
    final boolean admits;
    final long wait;
    int held;
    int asked;

    Counting(boolean admits, long wait) {
      this.admits = admits;
      this.wait = wait;
    }

    @Override StopReason refusal() { return StopReason.LIMITED; }

    @Override
    boolean tryAdmit(AttemptRecord attempt, int index, long now) {
      asked++;
      if (!admits) {
        return false;
      }
      held++;
      attempt.waitNanos = Math.max(attempt.waitNanos, wait);
      return true;
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      held--;
    }
  }

  @Property(tries = 1000)
  void theFirstGateInOrderThatRefusesDecidesAndWhatWasAdmittedIsGivenBackOnce(
      @ForAll @IntRange(min = 0, max = 6) int count, @ForAll long refusals, @ForAll long waits,
      @ForAll @IntRange(min = 0, max = 2) int kind, @ForAll @IntRange(min = 0, max = 1) int mode) {
    Counting[] gates = new Counting[count];
    int firstRefusing = -1;
    for (int i = 0; i < count; i++) {
      boolean admits = (refusals >>> i & 1) == 0;
      if (!admits && firstRefusing < 0) {
        firstRefusing = i;
      }
      gates[i] = new Counting(admits, (waits >>> i & 1) == 1 ? 5 : 0);
    }
    AttemptRecord r = new AttemptRecord().reset(1, kind, Criticality.CRITICAL, 0, count);
    int walkMode = mode == 0 ? Decide.WALK_ADMIT : Decide.WALK_HEDGE;
    int refusedBy = Decide.walk(gates, -1, r, 0, walkMode, 0);
    if (walkMode == Decide.WALK_ADMIT) {
      assertThat(refusedBy).isEqualTo(firstRefusing);
      for (int i = 0; i < count; i++) {
        // no gate after the refusing one is asked
        assertThat(gates[i].asked).isEqualTo(firstRefusing < 0 || i <= firstRefusing ? 1 : 0);
      }
    } else {
      // a hedge stops at the first gate that refuses or asks it to wait
      int stop = -1;
      for (int i = 0; i < count && stop < 0; i++) {
        if (!gates[i].admits || gates[i].wait > 0) {
          stop = i;
        }
      }
      assertThat(refusedBy).isEqualTo(stop);
    }
    Decide.release(gates, -1, r, Gate.NOT_STARTED, 0);
    Decide.release(gates, -1, r, Gate.NOT_STARTED, 0); // a second release gives back nothing more
    for (Counting g : gates) {
      assertThat(g.held).isZero();
    }
  }

  @Property(tries = 300)
  void theBudgetNeitherChargesNorRefusesAFirstAttempt(@ForAll @IntRange(min = 0, max = 2) int kind) {
    TokenBucket empty = (TokenBucket) RetryBudget.of(0.1, 0);
    while (empty.trySpend(Criticality.CRITICAL)) {
      // drain it
    }
    Gate[] gates = {new BudgetGate(empty, SystemTime.INSTANCE)};
    AttemptRecord r = new AttemptRecord().reset(1, kind, Criticality.CRITICAL, 0, 0);
    int refusedBy = Decide.walk(gates, 0, r, 0, Decide.WALK_ADMIT, 0);
    if (kind == AttemptRecord.FIRST) {
      assertThat(refusedBy).isEqualTo(Decide.ADMITTED);
      assertThat(r.admitted).isEqualTo(1);
    } else {
      assertThat(refusedBy).isZero(); // retries and hedges are funded by the budget, which is empty
      assertThat(r.retryAfterNanos).isNotZero();
    }
    AttemptRecord probe = new AttemptRecord().reset(1, AttemptRecord.RETRY, Criticality.CRITICAL, 0, 0);
    double before = empty.tokens();
    assertThat(Decide.walk(gates, 0, probe, 0, Decide.WALK_PROBE, 0)).isZero();
    assertThat(empty.tokens()).isEqualTo(before); // asked, not charged
  }

  @Property(tries = 200)
  void aProbeAsksWithoutChargingAndAQueueingGateEndsItWithoutARefusal(@ForAll boolean queueing,
      @ForAll boolean funded) {
    Counting first = new Counting(true, 0);
    Gate queue = new Counting(false, 0) {
      @Override long maxWaitNanos() { return queueing ? 1_000_000 : 0; }
    };
    TokenBucket budget = (TokenBucket) RetryBudget.of(0.1, 0);
    if (!funded) {
      while (budget.trySpend(Criticality.CRITICAL)) {
        // drain it
      }
    }
    Gate[] gates = {first, queue, new BudgetGate(budget, SystemTime.INSTANCE)};
    AttemptRecord r = new AttemptRecord().reset(2, AttemptRecord.RETRY, Criticality.CRITICAL, 0, 3);
    double before = budget.tokens();
    int refusedBy = Decide.walk(gates, 2, r, 0, Decide.WALK_PROBE, 0);
    // a gate that would queue the retry is left to the wait; one that refuses outright is reported
    assertThat(refusedBy).isEqualTo(queueing ? Decide.ADMITTED : 1);
    assertThat(budget.tokens()).isEqualTo(before);
    Decide.release(gates, 2, r, Gate.NOT_STARTED, 0);
    assertThat(first.held).isZero();
    Gate[] onlyBudget = {new BudgetGate(budget, SystemTime.INSTANCE)};
    AttemptRecord retry = new AttemptRecord().reset(2, AttemptRecord.RETRY, Criticality.CRITICAL, 0, 1);
    int byBudget = Decide.walk(onlyBudget, 0, retry, 0, Decide.WALK_PROBE, 0);
    assertThat(byBudget).isEqualTo(funded ? Decide.ADMITTED : 0);
    assertThat(retry.retryAfterNanos).isEqualTo(funded ? -1 : budget.retryAfterNanos(Criticality.CRITICAL));
    assertThat(budget.tokens()).isEqualTo(before);
  }

  @Property(tries = 300)
  void theLongestWaitAGateAsksForIsKept(@ForAll @LongRange(min = 0, max = 1000) long a,
      @ForAll @LongRange(min = 0, max = 1000) long b) {
    Gate[] gates = {new Counting(true, a), new Counting(true, 0), new Counting(true, b)};
    AttemptRecord r = new AttemptRecord().reset(1, AttemptRecord.FIRST, Criticality.CRITICAL, 0, 3);
    assertThat(Decide.walk(gates, -1, r, 0, Decide.WALK_ADMIT, 0)).isEqualTo(Decide.ADMITTED);
    assertThat(r.waitNanos).isEqualTo(Math.max(a, b));
    assertThat(r.admitted).isEqualTo(3);
  }

  @Property(tries = 100)
  void noNewAttemptStartsWhileDrainingOrPastTheDeadline(@ForAll boolean draining, @ForAll("left") long left) {
    StopReason why = Decide.mayStart(draining, left);
    if (draining) {
      assertThat(why).isEqualTo(StopReason.DRAINING); // draining is told first
    } else if (left <= 0) {
      assertThat(why).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    } else {
      assertThat(why).isNull();
    }
  }

  @Property(tries = 50)
  void aGateIsToldHowItsAttemptEnded(@ForAll Verdict.Kind kind, @ForAll boolean timedOut) {
    int how = Decide.howEnded(kind, timedOut);
    if (timedOut) {
      assertThat(how).isEqualTo(Gate.TIMED_OUT);
      return;
    }
    switch (kind) {
      case OK: assertThat(how).isEqualTo(Gate.SUCCEEDED); break;
      case TRANSIENT: assertThat(how).isEqualTo(Gate.FAILED); break;
      case THROTTLED: assertThat(how).isEqualTo(Gate.THROTTLED); break;
      default: assertThat(how).isEqualTo(Gate.REJECTED);
    }
  }

  @Property(tries = 50)
  void aSuccessDepositsAndIsMeasuredAndNothingElseIs(@ForAll Verdict.Kind kind) {
    TokenBucket budget = (TokenBucket) RetryBudget.of(0.5, 0);
    while (budget.trySpend(Criticality.CRITICAL)) {
      // drain it, so that a deposit shows
    }
    double tokens = budget.tokens();
    Resilience measured = Resilience.DEFAULT.withMeasuredTiming(MeasuredTiming.multipleOfP95(3));
    LatencyHistogram histogram = java.util.Objects.requireNonNull(measured.latencies);
    long now = System.nanoTime(); // (the histogram's window is on the policy's clock, the real one)
    Decide.accounted(measured, budget, kind, 5_000_000, now);
    assertThat(budget.tokens() - tokens).isEqualTo(kind == Verdict.Kind.OK ? 0.5 : 0.0);
    assertThat(histogram.samples(now)).isEqualTo(kind == Verdict.Kind.OK ? 1 : 0); // a new policy's first
  }

  @Property(tries = 100)
  void aStoppedCallGivesItsOwnFailureOrQuellsExceptionNamingThePolicy(@ForAll StopReason reason,
      @ForAll boolean lastHasValue, @ForAll @IntRange(min = 1, max = 5) int attempts) {
    Resilience policy = Resilience.DEFAULT.withName("inventory-\u00e9");
    Throwable last = lastHasValue ? null : new java.io.IOException("boom");
    Throwable t = Decide.failure(reason, policy, RetryBudget.NONE, attempts, 30_000_000_000L, 5, lastHasValue, last,
        Verdict.TRANSIENT, 7, false);
    switch (reason) {
      case SUCCEEDED:
        assertThat(t).isNull();
        return;
      case PERMANENT:
      case ATTEMPTS_EXHAUSTED:
        assertThat(t).isSameAs(last); // the work's own failure, unchanged; none when it gave a value
        return;
      case CANCELLED:
        assertThat(t).isInstanceOf(InterruptedException.class);
        assertThat(t.getCause()).isSameAs(last);
        break;
      case DEADLINE_EXCEEDED:
        assertThat(t).isInstanceOf(DeadlineExceededException.class).hasMessageContaining("30000 ms");
        break;
      case LIMITED:
        assertThat(t).isInstanceOf(RateLimitedException.class);
        break;
      default:
        assertThat(t).isInstanceOf(CallRejectedException.class);
        assertThat(((CallRejectedException) t).reason()).isEqualTo(reason);
        assertThat(((CallRejectedException) t).retryAfter()).contains(Duration.ofNanos(7));
    }
    assertThat(t).hasMessageContaining("inventory-\u00e9");
    if (reason != StopReason.CANCELLED) {
      assertThat(t).hasMessageContaining(attempts + (attempts == 1 ? " attempt" : " attempts"));
      assertThat(t.getCause()).isSameAs(last);
    }
  }

  // ---------------------------------------------------------------- arbitraries

  @Provide
  Arbitrary<Long> left() {
    return Arbitraries.oneOf(Arbitraries.longs().between(-5, 5), Arbitraries.longs().between(0, Long.MAX_VALUE),
        Arbitraries.just(Long.MAX_VALUE));
  }

  @Provide
  Arbitrary<Optional<Duration>> retryAfter() {
    return Arbitraries.oneOf(Arbitraries.just(Optional.empty()),
        Arbitraries.longs().between(0, 3_600_000).map(ms -> Optional.of(Duration.ofMillis(ms))),
        Arbitraries.just(Optional.of(Duration.ofSeconds(Long.MAX_VALUE))));
  }
}
