package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The timed fast path: a synchronous call on the real clock, with no listener, whose breaker,
 * limiters or measured timing need the clock. It must decide exactly as the core does.
 */
class TimedFastPathTest {
  private final CircuitBreaker breaker = CircuitBreaker.of("dep",
      CircuitBreaker.Config.DEFAULT.withMinimumCalls(4).withFailureRate(0.5).withRamp(Duration.ZERO));
  private final Limiter bulkhead = Limiter.concurrency(2);
  private final Limiter adaptive = Limiter.adaptive();
  private final Resilience policy = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE)
      .withBreaker(breaker).withLimiter(bulkhead).withLimiter(adaptive);

  @Test
  void successesAreCountedByTheBreakerAndGiveTheirPermitsBack() throws Exception {
    for (int i = 0; i < 10; i++) {
      assertThat(policy.execute(() -> "ok")).isEqualTo("ok");
    }
    assertThat(breaker.metrics().calls()).isEqualTo(10);
    assertThat(breaker.metrics().failedCalls()).isZero();
    assertThat(bulkhead.inFlight()).isZero();
    assertThat(adaptive.inFlight()).isZero();
  }

  @Test
  void aFailedFirstAttemptIsHandedToTheCoreWithItsPermits() throws Exception {
    AtomicInteger n = new AtomicInteger();
    String v = policy.execute(() -> {
      if (n.getAndIncrement() == 0) {
        assertThat(bulkhead.inFlight()).as("the first attempt holds a permit").isEqualTo(1);
        throw new IOException("flaky");
      }
      return "second";
    });
    assertThat(v).isEqualTo("second");
    assertThat(breaker.metrics().calls()).isEqualTo(2);
    assertThat(breaker.metrics().failedCalls()).isEqualTo(1);
    assertThat(bulkhead.inFlight()).isZero();
    assertThat(adaptive.inFlight()).isZero();
  }

  @Test
  void anOpenBreakerIsRefusedByTheCoreWithItsPause() {
    breaker.isolate();
    assertThatThrownBy(() -> policy.execute(() -> "never")).isInstanceOfSatisfying(CallRejectedException.class,
        e -> assertThat(e.reason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE));
    assertThat(bulkhead.inFlight()).isZero();
    assertThat(breaker.metrics().refusals()).isEqualTo(1);
  }

  @Test
  void aFullBulkheadIsRefusedAndNothingLeaks() throws Exception {
    Limiter one = Limiter.concurrency(1);
    Resilience p = Resilience.DEFAULT.withLimiter(one);
    Object inner = p.execute(() -> {
      try {
        return p.execute(() -> "nested");
      } catch (RateLimitedException e) {
        return e.reason();
      }
    });
    assertThat(inner).isEqualTo(StopReason.LIMITED);
    assertThat(one.inFlight()).isZero();
  }

  @Test
  void measuredTimingIsRecordedOnTheTimedPath() throws Exception {
    Resilience measured = Resilience.DEFAULT.withMeasuredTiming(MeasuredTiming.multipleOfP95(3).withMinSamples(5));
    for (int i = 0; i < 20; i++) {
      measured.execute(() -> "ok");
    }
    assertThat(measured.timing().orElseThrow().samples()).isEqualTo(20);
  }

  @Test
  void withOnlyABreakerAndABulkheadSuccessesAreCountedAndEveryPermitComesBack() throws Exception {
    // neither needs an attempt's end time, and both decide alike on the watchdog's coarse time:
    // the path reads no clock on success, and each success still lands in the breaker's window
    CircuitBreaker counted = CircuitBreaker.of("counted", CircuitBreaker.Config.DEFAULT);
    Limiter two = Limiter.concurrency(2);
    Resilience p = Resilience.DEFAULT.withBreaker(counted).withLimiter(two);
    for (int i = 0; i < 25; i++) {
      assertThat(p.execute(() -> "ok")).isEqualTo("ok");
    }
    assertThat(counted.metrics().calls()).isEqualTo(25);
    assertThat(counted.metrics().failedCalls()).isZero();
    assertThat(counted.metrics().slowCalls()).isZero();
    assertThat(two.inFlight()).isZero();
  }

  @Test
  @Timeout(120)
  void manyThreadsOnTheCoarsePathAreEachCountedOnceAndHoldNoPermitAfterwards() throws Exception {
    int threads = 8;
    int calls = 20_000;
    CircuitBreaker shared = CircuitBreaker.of("shared", CircuitBreaker.Config.DEFAULT);
    Limiter room = Limiter.concurrency(threads);
    Resilience p = Resilience.DEFAULT.withBreaker(shared).withLimiter(room);
    assertThat(p.fastCoarseTime).isTrue();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      java.util.List<Future<Integer>> done = new java.util.ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          go.await();
          int ok = 0;
          for (int i = 0; i < calls; i++) {
            String v = p.execute(() -> {
              mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              inside.decrementAndGet();
              return "ok";
            });
            ok += "ok".equals(v) ? 1 : 0;
          }
          return ok;
        }));
      }
      go.countDown();
      int total = 0;
      for (Future<Integer> f : done) {
        total += f.get(100, TimeUnit.SECONDS);
      }
      assertThat(total).isEqualTo(threads * calls);
    } finally {
      pool.shutdownNow();
    }
    assertThat(shared.metrics().calls()).as("every success in the window, once").isEqualTo((long) threads * calls);
    assertThat(shared.metrics().failedCalls()).isZero();
    assertThat(shared.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(room.inFlight()).isZero();
    assertThat(mostInside.get()).isBetween(1, threads);
  }

  @Test
  void onlyGatesThatDecideAlikeOnACoarseTimeLetTheTimedPathSkipTheClock() {
    Resilience base = Resilience.DEFAULT;
    assertThat(base.withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.concurrency(2)).fastCoarseTime)
        .as("a steady breaker with a window of seconds, and a bulkhead").isTrue();
    assertThat(base.withLimiter(Limiter.concurrency(2)).withBudget(RetryBudget.NONE).fastCoarseTime)
        .as("a bulkhead alone, no budget").isTrue();
    assertThat(base.withBreaker(CircuitBreaker.Config.DEFAULT.withWindow(Duration.ofSeconds(5))).fastCoarseTime)
        .as("buckets of half a second").isFalse();
    assertThat(base.withBreaker(CircuitBreaker.Config.DEFAULT.withSlowCalls(Duration.ofSeconds(1), 0.5))
        .fastCoarseTime).as("a slow-call threshold").isFalse();
    assertThat(base.withLimiter(Limiter.concurrency(2)).withLimiter(Limiter.rate(100, 10)).fastCoarseTime)
        .as("a rate limiter refills by the clock").isFalse();
    assertThat(base.withLimiter(Limiter.adaptive()).fastCoarseTime).as("an adaptive limit measures round trips")
        .isFalse();
    assertThat(base.withLimiter(Limiter.concurrency(2))
        .withMeasuredTiming(MeasuredTiming.multipleOfP95(3)).fastCoarseTime).as("measured timing").isFalse();
    assertThat(base.withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.concurrency(2))
        .once().fastCoarseTime).as("once() asks the same gates").isTrue();
  }

  @Test
  void aSlowCallThresholdStillMeasuresEachAttemptOnTheTimedPath() throws Exception {
    // a slow-call threshold needs each attempt's length, so the end time is read after all:
    // each attempt below runs at least 2 ms (a lower bound, whatever the machine), past the 1 ms threshold
    CircuitBreaker slow = CircuitBreaker.of("slow", CircuitBreaker.Config.DEFAULT
        .withSlowCalls(Duration.ofMillis(1), 0.5).withMinimumCalls(5));
    Resilience p = Resilience.DEFAULT.withBreaker(slow).withLimiter(Limiter.concurrency(2));
    for (int i = 0; i < 5; i++) {
      p.execute(() -> {
        long until = System.nanoTime() + 2_000_000L;
        while (System.nanoTime() - until < 0) {
          Thread.onSpinWait();
        }
        return "slow";
      });
    }
    assertThat(slow.metrics().slowCalls()).as("every attempt measured as slow").isEqualTo(5);
    assertThat(slow.state()).isEqualTo(CircuitBreaker.State.OPEN);
  }

  @Test
  @Timeout(60)
  void aRefusalByALaterGateGivesBackWhatTheEarlierGatesTook() throws Exception {
    Limiter rate = Limiter.rate(0.001, 2); // two permits, and no more for the length of the test
    Limiter one = Limiter.concurrency(1);
    Resilience p = Resilience.DEFAULT.withLimiter(rate).withLimiter(one);
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      Future<String> holder = other.submit(() -> p.execute(() -> {
        holding.countDown();
        release.await();
        return "held";
      }));
      holding.await();
      // the rate limiter admits (its second permit), then the bulkhead refuses: that permit must come back
      assertThatThrownBy(() -> p.execute(() -> "never")).isInstanceOfSatisfying(RateLimitedException.class,
          e -> assertThat(e.reason()).isEqualTo(StopReason.LIMITED));
      assertThat(rate.available()).as("the refused attempt's rate permit given back").isEqualTo(1);
      release.countDown();
      assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("held");
    } finally {
      other.shutdownNow();
    }
    assertThat(p.execute(() -> "next")).as("the permit given back serves the next call").isEqualTo("next");
    assertThat(rate.available()).isZero();
    assertThat(one.inFlight()).isZero();
  }

  @Test
  @Timeout(60)
  void anAttemptPastItsTimeoutIsRetriedAndCountedAsTheDependencysFailure() throws Exception {
    CircuitBreaker counted = CircuitBreaker.of("timeouts", CircuitBreaker.Config.DEFAULT);
    Resilience p = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE)
        .withAttemptTimeout(Duration.ofMillis(20)).withBreaker(counted);
    AtomicInteger n = new AtomicInteger();
    String v = p.execute(() -> {
      if (n.getAndIncrement() == 0) {
        new CountDownLatch(1).await(); // hangs until its attempt timeout interrupts it
      }
      return "second";
    });
    assertThat(v).isEqualTo("second");
    assertThat(n).hasValue(2);
    assertThat(counted.metrics().calls()).isEqualTo(2);
    assertThat(counted.metrics().failedCalls()).as("the timeout").isEqualTo(1);
    assertThat(Thread.currentThread().isInterrupted()).as("the watchdog's interrupt taken back").isFalse();
  }

  @Test
  void aResultTheClassifierRejectsIsRetriedAndCountedAsAFailure() throws Exception {
    CircuitBreaker counted = CircuitBreaker.of("results", CircuitBreaker.Config.DEFAULT);
    Resilience p = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE).withBreaker(counted)
        .withClassifier((result, failure) -> failure != null || "busy".equals(result) ? Verdict.TRANSIENT : Verdict.OK);
    AtomicInteger n = new AtomicInteger();
    String v = p.execute(() -> n.getAndIncrement() == 0 ? "busy" : "done");
    assertThat(v).isEqualTo("done");
    assertThat(counted.metrics().calls()).isEqualTo(2);
    assertThat(counted.metrics().failedCalls()).isEqualTo(1);
  }

  @Test
  void successesOnTheTimedPathDepositIntoTheBudget() throws Exception {
    // no floor: the tokens are exactly what was deposited (and without a floor the bucket holds one)
    RetryBudget budget = RetryBudget.of(0.5, 0);
    while (budget.trySpend()) {
      // empty it
    }
    Resilience p = Resilience.DEFAULT.withBudget(budget).withLimiter(Limiter.concurrency(4));
    p.execute(() -> "ok");
    assertThat(budget.tokens()).as("half a token per success").isEqualTo(0.5);
    p.execute(() -> "ok");
    assertThat(budget.tokens()).isEqualTo(1.0);
  }

  @Test
  void measuredLatencyIsTheAttemptsOwnLength() throws Exception {
    Resilience measured = Resilience.DEFAULT.withMeasuredTiming(MeasuredTiming.multipleOfP95(3).withMinSamples(5));
    long before = System.nanoTime();
    for (int i = 0; i < 20; i++) {
      measured.execute(() -> "ok");
    }
    long elapsed = System.nanoTime() - before;
    // each sample is the length of one attempt, so none can be longer than the whole loop (the
    // histogram's buckets round up by a few percent at most)
    assertThat(measured.timing().orElseThrow().p95()).hasValueSatisfying(
        p95 -> assertThat(p95).isLessThanOrEqualTo(Duration.ofNanos(elapsed).multipliedBy(2)));
  }

  @Test
  void aCallersCancellationEndsTheCallAtOnceWithoutCountingAgainstTheDependency() {
    CircuitBreaker counted = CircuitBreaker.of("cancelled", CircuitBreaker.Config.DEFAULT);
    Limiter two = Limiter.concurrency(2);
    Resilience p = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE).withBreaker(counted)
        .withLimiter(two);
    AtomicInteger n = new AtomicInteger();
    try {
      assertThatThrownBy(() -> p.execute(() -> {
        n.incrementAndGet();
        Thread.currentThread().interrupt(); // the caller cancels while the attempt runs
        throw new InterruptedException("cancelled");
      })).isInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("the caller's interrupt is kept").isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(n).as("no retry after a cancellation").hasValue(1);
    assertThat(counted.metrics().failedCalls()).as("a cancellation is not the dependency's failure").isZero();
    assertThat(two.inFlight()).isZero();
  }

  @Test
  void theSuccessPathWithABreakerAndABulkheadAllocatesNothing() throws Exception {
    Resilience p = Resilience.DEFAULT.withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.concurrency(64));
    java.util.concurrent.Callable<String> ok = () -> "ok";
    for (int i = 0; i < 200_000; i++) {
      p.execute(ok);
    }
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long before = threads.getCurrentThreadAllocatedBytes();
    int calls = 500_000;
    for (int i = 0; i < calls; i++) {
      p.execute(ok);
    }
    double perCall = (double) (threads.getCurrentThreadAllocatedBytes() - before) / calls;
    // the breaker's window makes one small bucket object per tenth of its window (3 s): next to nothing
    assertThat(perCall).isLessThan(1.0);
  }
}
