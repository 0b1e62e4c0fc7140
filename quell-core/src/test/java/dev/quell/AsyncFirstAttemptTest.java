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
 * no record and no timer; one that answered otherwise goes on in place ({@code RetryLoop}) while
 * its retries answer in place too; a first attempt still running is handed to a call of its own,
 * which decides from there as the core decides for any attempt. Real clock (the lane's only clock): the waits
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

  /** A stage that is still running when first looked at, and has ended by the time it is looked at again. */
  private static final class EndsAsLookedAt extends CompletableFuture<String> {
    private final String value;
    private boolean looked;

    EndsAsLookedAt(String value) {
      this.value = value;
    }

    @Override
    public boolean isDone() {
      if (!looked) {
        looked = true;
        boolean done = super.isDone();
        complete(value); // another thread's completion, just after the look
        return done;
      }
      return super.isDone();
    }
  }

  @Test
  void aStageThatEndsJustAfterTheLaneLooksIsHeardWithItsValueNotTakenForAFailure() throws Exception {
    CompletableFuture<String> value = POLICY.executeAsync(() -> new EndsAsLookedAt("v"));
    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("v");
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<String> retried = POLICY.executeAsync(a -> calls.incrementAndGet() == 1
        ? CompletableFuture.failedFuture(FAILURE) : new EndsAsLookedAt("second"));
    assertThat(retried.get(10, TimeUnit.SECONDS)).isEqualTo("second");
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
    AtomicInteger interrupted = new AtomicInteger();
    Outcome<String> o = policy.runAsync(a -> {
      // start itself runs past the timeout: the thread's watchdog slot times it, as it times a
      // synchronous attempt, and interrupts the work
      while (!Thread.currentThread().isInterrupted()) {
        LockSupport.parkNanos(100_000);
      }
      interrupted.incrementAndGet();
      return CompletableFuture.<String>failedFuture(FAILURE);
    }).get(10, TimeUnit.SECONDS);
    assertThat(o.failure()).containsInstanceOf(AttemptTimeoutException.class);
    assertThat(interrupted).hasValue(1);
    assertThat(Thread.currentThread().isInterrupted()).as("the watchdog's interrupt was taken back").isFalse();
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

  // ---------------------------------------------------------------- the retries in place (RetryLoop)

  @Test
  void aRetryThatAnswersInPlaceEndsTheCallWithNoCallState() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    List<Attempt> seen = new CopyOnWriteArrayList<>();
    CompletableFuture<String> value = POLICY.executeAsync(a -> {
      seen.add(a);
      return calls.incrementAndGet() == 1 ? CompletableFuture.failedFuture(FAILURE)
          : CompletableFuture.completedFuture("second");
    });
    assertThat(value).isCompletedWithValue("second");
    assertThat(value).isNotInstanceOf(AsyncExecution.Result.class); // no call was set up
    assertThat(seen).extracting(Attempt::number).containsExactly(1, 2);
    assertThat(seen.get(1).isRetry()).isTrue();
    assertThat(seen.get(1).remaining()).isPositive().isLessThanOrEqualTo(seen.get(0).remaining());
  }

  @Test
  void aRetryStillRunningWhenStartReturnsIsAdoptedByACallThatHearsItsEnd() throws Exception {
    CompletableFuture<String> second = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<Outcome<String>> outcome = POLICY.runAsync(
        a -> calls.incrementAndGet() == 1 ? CompletableFuture.failedFuture(FAILURE) : second);
    assertThat(outcome).isInstanceOf(AsyncExecution.Result.class).isNotDone();
    CompletableFuture.runAsync(() -> second.complete("late"));
    Outcome<String> o = outcome.get(10, TimeUnit.SECONDS);
    assertThat(o.value()).isEqualTo("late");
    assertThat(o.attempts()).isEqualTo(2);
  }

  @Test
  void aRetryStillRunningIsTimedOutByItsCallAndTheNextOneRuns() throws Exception {
    Resilience policy = POLICY.withAttempts(3).withAttemptTimeout(Duration.ofMillis(20));
    CompletableFuture<String> hangs = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    Outcome<String> o = policy.runAsync(a -> {
      int n = calls.incrementAndGet();
      return n == 1 ? CompletableFuture.failedFuture(FAILURE) : n == 2 ? hangs : CompletableFuture.completedFuture("third");
    }).get(10, TimeUnit.SECONDS);
    assertThat(o.value()).isEqualTo("third");
    assertThat(o.attempts()).isEqualTo(3);
    assertThat(hangs).isCancelled();
  }

  @Test
  void aRetryThatMustWaitIsHandedToACallThatWaitsThenRetries() throws Exception {
    Resilience policy = POLICY.withBackoff(Backoff.constant(Duration.ofMillis(5)));
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<String> value = policy.executeAsync(a -> calls.incrementAndGet() == 1
        ? CompletableFuture.failedFuture(FAILURE) : CompletableFuture.completedFuture("after the wait"));
    assertThat(value).isInstanceOf(AsyncExecution.Result.class);
    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("after the wait");
    assertThat(calls).hasValue(2);
  }

  @Test
  void aRetryTheBudgetRefusesEndsTheCallRefusedWithTheLastFailureAsCause() throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 0); // no floor: only successes would refill it
    while (budget.trySpend()) {
      // drained: the first retry is refused
    }
    Resilience policy = Resilience.DEFAULT.withName("in-place-refused").withBackoff(Backoff.NONE)
        .withBudget(budget);
    Outcome<String> o = policy.runAsync(a -> CompletableFuture.<String>failedFuture(FAILURE))
        .get(10, TimeUnit.SECONDS);
    assertThat(o.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(o.attempts()).isEqualTo(1);
    assertThat(o.failure()).containsInstanceOf(CallRejectedException.class);
    assertThat(o.failure().orElseThrow()).hasCause(FAILURE);
  }

  @Test
  void aRetryTheBudgetWillNotFundIsRefusedBeforeItsBackoffNotAfter() throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 0);
    while (budget.trySpend()) {
      // drained
    }
    // a minute's backoff inside a two-minute deadline: the call ends at once (after the guarded
    // pause), not a minute later, as a call does when the core knows the retry will be refused
    Resilience policy = Resilience.DEFAULT.withName("in-place-refused-before-wait").withBudget(budget)
        .withBackoff(Backoff.constant(Duration.ofMinutes(1))).withDeadline(Duration.ofMinutes(2));
    Outcome<String> o = policy.runAsync(a -> CompletableFuture.<String>failedFuture(FAILURE))
        .get(30, TimeUnit.SECONDS);
    assertThat(o.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(o.attempts()).isEqualTo(1);
  }

  @Test
  void aRetryThatFailsInsideStartAfterItsTimeoutIsTheRetrysTimeout() throws Exception {
    Resilience policy = POLICY.withAttempts(2).withAttemptTimeout(Duration.ofMillis(20));
    AtomicInteger calls = new AtomicInteger();
    Outcome<String> o = policy.runAsync(a -> {
      if (calls.incrementAndGet() == 1) {
        return CompletableFuture.<String>failedFuture(FAILURE);
      }
      while (!Thread.currentThread().isInterrupted()) { // the retry's slot times it out and interrupts it
        LockSupport.parkNanos(100_000);
      }
      return CompletableFuture.<String>failedFuture(FAILURE);
    }).get(10, TimeUnit.SECONDS);
    assertThat(o.attempts()).isEqualTo(2);
    assertThat(o.failure()).containsInstanceOf(AttemptTimeoutException.class);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  void attemptsRunOutInPlaceWithTheLastFailureUnchanged() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<String> value = POLICY.withAttempts(4).executeAsync(a -> {
      calls.incrementAndGet();
      return CompletableFuture.failedFuture(FAILURE);
    });
    assertThatThrownBy(() -> value.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .cause().isSameAs(FAILURE);
    assertThat(calls).hasValue(4);
  }

  @Test
  void aValueSupersededByALaterAttemptGoesToTheDiscardHookOnce() throws Exception {
    List<Object> discarded = new CopyOnWriteArrayList<>();
    Resilience policy = POLICY.withDiscard(discarded::add)
        .withClassifier((result, failure) -> result instanceof String && ((String) result).startsWith("retry me")
            ? Verdict.TRANSIENT : Classifier.DEFAULT.classify(result, failure));
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<String> value = policy.executeAsync(a -> {
      int n = calls.incrementAndGet();
      return CompletableFuture.completedFuture(n < 3 ? "retry me " + n : "fine");
    });
    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("fine");
    assertThat(discarded).containsExactly("retry me 1", "retry me 2");
  }

  @Test
  void aDiscardHookThatMakesACallOnTheSameThreadLeavesTheCallInPlaceIntact() throws Exception {
    // the hook runs inside the in-place loop, on the thread whose per-thread fast record holds the
    // call's gates: a call it makes itself must not take a fast lane that would reuse that record
    for (boolean async : new boolean[] {false, true}) {
      RetryBudget budget = new TokenBucket("discard-nested", 1.0, 0, 1_000, TimeSource.system());
      java.util.concurrent.atomic.AtomicReference<Resilience> self = new java.util.concurrent.atomic.AtomicReference<>();
      List<String> nested = new CopyOnWriteArrayList<>();
      Resilience policy = Resilience.DEFAULT.withName("discard-nested").withBackoff(Backoff.NONE).withBudget(budget)
          .withClassifier((result, failure) -> result instanceof String && ((String) result).startsWith("retry me")
              ? Verdict.TRANSIENT : Classifier.DEFAULT.classify(result, failure))
          .withDiscard(v -> {
            AtomicInteger inner = new AtomicInteger();
            try {
              nested.add(self.get().execute(() -> {
                if (inner.incrementAndGet() == 1) {
                  throw FAILURE;
                }
                return "nested";
              }));
            } catch (Exception e) {
              nested.add("failed: " + e);
            }
          });
      self.set(policy);
      AtomicInteger calls = new AtomicInteger();
      String value = async
          ? policy.<String>executeAsync(a -> CompletableFuture.completedFuture(
              calls.incrementAndGet() == 1 ? "retry me" : "outer")).get(10, TimeUnit.SECONDS)
          : policy.execute(() -> calls.incrementAndGet() == 1 ? "retry me" : "outer");
      assertThat(value).as("async %s", async).isEqualTo("outer");
      assertThat(nested).as("async %s", async).containsExactly("nested");
      assertThat(budget.tokens()).as("async %s: each retry charged once, each success credited once", async)
          .isEqualTo(budget.capacity());
    }
  }

  @Test
  void aDiscardHookThatMakesACallOnTheSameThreadLeavesTheTimedLanesPermitsToTheCall() throws Exception {
    // the synchronous timed lane (a concurrency limit, nothing observing) retries in the same loop,
    // its permits in the thread's fast record: the hook's own call must not reuse that record
    Limiter limit = Limiter.concurrency(4);
    java.util.concurrent.atomic.AtomicReference<Resilience> self = new java.util.concurrent.atomic.AtomicReference<>();
    List<String> nested = new CopyOnWriteArrayList<>();
    Resilience policy = Resilience.DEFAULT.withName("discard-nested-timed").withBackoff(Backoff.NONE)
        .withLimiter(limit)
        .withClassifier((result, failure) -> result instanceof String && ((String) result).startsWith("retry me")
            ? Verdict.TRANSIENT : Classifier.DEFAULT.classify(result, failure))
        .withDiscard(v -> {
          try {
            nested.add(self.get().execute(() -> "nested"));
          } catch (Exception e) {
            nested.add("failed: " + e);
          }
        });
    self.set(policy);
    AtomicInteger calls = new AtomicInteger();
    assertThat(policy.execute(() -> calls.incrementAndGet() == 1 ? "retry me" : "outer")).isEqualTo("outer");
    assertThat(nested).containsExactly("nested");
    assertThat(((ConcurrencyLimiter) limit).inFlight()).as("every permit given back").isZero();
  }

  @Test
  void aCancellationAnsweredByARetryEndsTheCallCancelled() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Outcome<String> o = POLICY.runAsync(a -> calls.incrementAndGet() == 1
        ? CompletableFuture.<String>failedFuture(FAILURE)
        : CompletableFuture.<String>failedFuture(new CancellationException("gone"))).get(10, TimeUnit.SECONDS);
    assertThat(o.stopReason()).isEqualTo(StopReason.CANCELLED);
    assertThat(o.attempts()).isEqualTo(2);
  }

  @Test
  void aRetryThatThrowsFromStartIsAFailedAttemptAndIsRetried() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<String> value = POLICY.withAttempts(3).executeAsync(a -> {
      if (calls.incrementAndGet() < 3) {
        throw new java.io.UncheckedIOException(new IOException("boom " + a.number()));
      }
      return CompletableFuture.completedFuture("third");
    });
    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("third");
  }

  @Test
  void manyCallersFailingOnceAgainstOneBudgetAreAccountedExactly() throws Exception {
    // every call fails once in place and is retried in place: the budget is charged once per call,
    // and credited once per success, from every thread at once; with no floor, a charge missed or
    // made twice would leave the full bucket off its capacity by a whole token per call
    RetryBudget budget = new TokenBucket("in-place-many", 1.0, 0, 1_000, TimeSource.system());
    Resilience policy = Resilience.DEFAULT.withName("in-place-many").withBackoff(Backoff.NONE).withBudget(budget);
    int threads = 4;
    int calls = 5_000;
    AtomicInteger values = new AtomicInteger();
    AtomicInteger attempts = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<CompletableFuture<Void>> workers = new java.util.ArrayList<>();
    for (int t = 0; t < threads; t++) {
      workers.add(CompletableFuture.runAsync(() -> {
        await(go);
        for (int i = 0; i < calls; i++) {
          boolean[] failed = new boolean[1];
          String v = policy.<String>executeAsync(a -> {
            attempts.incrementAndGet();
            if (!failed[0]) {
              failed[0] = true;
              return CompletableFuture.failedFuture(FAILURE);
            }
            return CompletableFuture.completedFuture("ok");
          }).join();
          if ("ok".equals(v)) {
            values.incrementAndGet();
          }
        }
      }, java.util.concurrent.Executors.newSingleThreadExecutor()));
    }
    go.countDown();
    CompletableFuture.allOf(workers.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    assertThat(values).hasValue(threads * calls);
    assertThat(attempts).hasValue(2 * threads * calls);
    assertThat(budget.tokens()).isEqualTo(budget.capacity());
  }

  // ---------------------------------------------------------------- answers with no stage (InPlaceWork)

  /** Work that answers each attempt in place with no stage, from a script of answers. */
  private static final class Answering implements Resilience.AsyncWork<String>, dev.quell.internal.InPlaceWork {
    private final Object[] script;
    private int next;
    private Object answer;

    Answering(Object... script) {
      this.script = script;
    }

    @Override
    public java.util.concurrent.CompletionStage<String> start(Attempt attempt) {
      answer = script[next++];
      return answer instanceof java.util.concurrent.CompletionStage ? castStage(answer) : castStage(ANSWERED);
    }

    @SuppressWarnings("unchecked")
    private static java.util.concurrent.CompletionStage<String> castStage(Object stage) {
      return (java.util.concurrent.CompletionStage<String>) stage;
    }

    @Override
    public Object answerValue() {
      return answer;
    }

    @Override
    public Throwable answerFailure() {
      return answer instanceof Throwable ? (Throwable) answer : null;
    }
  }

  @Test
  void aValueAnsweredWithNoStageEndsTheCallOnTheMarkerTheWorkReadsItsValueFrom() {
    Answering work = new Answering("v");
    CompletableFuture<String> value = POLICY.executeAsync(work);
    assertThat((Object) value).isSameAs(dev.quell.internal.InPlaceWork.ANSWERED);
    assertThat(work.answerValue()).isEqualTo("v");
    assertThat(dev.quell.internal.InPlaceWork.ANSWERED.complete("x")).isFalse();
    assertThat(dev.quell.internal.InPlaceWork.ANSWERED.cancel(true)).isFalse();
    assertThatThrownBy(dev.quell.internal.InPlaceWork.ANSWERED::join).hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("marker");
  }

  @Test
  void aFailureAnsweredWithNoStageIsRetriedInPlaceAndTheOutcomeStyleGetsAnOutcome() throws Exception {
    Outcome<String> o = POLICY.runAsync(new Answering(FAILURE, "second")).get(10, TimeUnit.SECONDS);
    assertThat(o.value()).isEqualTo("second");
    assertThat(o.attempts()).isEqualTo(2);
  }

  @Test
  void answersWithNoStageReachACallToo() throws Exception {
    // observed: no lane; the call starts each attempt and hears an answer given in place at once
    List<ResilienceEvent.Type> events = new CopyOnWriteArrayList<>();
    Resilience policy = POLICY.withListener(e -> events.add(e.type()));
    CompletableFuture<String> value = policy.executeAsync(new Answering(FAILURE, "second"));
    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("second");
    assertThat(events).containsSubsequence(ResilienceEvent.Type.ATTEMPT_ENDED, ResilienceEvent.Type.ATTEMPT_STARTED,
        ResilienceEvent.Type.ATTEMPT_ENDED, ResilienceEvent.Type.SUCCEEDED);
    // and a retry still running after answers in place is the call's to hear
    CompletableFuture<String> third = new CompletableFuture<>();
    CompletableFuture<String> later = POLICY.withAttempts(3).executeAsync(new Answering(FAILURE, FAILURE, third));
    assertThat(later).isNotDone();
    third.complete("third");
    assertThat(later.get(10, TimeUnit.SECONDS)).isEqualTo("third");
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
