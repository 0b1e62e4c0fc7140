package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Resilience#explain()} against what calls really do: for every preset and for compound
 * policies, the worst case it describes is replayed on a virtual clock — every attempt timing out
 * (or failing when the path says so), the jitter drawing the waits the path names — and the call
 * must take exactly the time and make exactly the attempts the explanation says. The most attempts
 * per call is replayed with attempts that fail at once and the shortest waits.
 */
class ExplainTest {

  /** A virtual clock whose jitter draws are scripted; unscripted draws are the least (or the greatest). */
  static final class Clock implements TimeSource {
    final VirtualTime time = VirtualTime.create();
    final ArrayDeque<Long> draws = new ArrayDeque<>();
    RandomGenerator unscripted = Draws.LEAST;
    private final RandomGenerator random = new RandomGenerator() {
      @Override
      public long nextLong() {
        return unscripted.nextLong();
      }

      @Override
      public long nextLong(long bound) {
        Long d = draws.poll();
        if (d == null) {
          return unscripted.nextLong(bound);
        }
        assertThat(d).as("a scripted draw within its bound").isBetween(0L, bound - 1);
        return d;
      }

      @Override
      public long nextLong(long origin, long bound) {
        return origin + nextLong(bound - origin);
      }
    };

    @Override
    public long nanoTime() {
      return time.nanoTime();
    }

    @Override
    public void sleep(long nanos) throws InterruptedException {
      time.sleep(nanos);
    }

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
      return time.schedule(task, delayNanos);
    }

    @Override
    public RandomGenerator random() {
      return random;
    }

    /** Scripts the draws that make {@code policy}'s backoff produce the waits of {@code path}. */
    void script(Resilience policy, Explanation.Path path) {
      Backoff b = policy.backoff();
      for (long[] w : path.backoffs()) {
        if (b instanceof Backoff.Exponential) {
          Jitter j = ((Backoff.Exponential) b).jitter();
          long full = Math.min((long) Math.min(Long.MAX_VALUE, nominal((Backoff.Exponential) b, (int) w[0])),
              policy.backoffMax.toNanos());
          if (full <= 0) {
            continue;
          }
          if (j == Jitter.FULL) {
            draws.add(w[1]);
          } else if (j == Jitter.EQUAL) {
            draws.add(w[1] - full / 2);
          }
        }
      }
    }

