package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The asynchronous driver's first attempt in place ({@code AsyncExecution.firstInPlace}): a first
 * attempt whose stage has answered OK when the work returns it ends the call with no call state,
 * no record and no timer; any other first attempt is handed to a call of its own, which decides
 * from there as the core decides for any attempt. Real clock (the lane's only clock): the waits
 * here are the attempts' own, with no threshold on how long anything took.
 */
class AsyncFirstAttemptTest {
  private static final IOException FAILURE = new IOException("first attempt fails");

  private static final Resilience POLICY = Resilience.DEFAULT.withName("in-place").withBackoff(Backoff.NONE)
      .withBudget(RetryBudget.of(1.0, 1000));

  @Test
  void aFirstAttemptThatAnsweredInsideStartEndsTheCallWithNoCallState() throws Exception {
    CompletableFuture<String> value = POLICY.executeAsync(() -> CompletableFuture.completedFuture("v"));
    assertThat(value).isCompletedWithValue("v");
    assertThat(value).isNotInstanceOf(AsyncExecution.Result.class); // no call was set up

    CompletableFuture<Outcome<String>> outcome = POLICY.runAsync(a -> CompletableFuture.completedFuture("v"));
    Outcome<String> o = outcome.getNow(null);
    assertThat(o.stopReason()).isEqualTo(StopReason.SUCCEEDED);
    assertThat(o.value()).isEqualTo("v");
    assertThat(o.attempts()).isEqualTo(1);
    assertThat(o.retryAfter()).isEmpty();
  }

  @Test
  void theCallersFutureOfAnAnsweredCallIgnoresCancelAndCompleteAsACallsCompletedFutureDoes() {
    CompletableFuture<String> value = POLICY.executeAsync(() -> CompletableFuture.completedFuture("v"));
    assertThat(value.cancel(true)).isFalse();
    assertThat(value.complete("other")).isFalse();
    assertThat(value.completeExceptionally(FAILURE)).isFalse();
    assertThat(value).isCompletedWithValue("v");
  }

  @Test
  void aNullValueAnsweredInsideStartIsTheCallsValue() {
    CompletableFuture<Outcome<String>> outcome = POLICY.runAsync(a -> CompletableFuture.completedFuture(null));
    Outcome<String> o = outcome.getNow(null);
    assertThat(o.stopReason()).isEqualTo(StopReason.SUCCEEDED);
    assertThat(o.hasValue()).isTrue();
    assertThat(o.value()).isNull();
  }

  @Test
  void theAttemptSeesTheNumberTimeoutAndDeadlineACallsFirstAttemptSees() {
    Resilience policy = POLICY.withAttemptTimeout(Duration.ofSeconds(3)).withDeadline(Duration.ofSeconds(20));
    List<Attempt> seen = new CopyOnWriteArrayList<>();
    List<ResilienceContext> contexts = new CopyOnWriteArrayList<>();
    policy.executeAsync(a -> {
      seen.add(a);
      contexts.add(ResilienceContext.current());
      return CompletableFuture.completedFuture("v");
    });
    Attempt a = seen.get(0);
    assertThat(a.number()).isEqualTo(1);
    assertThat(a.isHedge()).isFalse();
    assertThat(a.timeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(a.remaining()).isEqualTo(Duration.ofSeconds(20));
    assertThat(a.criticality()).isEqualTo(Criticality.CRITICAL);
    // calls nested in the attempt end with it, as they do inside any attempt
    Duration nested = contexts.get(0).remaining().orElseThrow();
    assertThat(nested).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(3));
    assertThat(ResilienceContext.current()).isEqualTo(ResilienceContext.EMPTY); // the frame is gone
  }

  @Test
  void aFirstAttemptThatFailedInsideStartIsRetriedByTheCore() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<Outcome<String>> outcome = POLICY.runAsync(a -> calls.incrementAndGet() == 1
        ? CompletableFuture.failedFuture(FAILURE) : CompletableFuture.completedFuture("second"));
    Outcome<String> o = outcome.get(10, TimeUnit.SECONDS);
    assertThat(o.stopReason()).isEqualTo(StopReason.SUCCEEDED);
    assertThat(o.value()).isEqualTo("second");
    assertThat(o.attempts()).isEqualTo(2);
  }

  @Test
  void aFirstAttemptThatThrewFromStartIsAFailedAttempt() throws Exception {
    CompletableFuture<String> value = POLICY.withAttempts(1).executeAsync(a -> {
      throw new IllegalStateException("boom");
    });
    assertThatThrownBy(() -> value.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(IllegalStateException.class).hasMessage("boom");
  }

  @Test
  void aNullStageIsAFailedAttempt() {
    CompletableFuture<Outcome<String>> outcome = POLICY.withAttempts(1).runAsync(a -> null);
    Outcome<String> o = outcome.join();
    assertThat(o.failure()).containsInstanceOf(NullPointerException.class);
    assertThat(o.attempts()).isEqualTo(1);
  }

  @Test
  void aValueTheClassifierRefusesGoesToTheCore() throws Exception {
    Resilience policy = POLICY.withClassifier((result, failure) -> "retry me".equals(result) ? Verdict.TRANSIENT
        : Classifier.DEFAULT.classify(result, failure));
    AtomicInteger calls = new AtomicInteger();
    Outcome<String> o = policy.runAsync(
        a -> CompletableFuture.completedFuture(calls.incrementAndGet() == 1 ? "retry me" : "fine"))
        .get(10, TimeUnit.SECONDS);
    assertThat(o.value()).isEqualTo("fine");
    assertThat(o.attempts()).isEqualTo(2);
  }

  @Test
  void aCancellationAnsweredInsideStartEndsTheCallCancelled() {
    Outcome<String> o = POLICY.runAsync(a -> CompletableFuture.<String>failedFuture(new CancellationException("gone")))
        .join();
    assertThat(o.stopReason()).isEqualTo(StopReason.CANCELLED);
    assertThat(o.attempts()).isEqualTo(1);
  }

  @Test
  void aFirstAttemptStillRunningWhenStartReturnsIsWatchedByACall() throws Exception {
    CompletableFuture<String> stage = new CompletableFuture<>();
    CompletableFuture<String> value = POLICY.executeAsync(() -> stage);
    assertThat(value).isInstanceOf(AsyncExecution.Result.class).isNotDone();
    CompletableFuture.runAsync(() -> stage.complete("late"));
    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("late");
  }

  @Test
  void aFirstAttemptStillRunningThatFailsLaterIsRetried() throws Exception {
    CompletableFuture<String> first = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<Outcome<String>> outcome = POLICY.runAsync(
        a -> calls.incrementAndGet() == 1 ? first : CompletableFuture.completedFuture("second"));
    CompletableFuture.runAsync(() -> first.completeExceptionally(FAILURE));
    Outcome<String> o = outcome.get(10, TimeUnit.SECONDS);
    assertThat(o.value()).isEqualTo("second");
    assertThat(o.attempts()).isEqualTo(2);
  }

  @Test
  void aFirstAttemptStillRunningAtItsTimeoutIsTimedOutAndCancelled() throws Exception {
    Resilience policy = POLICY.withAttempts(1).withAttemptTimeout(Duration.ofMillis(20));
    CompletableFuture<String> stage = new CompletableFuture<>();
    Outcome<String> o = policy.runAsync(a -> stage).get(10, TimeUnit.SECONDS);
    assertThat(o.failure()).containsInstanceOf(AttemptTimeoutException.class);
    assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(stage).isCancelled();
  }

  @Test
  void aFailureAnsweredInsideStartAtOrPastTheTimeoutIsTheAttemptsTimeout() throws Exception {
    Resilience policy = POLICY.withAttempts(1).withAttemptTimeout(Duration.ofMillis(1));
    Outcome<String> o = policy.runAsync(a -> {
      spinFor(Duration.ofMillis(3)); // start itself ran past the timeout: no timer was armed to see it
      return CompletableFuture.<String>failedFuture(FAILURE);
    }).get(10, TimeUnit.SECONDS);
    assertThat(o.failure()).containsInstanceOf(AttemptTimeoutException.class);
  }

  @Test
  void aValueAnsweredInsideStartPastTheTimeoutIsUsedAsTheSynchronousLanesUseIt() {
    Resilience policy = POLICY.withAttempts(1).withAttemptTimeout(Duration.ofMillis(1));
    Outcome<String> o = policy.runAsync(a -> {
      spinFor(Duration.ofMillis(3));
      return CompletableFuture.completedFuture("late but here");
    }).join();
    assertThat(o.value()).isEqualTo("late but here");
    assertThat(o.stopReason()).isEqualTo(StopReason.SUCCEEDED);
  }

  @Test
  void cancellingTheCallWhileItsFirstAttemptRunsCancelsTheAttemptAndEndsCancelled() throws Exception {
    CompletableFuture<String> stage = new CompletableFuture<>();
    CompletableFuture<Outcome<String>> outcome = POLICY.runAsync(a -> stage);
    assertThat(outcome.cancel(true)).isTrue();
    assertThat(outcome).isCancelled();
    assertThat(stage).isCancelled();
  }

  @Test
  void aLateValueRacingTheCallersCancelEndsTheCallOnceAndIsDiscardedAtMostOnce() throws Exception {
    List<Object> discarded = new CopyOnWriteArrayList<>();
    Resilience policy = POLICY.withDiscard(discarded::add);
    for (int i = 0; i < 2_000; i++) {
      discarded.clear();
      CompletableFuture<String> stage = new CompletableFuture<>();
      CompletableFuture<String> value = policy.executeAsync(() -> stage);
      String late = "value " + i;
      CountDownLatch go = new CountDownLatch(1);
      CompletableFuture<Void> completer = CompletableFuture.runAsync(() -> {
        await(go);
        stage.complete(late);
      });
      go.countDown();
      boolean cancelled = value.cancel(true);
      completer.get(10, TimeUnit.SECONDS);
      if (cancelled) {
        assertThat(value).isCancelled();
        // the value came after the call ended: nobody saw it, and the hook heard of it once (if
        // it did not lose to the cancel of its own stage, in which case there is no value at all)
        assertThat(discarded).hasSizeLessThanOrEqualTo(1).allMatch(late::equals);
      } else {
        assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo(late);
        assertThat(discarded).isEmpty();
      }
    }
  }

  @Test
  void aTimeoutRacingTheAnswerEndsTheCallExactlyOnce() throws Exception {
    Resilience policy = POLICY.withAttempts(1).withAttemptTimeout(Duration.ofNanos(200_000));
    List<Object> discarded = new CopyOnWriteArrayList<>();
    policy = policy.withDiscard(discarded::add);
    for (int i = 0; i < 500; i++) {
      discarded.clear();
      CompletableFuture<String> stage = new CompletableFuture<>();
      CompletableFuture<Outcome<String>> outcome = policy.runAsync(a -> stage);
      String v = "v" + i;
      LockSupport.parkNanos(200_000);
      stage.complete(v);
      Outcome<String> o = outcome.get(10, TimeUnit.SECONDS);
      if (o.hasValue()) {
        assertThat(o.value()).isEqualTo(v);
        assertThat(discarded).isEmpty();
      } else {
        assertThat(o.failure()).containsInstanceOf(AttemptTimeoutException.class);
        assertThat(discarded).hasSizeLessThanOrEqualTo(1);
      }
    }
  }

  @Test
  void aPolicyThatIsObservedTakesTheCallAsBefore() throws Exception {
    List<ResilienceEvent.Type> events = new CopyOnWriteArrayList<>();
    Resilience policy = POLICY.withListener(e -> events.add(e.type()));
    CompletableFuture<String> value = policy.executeAsync(() -> CompletableFuture.completedFuture("v"));
    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("v");
    assertThat(events).containsExactly(ResilienceEvent.Type.ATTEMPT_STARTED, ResilienceEvent.Type.ATTEMPT_ENDED,
        ResilienceEvent.Type.SUCCEEDED);
  }

  @Test
  void aCallInsideAnOpenContextTakesTheCallAsBefore() throws Exception {
    List<Attempt> seen = new CopyOnWriteArrayList<>();
    try (ResilienceContext.Scope ignored = ResilienceContext.EMPTY.withCriticality(Criticality.SHEDDABLE).open()) {
      CompletableFuture<String> value = POLICY.withAmbientCriticality(true).executeAsync(a -> {
        seen.add(a);
        return CompletableFuture.completedFuture("v");
      });
      assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("v");
    }
    assertThat(seen.get(0).criticality()).isEqualTo(Criticality.SHEDDABLE);
  }

  @Test
  void aCallStartedOnTheSharedTimerThreadRunsItsWorkOffIt() throws Exception {
    CompletableFuture<Boolean> onTimer = new CompletableFuture<>();
    CompletableFuture<CompletableFuture<String>> call = new CompletableFuture<>();
    TimeSource.system().schedule(() -> call.complete(POLICY.executeAsync(() -> {
      onTimer.complete(SystemTime.onTimerThread());
      return CompletableFuture.completedFuture("v");
    })), 0);
    assertThat(call.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS)).isEqualTo("v");
    assertThat(onTimer.get(10, TimeUnit.SECONDS)).as("the work ran on the shared timer thread").isFalse();
  }

  private static void spinFor(Duration d) {
    long end = System.nanoTime() + d.toNanos();
    while (System.nanoTime() - end < 0) {
      LockSupport.parkNanos(100_000);
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
