package dev.quell;

import static dev.quell.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Limiter.AdaptiveConfig;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Bounds that must hold for every sequence of admissions, releases, refunds, waits and passing time. */
class LimiterProperties {
  private static final long MS = 1_000_000L;

  /** One step: {@code kind} picks the action, {@code a} and {@code b} parametrize it. */
  static final class Step {
    final int kind;
    final int a;
    final int b;

    Step(int kind, int a, int b) {
      this.kind = kind;
      this.a = a;
      this.b = b;
    }

    @Override
    public String toString() {
      return "step(" + kind + ", " + a + ", " + b + ")";
    }
  }

  // Rate ----------------------------------------------------------------------------------------

  /**
   * Whatever the sequence of admissions (with and without a deadline), refunds of attempts that have
   * not started, and time passing: in every window between two starts, at most
   * {@code burst + perSecond × window} attempts start — so no window boundary ever lets twice the
   * rate through — and in all, at most {@code burst + perSecond × elapsed}.
   */
  @Property(tries = 400)
  void rateStartsNeverExceedBurstPlusRateTimesAnyWindow(
      @ForAll("rates") double perSecond,
      @ForAll @IntRange(min = 1, max = 8) int burst,
      @ForAll("waits") Duration maxWait,
      @ForAll("rateSteps") List<Step> steps) {
    SteppingClock clock = new SteppingClock();
    long created = clock.nanoTime();
    Limiter limiter = Limiter.rate(perSecond, burst, maxWait, clock);
    Gate gate = limiter.gate();
    List<Long> starts = new ArrayList<>();
    List<AttemptRecord> pending = new ArrayList<>(); // admitted, start still ahead: may be refunded
    List<Long> pendingStarts = new ArrayList<>();
    for (Step s : steps) {
      long now = clock.nanoTime();
      for (int i = pending.size() - 1; i >= 0; i--) {
        if (pendingStarts.get(i) < now) { // its start has passed: it ran and keeps its token
          starts.add(pendingStarts.remove(i));
          pending.remove(i);
        }
      }
      switch (s.kind) {
        case 0: {
          long remaining = s.a % 3 == 0 ? Long.MAX_VALUE : s.a % 3 == 1 ? 50 * MS : 700 * MS;
          AttemptRecord a = attempt(now, remaining);
          if (gate.tryAdmit(a, 0, now)) {
            assertThat(a.waitNanos).isBetween(0L, Math.min(maxWait.toNanos(), remaining - 1));
            pending.add(a);
            pendingStarts.add(now + a.waitNanos);
          } else {
            assertThat(a.retryAfterNanos).isPositive();
          }
          break;
        }
        case 1:
          if (!pending.isEmpty()) {
            int i = s.a % pending.size();
            gate.release(pending.remove(i), 0, Gate.NOT_STARTED, now);
            pendingStarts.remove(i);
          }
          break;
        default:
          clock.advance(s.b * MS / 4);
      }
      assertThat(limiter.available()).isBetween(0, burst);
    }
    starts.addAll(pendingStarts); // the rest start later, as reserved
    Collections.sort(starts);
    double perNano = perSecond / 1e9;
    for (int i = 0; i < starts.size(); i++) {
      assertThat((double) (i + 1)).as("started by %d ns after creation", starts.get(i) - created)
          .isLessThanOrEqualTo(burst + perNano * (starts.get(i) - created) + 1e-9);
      for (int j = i; j < starts.size(); j++) {
        double allowed = burst + perNano * (starts.get(j) - starts.get(i));
        assertThat((double) (j - i + 1)).as("starts %d..%d", i, j).isLessThanOrEqualTo(allowed + 1e-9);
      }
    }
  }

  /** A bucket left alone long enough admits exactly its burst at once, whatever the rate. */
  @Property(tries = 200)
  void anIdleBucketAdmitsExactlyItsBurstAtOnce(
      @ForAll("rates") double perSecond, @ForAll @IntRange(min = 1, max = 50) int burst,
      @ForAll @IntRange(min = 0, max = 5) int drained) {
    SteppingClock clock = new SteppingClock(Long.MAX_VALUE - 1_000); // wraps while refilling
    Limiter limiter = Limiter.rate(perSecond, burst, clock);
    for (int i = 0; i < Math.min(drained, burst); i++) {
      assertThat(limiter.gate().tryAdmit(attempt(clock.nanoTime()), 0, clock.nanoTime())).isTrue();
    }
    clock.advance((long) Math.ceil(burst * Math.ceil(1e9 / perSecond)));
    assertThat(RateLimiterTest.drain(limiter, clock)).isEqualTo(burst);
  }