    private static double nominal(Backoff.Exponential b, int retry) {
      // the delay before jitter: the backoff with the greatest draw
      return b.delay(retry, Verdict.TRANSIENT, Draws.MOST).toNanos();
    }
  }

  /** Random sources that always draw their least or greatest value. */
  enum Draws implements RandomGenerator {
    LEAST, MOST;

    @Override
    public long nextLong() {
      return this == MOST ? Long.MAX_VALUE : 0;
    }

    @Override
    public long nextLong(long bound) {
      return this == MOST ? bound - 1 : 0;
    }

    @Override
    public long nextLong(long origin, long bound) {
      return this == MOST ? bound - 1 : origin;
    }
  }

  /** Runs one call of {@code policy} whose attempt n fails after {@code failAfter(n)} nanoseconds, or hangs (-1). */
  static Outcome<Object> run(boolean async, Resilience policy, Clock clock, Function<Integer, Long> failAfter) {
    if (async) {
      CompletableFuture<Outcome<Object>> f = policy.runAsync(attempt -> {
        long after = failAfter.apply(attempt.number());
        CompletableFuture<Object> stage = new CompletableFuture<>();
        if (after >= 0) {
          clock.time.schedule(() -> stage.completeExceptionally(new IOException("down")), after);
        }
        return stage;
      });
      clock.time.runUntilIdle(Duration.ofDays(3650));
      assertThat(f).as("the call ended").isDone();
      return f.join();
    }
    return policy.run((Attempt attempt) -> {
      long after = failAfter.apply(attempt.number());
      clock.sleep(after >= 0 ? after : Long.MAX_VALUE / 4); // an attempt timeout on this clock interrupts it
      if (after >= 0) {
        throw new IOException("down");
      }
      throw new AssertionError("attempt " + attempt.number() + " hung past its timeout");
    });
  }

  /** Replays {@code path}: attempts that fail early on it fail then, the others hang until their timeout. */
  static Outcome<Object> replay(boolean async, Resilience policy, Clock clock, Explanation.Path path) {
    return replay(async, policy, clock, path, policy);
  }

  static Outcome<Object> replay(boolean async, Resilience onClock, Clock clock, Explanation.Path path, Resilience p) {
    Resilience policy = onClock.timeSource() == clock ? onClock : p.withTimeSource(clock);
    clock.script(policy, path);
    return run(async, policy, clock, n -> {
      for (Explanation.Step s : path.steps) {
        if (s.number == n) {
          return s.failsEarly ? s.end - s.start : -1L;
        }
      }
      return -1L;
    });
  }

  static void assertAttains(Outcome<Object> outcome, Explanation.Path path) {
    assertThat(outcome.elapsed()).as("the worst time explained, %s", outcome).isEqualTo(Duration.ofNanos(path.nanos));
    assertThat(outcome.attempts()).as("the attempts of the worst call, %s", outcome).isEqualTo(path.attempts);
  }

  // ---------------------------------------------------------------- the policies

  static Stream<Arguments> policies() {
    return Stream.of(
        Arguments.of("DEFAULT", (Function<Clock, Resilience>) c -> Resilience.DEFAULT.withTimeSource(c)),
        Arguments.of("HTTP", (Function<Clock, Resilience>) c -> Resilience.HTTP.withTimeSource(c)),
        Arguments.of("no deadline", (Function<Clock, Resilience>) c -> Resilience.DEFAULT.withTimeSource(c)
            .withoutDeadline().withAttempts(4).withAttemptTimeout(Duration.ofMillis(100))
            .withBackoff(Backoff.exponential(Duration.ofMillis(50)))),
        Arguments.of("longest waits cross the deadline", (Function<Clock, Resilience>) c -> Resilience.DEFAULT
            .withTimeSource(c).withBudget(RetryBudget.NONE).withAttempts(3).withDeadline(Duration.ofSeconds(1))
            .withAttemptTimeout(Duration.ofMillis(600)).withBackoff(Backoff.exponential(Duration.ofMillis(500)))),
        Arguments.of("a fast failure is worse than a timeout", (Function<Clock, Resilience>) c -> Resilience.DEFAULT
            .withTimeSource(c).withBudget(RetryBudget.NONE).withAttempts(2).withDeadline(Duration.ofSeconds(1))
            .withAttemptTimeout(Duration.ofMillis(600)).withBackoff(Backoff.constant(Duration.ofMillis(500)))),
        Arguments.of("equal jitter", (Function<Clock, Resilience>) c -> Resilience.DEFAULT.withTimeSource(c)
            .withAttempts(5).withDeadline(Duration.ofSeconds(3)).withAttemptTimeout(Duration.ofMillis(400))
            .withBackoff(Backoff.exponential(Duration.ofMillis(100)).withJitter(Jitter.EQUAL))),
        Arguments.of("no attempt timeout", (Function<Clock, Resilience>) c -> Resilience.DEFAULT.withTimeSource(c)
            .withoutAttemptTimeout().withDeadline(Duration.ofMillis(800))),
        Arguments.of("guards and measured timing", (Function<Clock, Resilience>) c -> Resilience.DEFAULT
            .withName("inventory").withTimeSource(c).withAttempts(4).withDeadline(Duration.ofSeconds(2))
            .withAttemptTimeout(Duration.ofMillis(500)).withBackoff(Backoff.exponential(Duration.ofMillis(100)))
            .withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.rate(100, 10, c))
            .withLimiter(Limiter.concurrency(20)).withLimiter(Limiter.adaptive())
            .withMeasuredTiming(MeasuredTiming.multipleOfP95(3).withFloor(Duration.ofMillis(50)))),
        Arguments.of("hedged", (Function<Clock, Resilience>) c -> Resilience.DEFAULT.withName("search")
            .withTimeSource(c).withBudget(RetryBudget.NONE).withAttempts(3).withDeadline(Duration.ofSeconds(2))
            .withAttemptTimeout(Duration.ofMillis(300)).withHedge(Hedge.after(Duration.ofMillis(40)).withMaxHedges(2))),
        Arguments.of("hedged, then retries", (Function<Clock, Resilience>) c -> Resilience.DEFAULT
            .withTimeSource(c).withBudget(RetryBudget.NONE).withAttempts(5).withDeadline(Duration.ofSeconds(3))
            .withAttemptTimeout(Duration.ofSeconds(1))
            .withHedge(Hedge.after(Duration.ofMillis(100)).withMaxHedges(2).withRetries(true))),
        Arguments.of("hedged at a measured delay", (Function<Clock, Resilience>) c -> Resilience.HTTP
            .withName("catalog").withTimeSource(c).withBudget(RetryBudget.NONE)
            .withAttemptTimeout(Duration.ofMillis(800)).withHedge(Hedge.maxExtraLoad(0.05))),
        Arguments.of("everything, with ambient criticality", (Function<Clock, Resilience>) c -> Resilience.DEFAULT
            .withName("checkout").withTimeSource(c).withAttempts(4).withDeadline(Duration.ofSeconds(2))
            .withAttemptTimeout(Duration.ofMillis(500)).withBreaker(CircuitBreaker.Config.DEFAULT)
            .withLimiter(Limiter.rate(100, 10, c)).withLimiter(Limiter.concurrency(20))
            .withHedge(Hedge.after(Duration.ofMillis(100))).withMeasuredTiming(MeasuredTiming.multipleOfP95(3))
            .withAmbientCriticality(true)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("policies")
  void theWorstCaseExplainedIsWhatACallWhoseAttemptsTimeOutTakes(String name, Function<Clock, Resilience> make) {
    for (boolean async : new boolean[] {true, false}) {
      Clock clock = new Clock();
      Resilience policy = make.apply(clock);
      Explanation e = new Explanation(policy);
      Explanation.Path path = e.hedged != null ? e.hedged : e.worst;
      if (e.hedged != null && !async) {
        continue; // hedges run beside the caller's thread: replayed on the deterministic asynchronous driver
      }
      assertThat(path.needsGates).as("no limiter needs to wait for these").isFalse();
      assertAttains(replay(async, policy, clock, path), path);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("policies")
  void theMostAttemptsExplainedIsWhatACallWhoseAttemptsFailAtOnceMakes(String name, Function<Clock, Resilience> make) {
    Clock clock = new Clock();
    Resilience policy = make.apply(clock);
    Explanation e = new Explanation(policy);
    Outcome<Object> fast = run(true, policy, clock, n -> 0L);
    if (e.sequential == null || e.mostAttempts == fast.attempts()) {
      assertThat(fast.attempts()).isEqualTo(e.mostAttempts);
    } else {
      // the most attempts need the first hedge refused: a SHEDDABLE call (or a dry budget) retries instead
      assertThat(fast.attempts()).isLessThan(e.mostAttempts);
    }
    assertThat(policy.explain()).contains("at most " + e.mostAttempts + " attempt");
  }

  // ---------------------------------------------------------------- paths that need the guards' help

  @Test
  void aSheddableCallOfAHedgingPolicyRetriesInsteadAndTakesTheLongerPathExplained() {
    Clock clock = new Clock();
    Resilience policy = Resilience.DEFAULT.withName("checkout").withTimeSource(clock).withAttempts(4)
        .withDeadline(Duration.ofSeconds(2)).withAttemptTimeout(Duration.ofMillis(500))
        .withHedge(Hedge.after(Duration.ofMillis(100))).withAmbientCriticality(true);
    Explanation e = new Explanation(policy);
    assertThat(e.sequential).isNotNull();
    assertThat(e.worst).isSameAs(e.sequential);
    assertThat(e.sequential.nanos).isGreaterThan(e.hedged.nanos);
    assertAttains(replay(true, policy, new Clock(), e.hedged, policy), e.hedged);
    Outcome<Object> sheddable;
    try (ResilienceContext.Scope scope = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE).open()) {
      Clock c2 = new Clock();
      Resilience p2 = policy.withTimeSource(c2);
      sheddable = replay(true, p2, c2, e.sequential, p2);
    }
    assertAttains(sheddable, e.sequential);
  }

  @Test
  void aHedgeTheBudgetRefusesLeavesAPlainRetryingCallAsExplained() {
    Clock clock = new Clock();
    RetryBudget budget = RetryBudget.of(0.1, 5, clock); // 50 tokens, five more each second
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(budget).withAttempts(3)
        .withDeadline(Duration.ofSeconds(2)).withAttemptTimeout(Duration.ofSeconds(1))
        .withHedge(Hedge.after(Duration.ofMillis(100)));
    Explanation e = new Explanation(policy);
    assertThat(e.worst).isSameAs(e.sequential);
    // other calls drain it at 50 ms: the hedge at 100 ms finds half a token, the retries after 1 s ten
    clock.time.schedule(() -> {
      while (budget.trySpend()) {
        // spent elsewhere
      }
    }, Duration.ofMillis(50).toNanos());
    Outcome<Object> o = replay(true, policy, clock, e.worst);
    assertAttains(o, e.worst);
    assertThat(o.attempts()).as("no hedge among them").isEqualTo(3);
  }

  @Test
  void theDocsExampleTakesBothPathsItExplains() {
    // docs/policy.md's policy: hedged, 700 ms and 2 attempts; with the first hedge refused, 1.8 s and 3
    Clock clock = new Clock();
    Resilience inventory = Resilience.HTTP.withName("inventory").withTimeSource(clock)
        .withDeadline(Duration.ofSeconds(2)).withAttemptTimeout(Duration.ofMillis(500))
        .withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.concurrency(50))
        .withHedge(Hedge.after(Duration.ofMillis(200)));
    Explanation e = new Explanation(inventory);
    assertThat(e.hedged.nanos).isEqualTo(Duration.ofMillis(700).toNanos());
    assertThat(e.worst).isSameAs(e.sequential);
    assertThat(e.worst.nanos).isEqualTo(Duration.ofMillis(1800).toNanos());
    assertAttains(replay(true, inventory, clock, e.hedged), e.hedged);

    Clock c2 = new Clock();
    Resilience drained = inventory.withTimeSource(c2);
    // other calls drain its own budget at 100 ms: the hedge due at 200 ms finds 0.3 token, the retries
    // after 500 ms and 1.1 s find more than one each
    c2.time.schedule(() -> {
      while (drained.budget().trySpend()) {
        // spent elsewhere
      }
    }, Duration.ofMillis(100).toNanos());
    Outcome<Object> o = replay(true, drained, c2, e.worst);
    assertAttains(o, e.worst);
  }

  @Test
  void aLaterHedgeTheBudgetRefusesLetsTheRetriesStartSoonerAsExplained() {
    Clock clock = new Clock();
    RetryBudget budget = RetryBudget.of(0.1, 5, clock); // 50 tokens, five more each second
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(budget).withAttempts(5)
        .withDeadline(Duration.ofSeconds(5)).withAttemptTimeout(Duration.ofSeconds(1))
        .withHedge(Hedge.after(Duration.ofMillis(100)).withMaxHedges(2).withRetries(true));
    Explanation e = new Explanation(policy);
    // with both hedges the retries start at 1.2 s and wait 400 and 800 ms; with the second refused they
    // start at 1.1 s and wait 200, 400 and 800 ms, and the last is cut by the deadline
    assertThat(e.hedged.hedgeRefusedAfter).isEqualTo(2);
    assertThat(e.hedged.nanos).isEqualTo(Duration.ofSeconds(5).toNanos());
    assertThat(e.hedged.attempts).isEqualTo(5);
    assertThat(policy.explain()).contains("hedge #2 0.1 to 1.1 s, the next hedge refused, #3 1.3 to 2.3 s");
    // other calls drain the budget at 150 ms: at 200 ms it holds half a token, so the hedge due then is
    // refused; by 1.1 s it has refilled to five, so the retries are funded
    clock.time.schedule(() -> {
      while (budget.trySpend()) {
        // spent elsewhere
      }
    }, Duration.ofMillis(150).toNanos());
    Outcome<Object> o = replay(true, policy, clock, e.hedged);
    assertAttains(o, e.hedged);
  }

  @Test
  void aBreakerThatOpensAfterTheFirstAttemptMakesTheRefusalThePathExplained() {
    Clock clock = new Clock();
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(RetryBudget.NONE).withoutDeadline()
        .withAttempts(2).withAttemptTimeout(Duration.ofMillis(50)).withBackoff(Backoff.constant(Duration.ofMillis(20)))
        .withBreaker(CircuitBreaker.Config.DEFAULT.withConsecutiveFailures(1));
    Explanation e = new Explanation(policy);
    assertThat(e.worst.ending).isEqualTo(Explanation.Ending.GATE_REFUSES);
    assertThat(e.worst.nanos).isEqualTo(Duration.ofMillis(50 + 20 + 100).toNanos());
    Outcome<Object> o = replay(false, policy, clock, e.worst);
    assertAttains(o, e.worst);
    assertThat(o.stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    assertThat(e.mostAttempts).isEqualTo(2);
  }

  @Test
  void aBudgetSpentByOthersDuringTheWaitMakesItsRefusalThePathExplained() {
    Clock clock = new Clock();
    RetryBudget budget = RetryBudget.of(0.1, 0, clock); // one token, no floor
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(budget).withoutDeadline()
        .withAttempts(2).withAttemptTimeout(Duration.ofMillis(50)).withBackoff(Backoff.constant(Duration.ofMillis(10)));
    Explanation e = new Explanation(policy);
    // the budget would fund the retry when the attempt times out, but another call spends the token during the wait:
    // refused at admission, after the wait, then the guarded pause — longer than a refusal before the wait
    assertThat(e.worst.ending).isEqualTo(Explanation.Ending.GATE_REFUSES);
    assertThat(e.worst.nanos).isEqualTo(Duration.ofMillis(50 + 10 + 100).toNanos());
    clock.time.schedule(() -> assertThat(budget.trySpend()).isTrue(), Duration.ofMillis(55).toNanos());
    Outcome<Object> o = replay(true, policy, clock, e.worst);
    assertAttains(o, e.worst);
    assertThat(o.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
  }

  @Test
  void aDryBudgetRefusesBeforeTheWaitAsExplained() {
    Clock clock = new Clock();
    RetryBudget budget = RetryBudget.of(0.1, 0, clock);
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(budget).withoutDeadline()
        .withAttempts(2).withAttemptTimeout(Duration.ofMillis(50)).withBackoff(Backoff.constant(Duration.ofMillis(500)));
    Explanation e = new Explanation(policy);
    // a long wait: refused at admission after it would be longer still, so that is the worst; a dry budget
    // refuses before the wait instead, which the explanation bounds too
    assertThat(budget.trySpend()).isTrue();
    Outcome<Object> o = run(true, policy, clock, n -> -1L);
    assertThat(o.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(o.elapsed()).isEqualTo(Duration.ofMillis(150)).isLessThanOrEqualTo(Duration.ofNanos(e.worst.nanos));
  }

  @Test
  void aRateLimiterThatMakesEveryAttemptWaitItsLongestGivesTheTimeExplained() {
    Clock clock = new Clock();
    Limiter rate = Limiter.rate(10, 1, Duration.ofMillis(100), clock); // a permit every 100 ms, one at a time
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(RetryBudget.NONE).withoutDeadline()
        .withAttempts(2).withAttemptTimeout(Duration.ofSeconds(1)).withBackoff(Backoff.NONE).withLimiter(rate);
    Explanation e = new Explanation(policy);
    assertThat(e.worst.needsGates).isTrue();
    assertThat(e.worst.nanos).isEqualTo(Duration.ofMillis(100 + 1000 + 100 + 1000).toNanos());
    // another caller takes the permit just before each of this call's attempts asks for one
    Resilience other = Resilience.NONE.withTimeSource(clock).withLimiter(rate);
    for (Explanation.Step s : e.worst.steps) {
      long asks = s.start - s.gateWait;
      clock.time.schedule(() -> other.runAsync(a -> CompletableFuture.completedFuture("x")), asks);
    }
    clock.time.runUntilIdle(Duration.ZERO);
    assertAttains(replay(true, policy, clock, e.worst), e.worst);
  }

  @Test
  void aBulkheadThatMakesEveryAttemptQueueItsLongestGivesTheTimeExplained() {
    Clock clock = new Clock();
    Limiter bulkhead = Limiter.concurrency(1, Duration.ofMillis(200));
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(RetryBudget.NONE).withoutDeadline()
        .withAttempts(2).withAttemptTimeout(Duration.ofMillis(50)).withBackoff(Backoff.constant(Duration.ofMillis(10)))
        .withLimiter(bulkhead);
    Explanation e = new Explanation(policy);
    // the first attempt queues 200 ms and runs 50; the retry queues 200 ms and is refused: the guarded pause
    assertThat(e.worst.ending).isEqualTo(Explanation.Ending.GATE_REFUSES);
    assertThat(e.worst.nanos).isEqualTo(Duration.ofMillis(200 + 50 + 10 + 200 + 100).toNanos());
    assertThat(e.worst.queued).isEqualTo(Duration.ofMillis(200).toNanos());
    // another caller holds the only permit: until the first attempt's longest queue is over, then from just
    // before the retry asks until long after
    Resilience other = Resilience.NONE.withTimeSource(clock).withLimiter(bulkhead);
    Explanation.Step first = e.worst.steps.get(0);
    CompletableFuture<Object> firstHold = new CompletableFuture<>();
    other.runAsync(a -> firstHold);
    clock.time.schedule(() -> firstHold.complete("x"), first.gateWait);
    CompletableFuture<Object> secondHold = new CompletableFuture<>();
    clock.time.schedule(() -> other.runAsync(a -> secondHold), first.end + 1);
    Outcome<Object> o = replay(true, policy, clock, e.worst);
    assertAttains(o, e.worst);
    assertThat(o.stopReason()).isEqualTo(StopReason.LIMITED);
    secondHold.complete("x");
  }

  @Test
  void aPolicyWithoutDeadlineOrTimeoutIsExplainedAsUnboundedAndACallThatHangsIndeedNeverEnds() {
    Clock clock = new Clock();
    Resilience policy = Resilience.NONE.withTimeSource(clock);
    Explanation e = new Explanation(policy);
    assertThat(e.worst.nanos).isEqualTo(Explanation.NONE);
    CompletableFuture<Outcome<Object>> f = policy.runAsync(a -> new CompletableFuture<>());
    clock.time.advance(Duration.ofDays(365));
    assertThat(f).as("nothing ends it").isNotDone();
    f.cancel(true);
    assertThat(e.mostAttempts).isEqualTo(1);
  }

  // ---------------------------------------------------------------- the explanations, word for word

  @Test
  void none() {
    assertThat(Resilience.NONE.explain()).isEqualTo("""
        Policy 'none': 1 attempt per call, no retries, no deadline.
        Attempts: no attempt timeout and no deadline: an attempt that hangs holds the caller for ever.
        Deadline: none of its own; one in the caller's context still applies.
        Budget: none (one attempt: nothing to retry).
        Gates, in order, before every attempt: draining, deadline.
        If the attempt hangs: the call never ends.
        Worst call: unbounded (nothing ends an attempt that hangs), and at most 1 attempt on the dependency per call.""");
  }

  @Test
  void defaultPreset() {
    assertThat(Resilience.DEFAULT.explain()).isEqualTo("""
        Policy 'default': up to 3 attempts per call (the first and up to 2 retries), within a deadline of 30 s.
        Attempts: each at most 10 s (the attempt timeout), and never past the deadline.
        Waits: 0 to 100 ms before retry 1 and 0 to 200 ms before retry 2 (exponential backoff, full jitter). After a throttled answer: 0 to 1 s, 0 to 2 s; a Retry-After from the dependency replaces the wait, capped at 30 s and never jittered. A wait that would end past the deadline is not slept: the call ends at once.
        Deadline: 30 s for the whole call, attempts, waits and pauses included; an earlier deadline in the caller's context wins.
        Budget: this policy's own token bucket: each successful attempt adds 0.1 token, 3 more come each second, at most 30 held; each retry spends one. A retry it will not fund ends the call with BUDGET_EXHAUSTED (CallRejectedException) after the guarded pause of 100 ms, never past the deadline; it is known before the wait, which is then not slept.
        Gates, in order, before every attempt: draining, deadline, budget (retries only).
        If every attempt times out: #1 0 to 10 s, #2 10.1 to 20.1 s, #3 20.3 to 30 s, cut by the deadline: 30 s, 3 attempts.
        Worst call: 30 s, and at most 3 attempts on the dependency per call. Across calls: retries ≤ 30 + 0.1 × successful attempts + 3 × seconds elapsed.""");
  }

  @Test
  void httpPreset() {
    assertThat(Resilience.HTTP.explain()).isEqualTo("""
        Policy 'http': up to 3 attempts per call (the first and up to 2 retries), within a deadline of 30 s.
        Attempts: each at most 10 s (the attempt timeout), and never past the deadline.
        Waits: 0 to 100 ms before retry 1 and 0 to 200 ms before retry 2 (exponential backoff, full jitter). After a throttled answer: 0 to 1 s, 0 to 2 s; a Retry-After from the dependency replaces the wait, capped at 30 s and never jittered. A wait that would end past the deadline is not slept: the call ends at once.
        Deadline: 30 s for the whole call, attempts, waits and pauses included; an earlier deadline in the caller's context wins.
        Budget: this policy's own token bucket: each successful attempt adds 0.1 token, 3 more come each second, at most 30 held; each retry spends one. A retry it will not fund ends the call with BUDGET_EXHAUSTED (CallRejectedException) after the guarded pause of 100 ms, never past the deadline; it is known before the wait, which is then not slept.
        Gates, in order, before every attempt: draining, deadline, budget (retries only).
        If every attempt times out: #1 0 to 10 s, #2 10.1 to 20.1 s, #3 20.3 to 30 s, cut by the deadline: 30 s, 3 attempts.
        Worst call: 30 s, and at most 3 attempts on the dependency per call. Across calls: retries ≤ 30 + 0.1 × successful attempts + 3 × seconds elapsed.""");
  }


  @Test
  void theTextIsTheSameForTheSameConfigurationWhateverHasRun() throws Exception {
    Clock clock = new Clock();
    Resilience policy = Resilience.HTTP.withName("catalog").withTimeSource(clock)
        .withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.adaptive());
    String before = policy.explain();
    for (int i = 0; i < 30; i++) {
      run(true, policy, clock, n -> 0L); // failures: the budget drains, the breaker opens, the limit shrinks
    }
    assertThat(policy.budget().utilization()).isGreaterThan(0);
    assertThat(policy.explain()).as("live state is not shown").isEqualTo(before);
    assertThat(Resilience.HTTP.withName("catalog").withTimeSource(new Clock())
        .withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.adaptive()).explain()).isEqualTo(before);
    assertThat(before).doesNotContain("\u001b").isEqualTo(before.strip());
  }

  @Test
  void everyKindOfBudgetSaysWhatItBoundsAcrossCalls() {
    assertThat(Resilience.DEFAULT.withBudget(RetryBudget.of(0.2, 0)).explain())
        .contains("Budget: a token bucket: each successful attempt adds 0.2 token, at most 1 held")
        .contains("Across calls: retries ≤ 1 + 0.2 × successful attempts.");
    assertThat(Resilience.DEFAULT.withBudget(RetryBudget.feedback()).explain())
        .contains("a feedback throttle (gRPC's): retries only while more than half of its 100 tokens remain")
        .contains("Across calls: in an outage, retries stop after 50 failed attempts.");
    assertThat(Resilience.DEFAULT.withBudget(RetryBudget.replenishing(5, Duration.ofSeconds(10))).explain())
        .contains("a replenishing allowance: 5 retries per 10 s window")
        .contains("Across calls: retries ≤ 5 per 10 s.");
    assertThat(Resilience.DEFAULT.withBudget(RetryBudget.concurrent()).explain())
        .contains("an in-flight allowance: retries in flight at most 20% of the calls in flight, never fewer than 3")
        .contains("Across calls: retries in flight ≤ max(3, 0.2 × calls in flight).");
    assertThat(Resilience.DEFAULT.withBudget(RetryBudget.NONE).explain())
        .contains("Budget: none: every retry the attempts and the deadline allow goes out")
        .contains("in an outage every call can make 3 attempts, 3 times the load.");
  }

  @Test
  void guardsAreNamedWithTheirBoundsAndTheirRefusals() {
    Clock clock = new Clock();
    CircuitBreaker shared = CircuitBreaker.of("payments", CircuitBreaker.Config.DEFAULT.withConsecutiveFailures(5)
        .withSlowCalls(Duration.ofSeconds(2), 0.5), clock);
    String text = Resilience.DEFAULT.withTimeSource(clock).withBreaker(shared)
        .withLimiter(Limiter.concurrency(10, java.time.temporal.ChronoUnit.FOREVER.getDuration()))
        .withLimiter(Limiter.rate(50, 5, Duration.ofMillis(200), clock))
        .explain();
    assertThat(text)
        .contains("Breaker 'payments' (shared): opens when at least 50% of at least 20 attempts in the last 30 s failed,"
            + " or after 5 failures in a row, or when at least 50% took longer than 2 s")
        .contains("Bulkhead: at most 10 attempts in flight; an attempt may queue up to as long as the deadline allows")
        .contains("Rate limiter: 50 a second, bursts of 5; an attempt may wait up to 200 ms for a permit")
        .contains("Gates, in order, before every attempt: draining, deadline, breaker 'payments', rate limiter, bulkhead,"
            + " budget (retries only).");
  }

  @Test
  void aBackoffThatFailsIsExplainedAsEndingTheCallAfterItsFirstFailure() {
    Resilience policy = Resilience.DEFAULT.withBackoff(Backoff.of((retry, verdict) -> {
      throw new IllegalStateException("broken");
    }));
    Explanation e = new Explanation(policy);
    assertThat(policy.explain()).contains("Waits: the backoff fails, so the call stops after its first failure.");
    assertThat(e.mostAttempts).isEqualTo(1);
    assertThat(e.worst.attempts).isEqualTo(1);
    assertThat(e.worst.nanos).isEqualTo(Duration.ofSeconds(10).toNanos());
  }

  @Test
  void aCustomBackoffThatIgnoresTheRandomSourceIsExplainedExactly() {
    Resilience policy = Resilience.DEFAULT.withBackoff(Backoff.of((retry, verdict) -> Duration.ofMillis(100L * retry)));
    assertThat(policy.explain()).contains("Waits: 100 ms before retry 1 and 200 ms before retry 2 (a custom backoff).");
  }


  // ---------------------------------------------------------------- hostile configurations

  @Test
  void theMostAttemptsAllowedAreExplainedInAFewLinesAndTheWorstPathFollowedIsAttained() {
    Clock clock = new Clock();
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(RetryBudget.NONE)
        .withAttempts(Integer.MAX_VALUE);
    Explanation e = new Explanation(policy);
    String text = policy.explain();
    assertThat(text.length()).as(text).isLessThan(3000);
    assertThat(text)
        .contains("up to 2147483647 attempts per call")
        .contains("and 0 to 30 s before each of retries 10 to 2147483646 (exponential backoff, full jitter).")
        .contains(", …, #999 ")
        .contains("Worst call: 30 s, and at most 2147483647 attempts on the dependency per call.");
    assertThat(e.worst.nanos).isEqualTo(Duration.ofSeconds(30).toNanos());
    assertThat(e.worst.ending).isEqualTo(Explanation.Ending.CUT);
    assertThat(e.mostAttempts).isEqualTo(Integer.MAX_VALUE);
    assertAttains(replay(true, policy, clock, e.worst), e.worst); // a thousand attempts on the virtual clock
  }

  @Test
  void moreAttemptsThanTheSearchFollowsGiveABoundThatNoCallExceeds() {
    Clock clock = new Clock();
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(RetryBudget.NONE).withAttempts(100_000)
        .withAttemptTimeout(Duration.ofNanos(1)).withBackoff(Backoff.NONE);
    Explanation e = new Explanation(policy);
    assertThat(e.worst.ending).isEqualTo(Explanation.Ending.BEYOND);
    // every attempt at its 1 ns ceiling, no waits, then the guarded pause
    assertThat(e.worst.nanos).isEqualTo(100_000L + Explanation.PAUSE);
    assertThat(policy.explain())
        .contains("and so on, up to 100000 attempts in all (too many to follow one by one: the bound takes every"
            + " attempt and wait at its longest): at most 100.1 ms.")
        // a Retry-After (up to the backoff's 30 s maximum) can stretch a call to its 30 s deadline
        .contains("Worst call: at most 30 s when the dependency throttles or asks for waits with Retry-After (at most"
            + " 100.1 ms when every attempt fails or times out), and at most 100000 attempts on the dependency per"
            + " call; no call outlasts the deadline, whatever the answers.");
    assertThat(e.statedWorstNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());
    Outcome<Object> hanging = run(true, policy, clock, n -> -1L);
    assertThat(hanging.attempts()).isEqualTo(100_000);
    assertThat(hanging.elapsed().toNanos()).isLessThanOrEqualTo(e.worst.nanos);
    Clock fast = new Clock();
    Outcome<Object> failing = run(true, policy.withTimeSource(fast), fast, n -> 0L);
    assertThat(failing.attempts()).as("the most attempts, counted").isEqualTo(e.mostAttempts).isEqualTo(100_000);
  }

  @Test
  void aDurationTooLongForNanosecondsIsNoDeadlineAndWaitsThatOverflowAreSaidToBeUnbounded() {
    Duration huge = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
    assertThat(Resilience.DEFAULT.withDeadline(huge).withAttemptTimeout(huge).explain())
        .contains("no deadline.")
        .contains("Attempts: no attempt timeout and no deadline: an attempt that hangs holds the caller for ever.")
        .contains("Worst call: unbounded (nothing ends an attempt that hangs)");
    Resilience centuries = Resilience.DEFAULT.withoutDeadline()
        .withBackoff(Backoff.exponential(Duration.ofDays(36500), Duration.ofDays(36500), 2, huge));
    Explanation e = new Explanation(centuries);
    assertThat(e.worst.nanos).isEqualTo(Explanation.NONE);
    assertThat(centuries.explain())
        .contains("0 to 876000 h before retry 1 and 0 to 1752000 h before retry 2")
        .contains("A Retry-After from the dependency replaces the wait, uncapped and never jittered.")
        .contains(": more than 292 years, 3 attempts.")
        .contains("Worst call: unbounded for any purpose (its attempts and waits add up to more than 292 years)");
    assertThat(Resilience.DEFAULT.withoutDeadline().withAttempts(Integer.MAX_VALUE).explain())
        .contains("(too many to follow one by one: the bound takes every attempt and wait at its longest): more than"
            + " 292 years.");
  }

  @Test
  void aQueueWithoutDeadlineIsSaidToWaitForEver() {
    assertThat(Resilience.DEFAULT.withoutDeadline()
        .withLimiter(Limiter.concurrency(10, java.time.temporal.ChronoUnit.FOREVER.getDuration())).explain())
        .contains("an attempt may queue up to as long as the deadline allows")
        .contains("Worst call: unbounded (a limiter may make an attempt wait for ever: there is no deadline)");
  }

  @Test
  void theMostHedgesOnTheMostAttemptsAreExplainedAndTheirWorstPathAttained() {
    Clock clock = new Clock();
    Resilience policy = Resilience.DEFAULT.withTimeSource(clock).withBudget(RetryBudget.NONE)
        .withAttempts(Integer.MAX_VALUE).withHedge(Hedge.after(Duration.ofMillis(1)).withMaxHedges(10).withRetries(true));
    Explanation e = new Explanation(policy);
    assertThat(policy.explain()).contains("up to 10 hedges beside the first attempt")
        .contains("hedge #2 0.001 to 10.001 s").contains("Worst call: 30 s");
    assertThat(e.worst.nanos).isEqualTo(Duration.ofSeconds(30).toNanos());
    assertAttains(replay(true, policy, clock, e.worst), e.worst);
  }

  @Test
  void onceIsOneAttemptWithoutABudgetGate() {
    assertThat(Resilience.HTTP.once().explain()).isEqualTo("""
        Policy 'http': 1 attempt per call, no retries, within a deadline of 30 s.
        Attempts: each at most 10 s (the attempt timeout), and never past the deadline.
        Deadline: 30 s for the whole call, attempts, waits and pauses included; an earlier deadline in the caller's context wins.
        Budget: none (one attempt: nothing to retry).
        Gates, in order, before every attempt: draining, deadline.
        If every attempt times out: #1 0 to 10 s: 10 s, 1 attempt.
        Worst call: 10 s, and at most 1 attempt on the dependency per call; no call outlasts the deadline, whatever the answers.""");
  }

  @Test
  void anAdaptiveThrottleAndTheKneeModeAreExplainedInTheirOwnWords() {
    String text = Resilience.DEFAULT.withLimiter(Limiter.throttle(2, Duration.ofSeconds(10)))
        .withLimiter(Limiter.adaptive()).explain();
    assertThat(text).contains("Adaptive throttle: once the dependency has been refusing")
        .contains("requests against 2 × accepted, over 10 s")
        .contains("(finds the knee:");
    assertThat(Resilience.DEFAULT.withLimiter(Limiter.adaptive(Limiter.AdaptiveConfig.loss())).explain())
        .contains("(loss-based:");
  }
}
