package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Many threads against one budget, with exact accounting at the end. The clock is frozen so that nothing refills. */
@Timeout(60)
class BudgetConcurrencyTest {
  private static final int THREADS = 16;
  private final ManualClock clock = new ManualClock();
  private final ExecutorService pool = Executors.newFixedThreadPool(THREADS);

  @AfterEach
  void shutdown() {
    pool.shutdownNow();
  }

  @Test
  void tokenBucketGrantsExactlyItsBalance() throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 10, clock); // 100 tokens
    assertThat(hammer(() -> {
      int granted = 0;
      for (int i = 0; i < 1000; i++) {
        if (budget.trySpend()) {
          granted++;
        }
      }
      return granted;
    })).isEqualTo(100);
    assertThat(budget.tokens()).isZero();
  }

  @Test
  void noDepositIsLostAndEveryDepositedTokenIsSpentExactlyOnce() throws Exception {
    RetryBudget budget = TokenBucketTest.drained(RetryBudget.of(0.001, 10, clock)); // capacity 100
    // 16 threads × 5000 deposits of a thousandth, interleaved with spends: 80 tokens in all
    int granted = hammer(() -> {
      int mine = 0;
      for (int i = 0; i < 5000; i++) {
        budget.deposit();
        if (i % 7 == 0 && budget.trySpend()) {
          mine++;
        }
      }
      return mine;
    });
    int rest = 0;
    while (budget.trySpend()) {
      rest++;
    }
    assertThat(granted + rest).isEqualTo(80);
  }

  @Test
  void balanceNeverLeavesItsBoundsUnderContention() throws Exception {
    RetryBudget budget = RetryBudget.of(0.5, 1, clock); // capacity 10
    AtomicInteger violations = new AtomicInteger();
    hammer(() -> {
      for (int i = 0; i < 20_000; i++) {
        if (i % 3 == 0) {
          budget.trySpend();
        } else {
          budget.deposit();
        }
        double tokens = budget.tokens();
        if (tokens < 0 || tokens > budget.capacity()) {
          violations.incrementAndGet();
        }
      }
      return 0;
    });
    assertThat(violations).hasValue(0);
  }

  @Test
  void replenishingAllowanceOfSevenSharedBy32AlwaysFailingCallersMakesExactly39Attempts() throws Exception {
    ExecutorService callers = Executors.newFixedThreadPool(32);
    try {
      RetryBudget allowance = RetryBudget.replenishing(7, Duration.ofHours(1), clock);
      Resilience policy = Resilience.DEFAULT
          .withAttempts(3)
          .withBackoff(Backoff.NONE)
          .withoutAttemptTimeout()
          .withoutDeadline()
          .withBudget(allowance)
          .withTimeSource(new ManualClockWithSleep(clock));
      LongAdder attempts = new LongAdder();
      CyclicBarrier start = new CyclicBarrier(32);
      List<Future<Outcome<Object>>> outcomes = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        outcomes.add(callers.submit(() -> {
          start.await();
          return policy.run(() -> {
            attempts.increment();
            throw new java.io.IOException("down");
          });
        }));
      }
      int rejected = 0;
      for (Future<Outcome<Object>> f : outcomes) {
        if (f.get().stopReason() == StopReason.BUDGET_EXHAUSTED) {
          rejected++;
        }
      }
      assertThat(attempts.sum()).isEqualTo(32 + 7);
      assertThat(rejected).isEqualTo(32 - 3); // at most 7 retries: 3 calls get both, one gets one, the rest none
      assertThat(allowance.tokens()).isZero();
    } finally {
      callers.shutdownNow();
    }
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
      sum += f.get();
    }
    return sum;
  }

  /** Sleeps (the guarded pause) advance the frozen clock instead of blocking; nothing is scheduled. */
  private static final class ManualClockWithSleep implements TimeSource {
    private final ManualClock clock;

    ManualClockWithSleep(ManualClock clock) {
      this.clock = clock;
    }

    @Override
    public long nanoTime() {
      return clock.nanoTime();
    }

    @Override
    public void sleep(long nanos) {
      // do not move the clock: the allowance's window must not roll over during the test
    }

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
      throw new UnsupportedOperationException();
    }
  }
}
