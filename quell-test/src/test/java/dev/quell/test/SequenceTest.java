package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.AttemptTimeoutException;
import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceEvent.Type;
import dev.quell.StopReason;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SequenceTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void throwThrowReturnSucceedsOnTheThirdAttempt(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withAttempts(3));
    Sequence<String> work = Sequence.<String>script(test.time())
        .thenThrow(new IOException("one"))
        .thenThrow(new IOException("two"))
        .thenReturn("ok");

    Outcome<String> outcome = driver.run(test.policy(), test.time(), work);

    assertThat(outcome.isSuccess()).isTrue();
    assertThat(outcome.value()).isEqualTo("ok");
    assertThat(outcome.attempts()).isEqualTo(3);
    assertThat(work.calls()).isEqualTo(3);
    work.assertFinished();
    EventRecorder events = test.events();
    assertThat(events.count(Type.ATTEMPT_STARTED)).isEqualTo(3);
    assertThat(events.count(Type.RETRYING)).isEqualTo(2);
    assertThat(events.terminal().type()).isEqualTo(Type.SUCCEEDED);
    assertThat(events.count(Type.SUCCEEDED)).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aDelayBeyondTheAttemptTimeoutIsCutOffAndRetried(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT
        .withAttemptTimeout(Duration.ofMillis(200))
        .withBackoff(Backoff.constant(Duration.ofMillis(50))));
    Sequence<String> work = Sequence.<String>script(test.time())
        .thenReturnAfter(Duration.ofMillis(300), "too late")
        .thenReturn("ok");

    Outcome<String> outcome = driver.run(test.policy(), test.time(), work);

    assertThat(outcome.value()).isEqualTo("ok");
    assertThat(outcome.attempts()).isEqualTo(2);
    // the first attempt was cut off at 200 ms, then 50 ms of backoff; the 300 ms answer never arrived
    assertThat(outcome.elapsed()).isEqualTo(Duration.ofMillis(250));
    assertThat(work.callTimes()).containsExactly(Duration.ZERO, Duration.ofMillis(250));
    ResilienceEvent firstEnd = test.events().ofType(Type.ATTEMPT_ENDED).get(0);
    assertThat(firstEnd.failure()).containsInstanceOf(AttemptTimeoutException.class);
    assertThat(firstEnd.attemptDuration()).contains(Duration.ofMillis(200));
    assertThat(test.time().pendingTimers()).as("the abandoned step's timer was cancelled").isZero();
    assertThat(Thread.currentThread().isInterrupted()).as("no interrupt leaks out of a timed-out attempt").isFalse();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aDelayWithinTheAttemptTimeoutDeliversAfterTheDelay(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withAttemptTimeout(Duration.ofSeconds(1)));
    Sequence<String> work = Sequence.<String>script(test.time())
        .thenReturnAfter(Duration.ofMillis(300), "slow but fine");

    Outcome<String> outcome = driver.run(test.policy(), test.time(), work);

    assertThat(outcome.value()).isEqualTo("slow but fine");
    assertThat(outcome.attempts()).isEqualTo(1);
    assertThat(outcome.elapsed()).isEqualTo(Duration.ofMillis(300));
    assertThat(test.time().elapsed()).isEqualTo(Duration.ofMillis(300));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aDelayedFailureIsDeliveredAfterItsDelay(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withBackoff(Backoff.NONE));
    IOException reset = new IOException("reset");
    Sequence<String> work = Sequence.<String>script(test.time())
        .thenThrowAfter(Duration.ofMillis(40), reset)
        .thenReturn("ok");

    Outcome<String> outcome = driver.run(test.policy(), test.time(), work);

    assertThat(outcome.value()).isEqualTo("ok");
    assertThat(work.callTimes()).containsExactly(Duration.ZERO, Duration.ofMillis(40));
    assertThat(test.events().ofType(Type.ATTEMPT_ENDED).get(0).failure()).containsSame(reset);
  }

  @Test
  void aHangingDependencyEndsAtTheDeadline() {
    // DEFAULT: 10 s attempt timeout, 30 s deadline; the dependency never answers in time
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    Sequence<String> work = Sequence.<String>script(test.time())
        .thenReturnAfter(Duration.ofMinutes(1), "never seen").times(3);

    Outcome<String> outcome = test.policy().run(work);

    assertThat(outcome.stopReason()).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(outcome.attempts()).isEqualTo(3);
    assertThat(test.time().elapsed()).isEqualTo(Duration.ofSeconds(30));
    assertThat(test.events().terminal().type()).isEqualTo(Type.DEADLINE_EXCEEDED);
  }

  @Test
  void checkedExceptionsAreThrownUnchangedThroughExecute() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withAttempts(2).withBackoff(Backoff.NONE));
    IOException last = new IOException("second");
    Sequence<String> work = Sequence.<String>script(test.time()).thenThrow(new IOException("first")).thenThrow(last);

    assertThatThrownBy(() -> test.policy().execute(work)).isSameAs(last);
    assertThat(test.events().terminal().type()).isEqualTo(Type.EXHAUSTED);
  }

  @Test
  void runningPastTheScriptThrowsAnAssertionErrorNamingTheCall() {
    Sequence<String> work = Sequence.<String>script().thenReturn("only");
    Resilience policy = TestPolicy.instant();

    assertThat(policy.run(work).value()).isEqualTo("only");
    assertThatThrownBy(() -> policy.execute(work))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("call 2")
        .hasMessageContaining("only 1 step");
    assertThat(work.calls()).isEqualTo(2);
  }

  @Test
  void runningPastTheScriptInsideAnOutcomeStillFailsAssertFinished() {
    // a classifier that retries everything would swallow the AssertionError into the outcome
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT
        .withClassifier((result, failure) -> failure == null ? dev.quell.Verdict.OK : dev.quell.Verdict.TRANSIENT)
        .withBackoff(Backoff.NONE));
    Sequence<String> work = Sequence.<String>script(test.time()).thenThrow(new IOException("once"));

    Outcome<String> outcome = test.policy().run(work);

    assertThat(outcome.failure()).containsInstanceOf(AssertionError.class);
    assertThatThrownBy(work::assertFinished)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("ran past its script 2 times")
        .hasMessageContaining("3 calls");
  }

  @Test
  void runningPastTheScriptAsynchronouslyFailsTheFuture() {
    VirtualTime time = VirtualTime.create();
    Sequence<String> work = Sequence.<String>script(time).thenReturn("only");
    Resilience policy = Resilience.NONE.withTimeSource(time);

    assertThat(policy.executeAsync(work)).isCompletedWithValue("only");
    CompletableFuture<String> past = policy.executeAsync(work);

    assertThat(past).isCompletedExceptionally();
    assertThatThrownBy(past::get).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(AssertionError.class).hasMessageContaining("call 2");
  }

  @Test
  void assertFinishedNamesTheStepsNotRun() {
    Sequence<Integer> work = Sequence.<Integer>script().thenReturn(1, 2, 3);
    assertThat(work.size()).isEqualTo(3);

    assertThatThrownBy(work::assertFinished).hasMessageContaining("called 0 times").hasMessageContaining("return 1");
    assertThat(work.remaining()).isEqualTo(3);
  }

  @Test
  void timesRepeatsTheLastStepAndSuppliedFailuresAreFresh() throws Exception {
    Sequence<String> work = Sequence.<String>script()
        .thenThrow(() -> new IOException("fresh")).times(3)
        .thenReturn("done");
    List<Throwable> thrown = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try {
        work.call();
      } catch (IOException e) {
        thrown.add(e);
      }
    }

    assertThat(work.call()).isEqualTo("done");
    assertThat(thrown).hasSize(3).doesNotHaveDuplicates();
    work.assertFinished();
  }

  @Test
  void asSupplierServesExecuteAsyncOfASupplier() {
    VirtualTime time = VirtualTime.create();
    Resilience policy = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE);
    Sequence<String> work = Sequence.<String>script(time).thenThrow(new IOException("x")).thenReturnAfter(Duration.ofMillis(5), "y");

    CompletableFuture<String> result = policy.executeAsync(work.asSupplier());
    assertThat(result).isNotDone();
    time.advance(Duration.ofMillis(5));

    assertThat(result).isCompletedWithValue("y");
  }

  @Test
  void aCancelledDelayedStepCancelsItsTimer() {
    VirtualTime time = VirtualTime.create();
    Sequence<String> work = Sequence.<String>script(time).thenReturnAfter(Duration.ofSeconds(1), "late");

    CompletableFuture<String> future = work.asSupplier().get();
    assertThat(time.pendingTimers()).isEqualTo(1);
    future.cancel(true);

    assertThat(time.pendingTimers()).isZero();
  }

  @Test
  void misuseIsReportedClearly() {
    assertThatThrownBy(() -> Sequence.<String>script().thenReturnAfter(Duration.ofMillis(1), "x"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("Sequence.script(time)");
    assertThatThrownBy(() -> Sequence.<String>script().times(2))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("needs a step");
    assertThatThrownBy(() -> Sequence.<String>script().thenReturn("a").times(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count").hasMessageContaining("0");
    assertThatThrownBy(() -> Sequence.<String>script(VirtualTime.create()).thenReturnAfter(Duration.ofMillis(-1), "x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-0.001S");
  }

  @Test
  void concurrentCallsTakeEachStepExactlyOnce() throws Exception {
    int threads = 8;
    int perThread = 250;
    Sequence<Integer> work = Sequence.script();
    for (int i = 0; i < threads * perThread; i++) {
      work.thenReturn(i);
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<List<Integer>>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(pool.submit(() -> {
          go.await();
          List<Integer> mine = new ArrayList<>();
          for (int i = 0; i < perThread; i++) {
            mine.add(work.call());
          }
          return mine;
        }));
      }
      go.countDown();
      List<Integer> all = new ArrayList<>();
      for (Future<List<Integer>> f : results) {
        all.addAll(f.get(1, TimeUnit.MINUTES));
      }
      Collections.sort(all);

      assertThat(all).hasSize(threads * perThread).doesNotHaveDuplicates();
      assertThat(all.get(all.size() - 1)).isEqualTo(threads * perThread - 1);
      work.assertFinished();
    } finally {
      pool.shutdownNow();
    }
  }
}