  // Concurrency ---------------------------------------------------------------------------------

  /**
   * A bulkhead against a model of itself: a count and a FIFO queue. In flight never exceeds n, waiters
   * are granted in arrival order and each exactly once, a cancelled waiter is never granted, and the
   * limiter's counts always equal the model's.
   */
  @Property(tries = 400)
  void aBulkheadNeverExceedsNAndGrantsWaitersInArrivalOrder(
      @ForAll @IntRange(min = 1, max = 4) int n, @ForAll boolean waits, @ForAll("bulkheadSteps") List<Step> steps) {
    Limiter limiter = Limiter.concurrency(n, waits ? Duration.ofSeconds(1) : Duration.ZERO);
    Gate gate = limiter.gate();
    List<AttemptRecord> holding = new ArrayList<>();
    Deque<AttemptRecord> queue = new ArrayDeque<>();
    List<AttemptRecord> granted = new ArrayList<>();
    for (Step s : steps) {
      switch (s.kind) {
        case 0: {
          AttemptRecord a = attempt(0);
          if (gate.tryAdmit(a, 0, 0)) {
            assertThat(queue).as("nobody overtakes the queue").isEmpty();
            holding.add(a);
          } else if (gate.await(a, 0, () -> granted.add(a))) {
            assertThat(waits).isTrue();
            queue.addLast(a);
          } else {
            assertThat(waits).isFalse();
          }
          break;
        }
        case 1:
          if (!holding.isEmpty()) {
            AttemptRecord done = holding.remove(s.a % holding.size());
            int before = granted.size();
            gate.release(done, 0, s.b % (Gate.NOT_STARTED + 1), 0);
            if (!queue.isEmpty()) {
              AttemptRecord oldest = queue.removeFirst();
              assertThat(granted).hasSize(before + 1);
              assertThat(granted.get(before)).isSameAs(oldest);
              assertThat(oldest.granted).isTrue();
              holding.add(oldest);
            } else {
              assertThat(granted).hasSize(before);
            }
          }
          break;
        default:
          if (!queue.isEmpty()) {
            List<AttemptRecord> waiting = new ArrayList<>(queue);
            AttemptRecord gaveUp = waiting.get(s.a % waiting.size());
            assertThat(gate.cancelAwait(gaveUp, 0)).isTrue();
            queue.remove(gaveUp);
            assertThat(gaveUp.granted).isFalse();
          }
      }
      assertThat(limiter.inFlight()).isEqualTo(holding.size()).isLessThanOrEqualTo(n);
      assertThat(limiter.queued()).isEqualTo(queue.size());
      assertThat(limiter.available()).isEqualTo(queue.isEmpty() ? n - holding.size() : 0);
    }
    assertThat(granted).doesNotHaveDuplicates();
  }

  // Adaptive ------------------------------------------------------------------------------------

  /**
   * However attempts end and however long they take, an adaptive limit in every mode (the knee, AIMD,
   * the gradient) stays within [min, max], in flight never passes it at admission, and in flight is
   * exactly what was admitted and not released.
   */
  @Property(tries = 600)
  void anAdaptiveLimitStaysWithinItsBounds(
      @ForAll @IntRange(min = 1, max = 40) int min, @ForAll @IntRange(min = 0, max = 200) int span,
      @ForAll @IntRange(min = 0, max = 100) int initialPercent, @ForAll("ratios") double ratio,
      @ForAll AdaptiveConfig.Mode mode, @ForAll("adaptiveSteps") List<Step> steps) {
    int max = min + span;
    int initial = min + span * initialPercent / 100;
    AdaptiveConfig config = AdaptiveConfig.DEFAULT.withMinLimit(min).withMaxLimit(max).withInitialLimit(initial)
        .withBackoffRatio(ratio).withMode(mode);
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(config);
    Gate gate = limiter.gate();
    List<AttemptRecord> holding = new ArrayList<>();
    long now = 0;
    for (Step s : steps) {
      if (s.kind == 0) {
        for (int i = 0; i <= s.a % 8; i++) {
          int limitBefore = limiter.limit();
          AttemptRecord a = attempt(now);
          if (gate.tryAdmit(a, 0, now)) {
            holding.add(a);
            assertThat(holding.size()).isLessThanOrEqualTo(limitBefore);
          } else {
            assertThat(holding.size()).isGreaterThanOrEqualTo(limitBefore);
          }
        }
      } else if (!holding.isEmpty()) {
        now += 1 + s.b * (long) s.b * 10_000L; // from 10 µs to 100 ms, so the knee mode sees latency move
        gate.release(holding.remove(s.a % holding.size()), 0, s.a % (Gate.NOT_STARTED + 1), now);
      }
      assertThat(limiter.exactLimit()).isBetween((double) min, (double) max);
      assertThat(limiter.inFlight()).isEqualTo(holding.size());
    }
  }

