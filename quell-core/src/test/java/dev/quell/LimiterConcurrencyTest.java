package dev.quell;

import static dev.quell.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Limiter.AdaptiveConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Many threads against one limiter (or one concurrent budget), with exact accounting at the end. */
@Timeout(120)
class LimiterConcurrencyTest {
  private static final int THREADS = 16;
  private final SteppingClock clock = new SteppingClock();
  private final ExecutorService pool = Executors.newFixedThreadPool(THREADS);

  @AfterEach
  void shutdown() {
    pool.shutdownNow();
  }

  @Test
  void aRateLimiterOnAFrozenClockAdmitsExactlyItsBurst() throws Exception {
    Limiter limiter = Limiter.rate(10, 500, clock);
    int admitted = hammer(() -> {
      int mine = 0;
      for (int i = 0; i < 1000; i++) {
        long now = clock.nanoTime();
        if (limiter.gate().tryAdmit(attempt(now), 0, now)) {
          mine++;
        }
      }
      return mine;
    });
    assertThat(admitted).isEqualTo(500);
    assertThat(limiter.inFlight()).isEqualTo(500);
    assertThat(limiter.available()).isZero();
  }

  @Test
  void everyTokenIsStartedOnceGivenBackOnceOrSpentUnderContention() throws Exception {
    RateLimiter limiter = (RateLimiter) Limiter.rate(10, 1000, clock);
    Gate gate = limiter.gate();
    LongAdder givenBack = new LongAdder();
    LongAdder spentUnstarted = new LongAdder();
    int started = hammer(() -> {
      int mine = 0;
      for (int i = 0; i < 2000; i++) {
        long now = clock.nanoTime();
        AttemptRecord a = attempt(now);
        if (gate.tryAdmit(a, 0, now)) {
          if (ThreadLocalRandom.current().nextInt(3) == 0) {
            // never started; the token goes back unless another was taken since
            if (limiter.refund(a.marks[0])) {
              givenBack.increment();
            } else {
              spentUnstarted.increment();
            }
          } else {
            mine++;
          }
        }
      }
      return mine;
    });
    assertThat(givenBack.sum()).as("refunds succeed under contention too").isPositive();
    assertThat(started + spentUnstarted.sum() + limiter.available()).isEqualTo(1000);
  }

  @Test
  void aRateLimiterOnAMovingClockAdmitsExactlyWhatTheClockRefilled() throws Exception {
    int burst = 10_000;
    int ticks = 5_000;
    Limiter limiter = Limiter.rate(1000, burst, clock); // one permit a millisecond
    assertThat(RateLimiterTest.drain(limiter, clock)).isEqualTo(burst);
    AtomicBoolean ticking = new AtomicBoolean(true);
    CompletableFuture<Void> ticker = CompletableFuture.runAsync(() -> {
      for (int i = 0; i < ticks; i++) {
        clock.advance(Duration.ofMillis(1));
        if (i % 64 == 0) {
          Thread.yield();
        }
      }
      ticking.set(false);
    });
    int admitted = hammer(() -> {
      int mine = 0;
      boolean last = false;
      while (!last) {
        last = !ticking.get(); // one more round after the clock stops, to take what it left
        for (int i = 0; i < 100; i++) {
          long now = clock.nanoTime();
          if (limiter.gate().tryAdmit(attempt(now), 0, now)) {
            mine++;
          }
        }
      }
      return mine;
    });
    ticker.get(60, TimeUnit.SECONDS);
    // the bucket never filled (the clock added less than the burst), so no token was lost to the cap
    assertThat(admitted + limiter.available()).isEqualTo(ticks);
  }

  @Test
  void aBulkheadNeverHasMoreThanNInFlight() throws Exception {
    Limiter limiter = Limiter.concurrency(4);
    Gate gate = limiter.gate();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    int admitted = hammer(() -> {
      int mine = 0;
      for (int i = 0; i < 20_000; i++) {
        AttemptRecord a = attempt(0);
        if (gate.tryAdmit(a, 0, 0)) {
          mine++;
          most.accumulateAndGet(inside.incrementAndGet(), Math::max);
          inside.decrementAndGet();
          gate.release(a, 0, i % (Gate.NOT_STARTED + 1), 0);
        }
      }
      return mine;
    });
    assertThat(most.get()).isBetween(1, 4);
    assertThat(admitted).isPositive();
    assertThat(limiter.inFlight()).isZero();
    assertThat(limiter.available()).isEqualTo(4);
  }

