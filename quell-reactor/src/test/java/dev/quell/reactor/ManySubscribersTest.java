package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.EventRecorder;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Many subscribers on many threads against one budget: the dependency counts the attempts it sees
 * (as a server would), and the count is exactly the calls plus the retries the budget funded.
 */
class ManySubscribersTest {
  static final int THREADS = 8;
  static final int CALLS_PER_THREAD = 250;
  static final int RETRY_TOKENS = 120;

  @Test
  void theDependencySeesEveryCallOnceAndExactlyTheRetriesTheBudgetFunded() throws Exception {
    VirtualTime time = VirtualTime.create();
    RetryBudget budget = RetryBudget.replenishing(RETRY_TOKENS, Duration.ofDays(1), time);
    EventRecorder events = new EventRecorder();
    Resilience policy = Resilience.DEFAULT.withTimeSource(time).withBudget(budget).withBackoff(Backoff.NONE)
        .withListener(events);
    AtomicInteger seenByServer = new AtomicInteger();
    Mono<String> alwaysDown = Mono.defer(() -> {
      seenByServer.incrementAndGet();
      return Mono.error(new IOException("down"));
    });
    Mono<String> guarded = alwaysDown.transformDeferred(QuellReactor.of(policy));

    ConcurrentHashMap<StopReason, AtomicInteger> endings = new ConcurrentHashMap<>();
    AtomicInteger terminalSignals = new AtomicInteger();
    int calls = THREADS * CALLS_PER_THREAD;
    CountDownLatch allEnded = new CountDownLatch(calls);
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      for (int t = 0; t < THREADS; t++) {
        pool.execute(() -> {
          try {
            go.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
          for (int i = 0; i < CALLS_PER_THREAD; i++) {
            guarded.subscribe(v -> { }, e -> {
              StopReason reason = e instanceof CallRejectedException ? ((CallRejectedException) e).reason()
                  : StopReason.ATTEMPTS_EXHAUSTED;
              endings.computeIfAbsent(reason, r -> new AtomicInteger()).incrementAndGet();
              terminalSignals.incrementAndGet();
              allEnded.countDown();
            }, () -> terminalSignals.incrementAndGet());
          }
        });
      }
      go.countDown();
      while (allEnded.getCount() > 0) {
        time.runUntilIdle(Duration.ofMinutes(1)); // serves the guarded pauses of the refused calls
        allEnded.await(10, TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    int retries = seenByServer.get() - calls;
    assertThat(retries).as("every funded retry reached the server, and no other").isEqualTo(RETRY_TOKENS);
    assertThat(terminalSignals).as("one terminal signal per subscriber").hasValue(calls);
    assertThat(events.events().stream().filter(ResilienceEvent::isTerminal)).hasSize(calls);
    assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).isEqualTo(seenByServer.get());
    assertThat(budget.tokens()).isZero();
    int exhausted = endings.getOrDefault(StopReason.ATTEMPTS_EXHAUSTED, new AtomicInteger()).get();
    int refused = endings.getOrDefault(StopReason.BUDGET_EXHAUSTED, new AtomicInteger()).get();
    assertThat(exhausted + refused).isEqualTo(calls);
    // a call that ran all 3 attempts took 2 tokens; one refused after its first or second took 0 or 1
    assertThat(exhausted).isLessThanOrEqualTo(RETRY_TOKENS / 2);
  }
}