  // Concurrent budget ---------------------------------------------------------------------------

  /**
   * Whatever calls and retries do, a funded retry never takes the retries in flight above the
   * allowance, a refused one was over its level's share, and a budget with nothing spent funds every
   * level while the allowance is at least one.
   */
  @Property(tries = 400)
  void aConcurrentBudgetNeverFundsBeyondItsAllowance(
      @ForAll("percents") double percent, @ForAll @IntRange(min = 0, max = 5) int minimum,
      @ForAll("budgetSteps") List<Step> steps) {
    ConcurrentAllowance budget = (ConcurrentAllowance) RetryBudget.concurrent(percent, minimum);
    int calls = 0;
    int additional = 0;
    for (Step s : steps) {
      switch (s.kind) {
        case 0:
          budget.callStarted();
          calls++;
          break;
        case 1:
          if (calls > 0) {
            budget.callEnded();
            calls--;
          }
          break;
        case 2: {
          Criticality c = Criticality.values()[s.a % 4];
          long allowance = Math.max(minimum, (long) Math.floor(calls * percent + 1e-9));
          boolean healthy = additional == 0 && allowance >= 1;
          assertThat(budget.wouldFund(c)).isEqualTo(budget.retryAfterNanos(c) == 0);
          if (budget.trySpend(c)) {
            additional++;
            assertThat((long) additional).isLessThanOrEqualTo(allowance);
          } else {
            assertThat(healthy).as("a healthy budget refused %s", c).isFalse();
          }
          break;
        }
        default:
          if (additional > 0) {
            budget.additionalEnded();
            additional--;
          }
      }
      assertThat(budget.callsInFlight()).isEqualTo(calls);
      assertThat(budget.additionalInFlight()).isEqualTo(additional);
      assertThat(budget.utilization()).isBetween(0.0, 1.0);
      assertThat(budget.tokens()).isBetween(0.0, budget.capacity());
    }
  }

  // Generators ----------------------------------------------------------------------------------

  @Provide
  Arbitrary<Double> rates() {
    return Arbitraries.of(0.5, 1.0, 3.0, 7.5, 10.0, 333.0, 1000.0, 123_456.7);
  }

  @Provide
  Arbitrary<Duration> waits() {
    return Arbitraries.of(Duration.ZERO, Duration.ofMillis(150), Duration.ofSeconds(3));
  }

  @Provide
  Arbitrary<Double> ratios() {
    return Arbitraries.of(0.5, 0.7, 0.9, 0.99);
  }

  @Provide
  Arbitrary<Double> percents() {
    return Arbitraries.of(0.01, 0.1, 0.2, 0.29, 0.5, 1.0);
  }

  @Provide
  Arbitrary<List<Step>> rateSteps() {
    return steps(3, 4000);
  }

  @Provide
  Arbitrary<List<Step>> bulkheadSteps() {
    return steps(3, 100);
  }

  @Provide
  Arbitrary<List<Step>> adaptiveSteps() {
    return steps(2, 100);
  }

  @Provide
  Arbitrary<List<Step>> budgetSteps() {
    return steps(4, 100);
  }

  private static Arbitrary<List<Step>> steps(int kinds, int maxB) {
    return Combinators.combine(
            Arbitraries.integers().between(0, kinds - 1),
            Arbitraries.integers().between(0, 1000),
            Arbitraries.integers().between(1, maxB))
        .as(Step::new)
        .list()
        .ofMaxSize(300);
  }
}