  @Test
  void aBulkheadWithAWaitHandsEveryPermitOverExactlyOnceWhileWaitersGiveUp() throws Exception {
    int n = 3;
    Limiter limiter = Limiter.concurrency(n, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    LongAdder direct = new LongAdder();
    LongAdder handedOver = new LongAdder();
    LongAdder gaveUp = new LongAdder();
    LongAdder lostTheRace = new LongAdder();
    LongAdder grantedAtOnce = new LongAdder();
    AtomicInteger doubleGrants = new AtomicInteger();
    hammer(() -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int i = 0; i < 5_000; i++) {
        AttemptRecord a = attempt(0);
        boolean holds;
        if (gate.tryAdmit(a, 0, 0)) {
          direct.increment();
          holds = true;
        } else {
          CompletableFuture<Void> granted = new CompletableFuture<>();
          AtomicInteger grants = new AtomicInteger();
          boolean queued = gate.await(a, 0, () -> {
            if (grants.incrementAndGet() > 1) {
              doubleGrants.incrementAndGet();
            }
            granted.complete(null);
          });
          assertThat(queued).isTrue();
          boolean cancelled = false;
          boolean atOnce = a.granted && grants.get() == 0; // await took a permit that came free (no callback)
          if (atOnce) {
            grantedAtOnce.increment(); // a permit came free between the refusal and the wait
          } else if (!a.granted && random.nextInt(3) == 0) {
            for (int spin = random.nextInt(200); spin > 0; spin--) {
              Thread.onSpinWait(); // give a hand-over a chance to land first
            }
            cancelled = gate.cancelAwait(a, 0);
            if (!cancelled) {
              lostTheRace.increment(); // the hand-over came first: it holds the permit after all
            }
          }
          if (cancelled) {
            gaveUp.increment(); // it holds nothing, and must never be granted
            holds = false;
            if (grants.get() > 0 || a.granted) {
              doubleGrants.incrementAndGet();
            }
          } else {
            if (!atOnce) {
              granted.get(30, TimeUnit.SECONDS); // handed over by a releasing thread
              handedOver.increment();
            }
            assertThat(a.granted).isTrue();
            holds = true;
          }
        }
        if (holds) {
          most.accumulateAndGet(inside.incrementAndGet(), Math::max);
          if (random.nextInt(8) == 0) {
            Thread.yield();
          }
          inside.decrementAndGet();
          gate.release(a, 0, random.nextInt(Gate.NOT_STARTED + 1), 0);
        }
      }
      return 0;
    });
    assertThat(doubleGrants).hasValue(0);
    assertThat(most.get()).isBetween(1, n);
    assertThat(direct.sum() + grantedAtOnce.sum() + handedOver.sum() + gaveUp.sum()).isEqualTo(THREADS * 5_000L);
    assertThat(handedOver.sum()).as("the wait path was exercised").isPositive();
    assertThat(gaveUp.sum()).as("waiters gave up").isPositive();
    System.out.printf("bulkhead hammer: %d direct, %d granted at once by await, %d handed over, %d gave up,"
        + " %d lost the race to a hand-over%n",
        direct.sum(), grantedAtOnce.sum(), handedOver.sum(), gaveUp.sum(), lostTheRace.sum());
    assertThat(limiter.inFlight()).isZero();
    assertThat(limiter.queued()).isZero();
    assertThat(limiter.available()).isEqualTo(n);
  }

  @Test
  void aHandOverRacingACancelledWaitSettlesExactlyOnce() throws Exception {
    int rounds = 5_000;
    int cancelledFirst = 0;
    int handedOverFirst = 0;
    ExecutorService two = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < rounds; round++) {
        Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
        Gate gate = limiter.gate();
        AttemptRecord holder = attempt(0);
        AttemptRecord waiter = attempt(0);
        assertThat(gate.tryAdmit(holder, 0, 0)).isTrue();
        AtomicInteger grants = new AtomicInteger();
        assertThat(gate.await(waiter, 0, grants::incrementAndGet)).isTrue();
        CyclicBarrier go = new CyclicBarrier(2);
        Future<?> release = two.submit(() -> {
          go.await();
          gate.release(holder, 0, Gate.SUCCEEDED, 0);
          return null;
        });
        Future<Boolean> cancel = two.submit(() -> {
          go.await();
          return gate.cancelAwait(waiter, 0);
        });
        release.get(10, TimeUnit.SECONDS);
        boolean holdsNothing = cancel.get(10, TimeUnit.SECONDS);
        if (holdsNothing) {
          cancelledFirst++;
          assertThat(grants).as("round %d: a cancelled wait was granted", round).hasValue(0);
          assertThat(waiter.granted).isFalse();
          assertThat(limiter.inFlight()).as("round %d: the permit went back", round).isZero();
        } else {
          handedOverFirst++;
          assertThat(grants).as("round %d", round).hasValue(1);
          assertThat(waiter.granted).isTrue();
          assertThat(limiter.inFlight()).as("round %d: the waiter holds the permit", round).isEqualTo(1);
          gate.release(waiter, 0, Gate.NOT_STARTED, 0);
          assertThat(limiter.inFlight()).isZero();
        }
        assertThat(limiter.queued()).isZero();
        assertThat(limiter.available()).isEqualTo(1);
      }
    } finally {
      two.shutdownNow();
    }
    assertThat(cancelledFirst + handedOverFirst).isEqualTo(rounds);
    System.out.printf("hand-over vs cancel: cancel won %d times, hand-over won %d times%n", cancelledFirst, handedOverFirst);
  }

  @Test
  void aPermitFreedWhileARefusedAttemptGoesToWaitIsNeverLost() throws Exception {
    int rounds = 5_000;
    int grantedAtOnce = 0;
    ExecutorService two = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < rounds; round++) {
        Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
        Gate gate = limiter.gate();
        AttemptRecord holder = attempt(0);
        AttemptRecord late = attempt(0);
        assertThat(gate.tryAdmit(holder, 0, 0)).isTrue();
        assertThat(gate.tryAdmit(late, 0, 0)).isFalse();
        AtomicInteger grants = new AtomicInteger();
        CyclicBarrier go = new CyclicBarrier(2);
        Future<?> release = two.submit(() -> {
          go.await();
          gate.release(holder, 0, Gate.SUCCEEDED, 0);
          return null;
        });
        Future<Boolean> await = two.submit(() -> {
          go.await();
          assertThat(gate.await(late, 0, grants::incrementAndGet)).isTrue();
          return late.granted; // granted at once: the caller carries on without a callback
        });
        release.get(10, TimeUnit.SECONDS);
        boolean atOnce = await.get(10, TimeUnit.SECONDS) && grants.get() == 0;
        // either the release found it queued and handed over (one callback), or await found the
        // permit free and granted it at once (no callback): never stranded, never both
        assertThat(grants).as("round %d", round).hasValue(atOnce ? 0 : 1);
        assertThat(late.granted).isTrue();
        assertThat(limiter.inFlight()).isEqualTo(1);
        assertThat(limiter.queued()).isZero();
        if (atOnce) {
          grantedAtOnce++;
        }
      }
    } finally {
      two.shutdownNow();
    }
    System.out.printf("release vs await: granted at once by await %d times, handed over %d times%n",
        grantedAtOnce, rounds - grantedAtOnce);
  }

  @Test
  void anAdaptiveLimitStaysWithinItsBoundsAndCountsEveryAttemptBack() throws Exception {
    AdaptiveConfig config = AdaptiveConfig.DEFAULT.withMinLimit(2).withInitialLimit(8).withMaxLimit(16);
    Limiter limiter = Limiter.adaptive(config);
    Gate gate = limiter.gate();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger outOfBounds = new AtomicInteger();
    hammer(() -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int i = 0; i < 20_000; i++) {
        AttemptRecord a = attempt(0);
        if (gate.tryAdmit(a, 0, 0)) {
          most.accumulateAndGet(inside.incrementAndGet(), Math::max);
          inside.decrementAndGet();
          int how = random.nextInt(10) == 0 ? Gate.FAILED : random.nextInt(Gate.NOT_STARTED + 1);
          gate.release(a, 0, how, 0);
        }
        int limit = limiter.limit();
        if (limit < 2 || limit > 16) {
          outOfBounds.incrementAndGet();
        }
      }
      return 0;
    });
    assertThat(outOfBounds).hasValue(0);
    assertThat(most.get()).isBetween(1, 16);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void theKneeModeCountsEveryAttemptBackExactlyWhileItsWindowsCloseUnderContention() throws Exception {
    AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(
        AdaptiveConfig.DEFAULT.withMinLimit(2).withInitialLimit(8).withMaxLimit(16));
    Gate gate = limiter.gate();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger outOfBounds = new AtomicInteger();
    AtomicInteger admitted = new AtomicInteger();
    hammer(() -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int i = 0; i < 20_000; i++) {
        AttemptRecord a = attempt(0);
        if (gate.tryAdmit(a, 0, 0)) {
          admitted.incrementAndGet();
          most.accumulateAndGet(inside.incrementAndGet(), Math::max);
          inside.decrementAndGet();
          // latencies that climb with the attempts in flight, as at a dependency past its knee
          long rtt = 1_000_000L * (1 + limiter.inFlight()) + random.nextLong(1, 1_000_000);
          gate.release(a, 0, random.nextInt(Gate.NOT_STARTED + 1), rtt);
        }
        int limit = limiter.limit();
        if (limit < 2 || limit > 16) {
          outOfBounds.incrementAndGet();
        }
      }
      return 0;
    });
    assertThat(admitted.get()).isPositive();
    assertThat(outOfBounds).hasValue(0);
    assertThat(most.get()).isBetween(1, 16);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void aGradientLimitStaysWithinItsBoundsUnderContention() throws Exception {
    Limiter limiter = Limiter.adaptive(AdaptiveConfig.gradient().withMinLimit(2).withInitialLimit(8).withMaxLimit(16));
    Gate gate = limiter.gate();
    AtomicInteger outOfBounds = new AtomicInteger();
    hammer(() -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int i = 0; i < 20_000; i++) {
        AttemptRecord a = attempt(0);
        if (gate.tryAdmit(a, 0, 0)) {
          gate.release(a, 0, random.nextInt(Gate.NOT_STARTED + 1), random.nextLong(1, 1_000_000));
        }
        int limit = limiter.limit();
        if (limit < 2 || limit > 16) {
          outOfBounds.incrementAndGet();
        }
      }
      return 0;
    });
    assertThat(outOfBounds).hasValue(0);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void aConcurrentBudgetFundsExactlyItsAllowanceAmongManyThreads() throws Exception {
    RetryBudget budget = RetryBudget.concurrent(0.2, 3);
    ConcurrentBudgetTest.startCalls(budget, 100);
    int granted = hammer(() -> {
      int mine = 0;
      for (int i = 0; i < 1000; i++) {
        if (budget.trySpend()) {
          mine++;
        }
      }
      return mine;
    });
    assertThat(granted).isEqualTo(20);
    assertThat(budget.tokens()).isZero();
  }

  @Test
  void aConcurrentBudgetCountsEveryCallAndRetryBackToZero() throws Exception {
    ConcurrentAllowance budget = (ConcurrentAllowance) RetryBudget.concurrent(0.2, 3);
    AtomicInteger overAllowance = new AtomicInteger();
    int funded = hammer(() -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      int mine = 0;
      for (int i = 0; i < 10_000; i++) {
        budget.callStarted();
        int retries = 0;
        while (retries < 3 && random.nextBoolean() && budget.trySpend(random.nextBoolean()
            ? Criticality.CRITICAL : Criticality.SHEDDABLE)) {
          retries++;
        }
        // with 16 threads at most 16 calls are in flight: 20% of 16 is 3, so the minimum of 3 bounds it
        if (budget.additionalInFlight() > 3) {
          overAllowance.incrementAndGet();
        }
        for (int r = 0; r < retries; r++) {
          budget.additionalEnded();
        }
        budget.callEnded();
        mine += retries;
      }
      return mine;
    });
    assertThat(funded).isPositive();
    assertThat(overAllowance).hasValue(0);
    assertThat(budget.callsInFlight()).isZero();
    assertThat(budget.additionalInFlight()).isZero();
  }

  private int hammer(Callable<Integer> task) throws Exception {
    CyclicBarrier start = new CyclicBarrier(THREADS);
    List<Future<Integer>> futures = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      futures.add(pool.submit(() -> {
        start.await();
        return task.call();
      }));
    }
    int sum = 0;
    for (Future<Integer> f : futures) {
      sum += f.get(100, TimeUnit.SECONDS);
    }
    return sum;
  }
}
