package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The concurrent budget inside a real policy: the core counts calls and funded retries in flight. */
@Timeout(60)
class ConcurrentBudgetPolicyTest {

  @Test
  void thirtyTwoFailingCallsInFlightGetExactlySixRetriesInFlight() throws Exception {
    int calls = 32;
    ExecutorService callers = Executors.newFixedThreadPool(calls);
    try {
      ConcurrentAllowance budget = (ConcurrentAllowance) RetryBudget.concurrent(0.2, 3);
      Resilience policy = Resilience.DEFAULT
          .withAttempts(2)
          .withBackoff(Backoff.NONE)
          .withoutAttemptTimeout()
          .withoutDeadline()
          .withBudget(budget)
          .withTimeSource(new NoWaitClock());
      CountDownLatch allFirstAttemptsRunning = new CountDownLatch(calls);
      CountDownLatch retriesMayEnd = new CountDownLatch(1);
      AtomicInteger retriesRunning = new AtomicInteger();
      AtomicInteger mostRetriesRunning = new AtomicInteger();
      AtomicInteger retries = new AtomicInteger();
      CompletionService<Outcome<Object>> done = new ExecutorCompletionService<>(callers);
      List<Future<Outcome<Object>>> outcomes = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        outcomes.add(done.submit(() -> policy.run(attempt -> {
          if (!attempt.isRetry()) {
            allFirstAttemptsRunning.countDown();
            allFirstAttemptsRunning.await(); // every call is in flight before any retry is asked for
            throw new IOException("down");
          }
          retries.incrementAndGet();
          mostRetriesRunning.accumulateAndGet(retriesRunning.incrementAndGet(), Math::max);
          try {
            retriesMayEnd.await(); // funded retries stay in flight until every refusal is in
          } finally {
            retriesRunning.decrementAndGet();
          }
          throw new IOException("still down");
        })));
      }
      // refusals end their calls while the funded retries wait: 6 = 20% of the 32 calls in flight
      for (int refused = 0; refused < calls - 6; refused++) {
        Future<Outcome<Object>> ended = done.poll(30, TimeUnit.SECONDS);
        assertThat(ended).as("refusal %d", refused + 1).isNotNull();
        assertThat(ended.get().stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
      }
      assertThat(retries).hasValue(6);
      assertThat(budget.additionalInFlight()).isEqualTo(6);
      retriesMayEnd.countDown();
      int exhausted = 0;
      int budgetExhausted = 0;
      for (Future<Outcome<Object>> f : outcomes) {
        StopReason reason = f.get(30, TimeUnit.SECONDS).stopReason();
        if (reason == StopReason.BUDGET_EXHAUSTED) {
          budgetExhausted++;
        } else if (reason == StopReason.ATTEMPTS_EXHAUSTED) {
          exhausted++;
        }
      }
      assertThat(budgetExhausted).isEqualTo(calls - 6);
      assertThat(exhausted).isEqualTo(6);
      assertThat(mostRetriesRunning.get()).isEqualTo(6);
      assertThat(budget.callsInFlight()).as("every call counted back out").isZero();
      assertThat(budget.additionalInFlight()).as("every retry counted back out").isZero();
    } finally {
      callers.shutdownNow();
    }
  }

  /** Real time for reading, but the guarded pause and backoffs do not block; nothing is scheduled. */
  private static final class NoWaitClock implements TimeSource {
    @Override
    public long nanoTime() {
      return System.nanoTime();
    }

    @Override
    public void sleep(long nanos) {}

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
      throw new UnsupportedOperationException("nothing in this test schedules");
    }
  }
}
