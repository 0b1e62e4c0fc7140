package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fast lanes' retry loop ({@code SyncExecution.retryHere}): a synchronous call on the real clock
 * whose first attempt fails, with nothing observing it, retries in place on the caller's thread with
 * the core's own rules ({@code Decide}), and hands a retry that must wait to the core. Each test
 * runs on the plainest lane ({@code gated = false}: only the budget) and on the timed lane
 * ({@code gated = true}: a breaker and a concurrency limit).
 */
class RetryInPlaceTest {

  @AfterEach
  void stopDraining() {
    Draining.resetForTests();
    Thread.interrupted();
  }

  private static Resilience policy(boolean gated) {
    Resilience p = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.of(1.0, 1000));
    // (half of a fail-once workload's attempts fail: the breaker trips only above 90%)
    return gated ? p.withBreaker(CircuitBreaker.Config.DEFAULT.withFailureRate(0.9)).withLimiter(Limiter.concurrency(8))
        : p;
  }

  /** Fails every other call, starting with the first. */
  static final class FailOnce implements Callable<String> {
    static final IOException FAILURE = new IOException("first attempt fails");
    boolean failed;

    @Override
    public String call() throws IOException {
      if (!failed) {
        failed = true;
        throw FAILURE;
      }
      failed = false;
      return "ok";
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aCallThatFailsOnceAllocatesNothing(boolean gated) throws Exception {
    Resilience p = policy(gated);
    FailOnce work = new FailOnce();
    for (int i = 0; i < 200_000; i++) {
      assertThat(p.execute(work)).isEqualTo("ok");
    }
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long before = threads.getCurrentThreadAllocatedBytes();
    int calls = 200_000;
    for (int i = 0; i < calls; i++) {
      p.execute(work);
    }
    double perCall = (double) (threads.getCurrentThreadAllocatedBytes() - before) / calls;
    // a call of its own would be hundreds of bytes; a stray allocation every thousand calls is the JIT's
    assertThat(perCall).as("bytes per fail-once call").isLessThan(1.0);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aValueARetrySupersedesGoesToTheDiscardHookOnce(boolean gated) throws Exception {
    List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
    Resilience p = policy(gated).withDiscard(discarded::add)
        .withClassifier((result, failure) -> "busy".equals(result) ? Verdict.TRANSIENT
            : failure != null ? Verdict.TRANSIENT : Verdict.OK);
    AtomicInteger n = new AtomicInteger();
    assertThat(p.execute(() -> n.incrementAndGet() == 1 ? "busy" : "fine")).isEqualTo("fine");
    assertThat(discarded).containsExactly("busy");
    assertThat(n).hasValue(2);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void theLastAttemptsFailureIsThrownUnchangedWhenTheAttemptsRunOut(boolean gated) {
    Resilience p = policy(gated).withAttempts(3);
    AtomicInteger n = new AtomicInteger();
    IOException last = new IOException("third");
    assertThatThrownBy(() -> p.execute(() -> {
      throw n.incrementAndGet() == 3 ? last : new IOException("early");
    })).isSameAs(last);
    assertThat(n).hasValue(3);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void anEmptyBudgetRefusesTheRetryAndSaysSo(boolean gated) {
    RetryBudget empty = RetryBudget.of(0.1, 0);
    while (empty.trySpend()) {
      // drain it
    }
    Resilience p = policy(gated).withBudget(empty);
    AtomicInteger n = new AtomicInteger();
    assertThatThrownBy(() -> p.execute(() -> {
      n.incrementAndGet();
      throw new IOException("down");
    })).isInstanceOfSatisfying(CallRejectedException.class, e -> {
      assertThat(e.reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
      assertThat(e.attempts()).isEqualTo(1);
      assertThat(e).hasCauseInstanceOf(IOException.class);
    });
    assertThat(n).hasValue(1);
  }

  @Test
  void anOpenBreakerIsReportedBeforeAnEmptyBudgetOnARetry() {
    CircuitBreaker breaker = CircuitBreaker.of("retry-in-place", CircuitBreaker.Config.DEFAULT);
    RetryBudget empty = RetryBudget.of(0.1, 0);
    while (empty.trySpend()) {
      // drain it
    }
    Resilience p = policy(false).withBudget(empty).withBreaker(breaker);
    assertThatThrownBy(() -> p.execute(() -> {
      breaker.isolate(); // the breaker opens while the first attempt runs
      throw new IOException("down");
    })).isInstanceOfSatisfying(CallRejectedException.class,
        e -> assertThat(e.reason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE));
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aCallersInterruptDuringARetryCancelsTheCallAndKeepsTheFlag(boolean gated) {
    Resilience p = policy(gated);
    AtomicInteger n = new AtomicInteger();
    try {
      assertThatThrownBy(() -> p.execute(() -> {
        if (n.incrementAndGet() == 1) {
          throw new IOException("first");
        }
        Thread.currentThread().interrupt(); // the caller cancels while the retry runs
        throw new InterruptedException("cancelled");
      })).isInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("the caller's interrupt is kept").isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(n).as("no retry after a cancellation").hasValue(2);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  @Timeout(30)
  void aRetryThatMustWaitIsTheCoresAndADrainsGraceEndsIt(boolean gated) throws Exception {
    Resilience p = policy(gated).withBackoff(Backoff.constant(Duration.ofSeconds(20)));
    CountDownLatch failed = new CountDownLatch(1);
    AtomicReference<Object> result = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        result.set(p.execute(() -> {
          failed.countDown();
          throw new IOException("first");
        }));
      } catch (Exception e) {
        result.set(e);
      }
    });
    caller.start();
    assertThat(failed.await(10, TimeUnit.SECONDS)).isTrue();
    Draining.begin(Duration.ofMillis(50)); // during the 20 s wait
    caller.join(TimeUnit.SECONDS.toMillis(20));
    assertThat(caller.isAlive()).as("the grace ended the wait").isFalse();
    assertThat(result.get()).isInstanceOfSatisfying(CallRejectedException.class, e -> {
      assertThat(e.reason()).isEqualTo(StopReason.DRAINING);
      assertThat(e.attempts()).isEqualTo(1);
    });
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void anAttemptThatTimesOutIsRetriedAndItsTimeoutIsTheRetrysCause(boolean gated) throws Exception {
    Resilience p = policy(gated).withAttemptTimeout(Duration.ofMillis(50)).withAttempts(2);
    AtomicInteger n = new AtomicInteger();
    assertThatThrownBy(() -> p.execute(() -> {
      n.incrementAndGet();
      Thread.sleep(10_000); // until the watchdog's interrupt
      return "late";
    })).isInstanceOfSatisfying(AttemptTimeoutException.class,
        e -> assertThat(e.getMessage()).contains("50"));
    assertThat(n).hasValue(2);
    assertThat(Thread.currentThread().isInterrupted()).as("the timeout's interrupt is taken back").isFalse();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aClassifierOrBackoffThatThrowsStopsTheCallWithItsOwnFailureNotQuells(boolean gated) {
    AtomicInteger n = new AtomicInteger();
    IOException first = new IOException("first");
    Resilience throwingClassifier = policy(gated).withClassifier((result, failure) -> {
      throw new IllegalStateException("classifier bug");
    });
    assertThatThrownBy(() -> throwingClassifier.execute(() -> {
      n.incrementAndGet();
      throw first;
    })).isSameAs(first); // judged permanent: not retried
    assertThat(n).hasValue(1);
    Resilience throwingBackoff = policy(gated).withBackoff((retry, verdict, random) -> {
      throw new IllegalStateException("backoff bug");
    });
    assertThatThrownBy(() -> throwingBackoff.execute(() -> {
      n.incrementAndGet();
      throw first;
    })).isSameAs(first); // retrying is off for the call
    assertThat(n).hasValue(2);
  }
}
