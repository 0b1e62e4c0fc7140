package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Driver.Result;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every behaviour of the policy, asserted identically for sync (throw and result style) and async execution. */
class PolicyBehaviourTest {
  private final VirtualTime time = VirtualTime.create();

  /** DEFAULT's shape with a fixed, jitter-free backoff so the timeline is exact. */
  private static Resilience policy() {
    return Resilience.DEFAULT.withBackoff(Backoff.constant(Duration.ofMillis(100))).withBudget(RetryBudget.NONE);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aSuccessfulFirstAttemptEndsTheCall(Driver driver) {
    Result r = driver.run(policy(), time, ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("v");
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.elapsed).isZero();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aTransientFailureIsRetriedAfterTheBackoff(Driver driver) {
    Result r = driver.run(policy(), time, fail(new IOException("flaky")), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("v");
    assertThat(r.attempts).isEqualTo(2);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(100));
    assertThat(r.ofType(ResilienceEvent.Type.RETRYING)).singleElement()
        .satisfies(e -> assertThat(e.delay()).contains(Duration.ofMillis(100)));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aPermanentFailureIsNotRetriedAndIsRethrownUnchanged(Driver driver) {
    IllegalStateException bug = new IllegalStateException("bug");
    Result r = driver.run(policy(), time, fail(bug));
    assertThat(r.reason).isEqualTo(StopReason.PERMANENT);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.thrown).isSameAs(bug);
    assertThat(r.terminal().type()).isEqualTo(ResilienceEvent.Type.NOT_RETRIED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void whenAttemptsRunOutTheLastFailureIsRethrownUnchanged(Driver driver) {
    IOException last = new IOException("third");
    Result r = driver.run(policy(), time, fail(new IOException("first")), fail(new IOException("second")), fail(last));
    assertThat(r.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(r.attempts).isEqualTo(3);
    assertThat(r.thrown).isSameAs(last);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(200));
    assertThat(r.terminal().type()).isEqualTo(ResilienceEvent.Type.EXHAUSTED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aDelayThatWouldCrossTheDeadlineFailsNowInsteadOfSleeping(Driver driver) {
    IOException failure = new IOException("down");
    Resilience p = policy().withDeadline(Duration.ofSeconds(1)).withBackoff(Backoff.constant(Duration.ofSeconds(2)));
    Result r = driver.run(p, time, fail(failure));
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.elapsed).isZero();
    assertThat(r.thrown).isInstanceOf(DeadlineExceededException.class).hasCause(failure);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anAttemptThatOutlivesItsTimeoutIsAbandonedAndRetried(Driver driver) {
    Resilience p = policy().withAttemptTimeout(Duration.ofMillis(250));
    Result r = driver.run(p, time, ok("late").after(Duration.ofSeconds(5)), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("v");
    assertThat(r.attempts).isEqualTo(2);
    assertThat(r.ofType(ResilienceEvent.Type.ATTEMPT_ENDED).get(0).failure())
        .get().isInstanceOf(AttemptTimeoutException.class);
    assertThat(r.ofType(ResilienceEvent.Type.ATTEMPT_ENDED).get(0).attemptDuration()).contains(Duration.ofMillis(250));
    assertThat(Thread.currentThread().isInterrupted()).as("the timeout's interrupt never leaks").isFalse();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theDeadlineCapsTheAttemptTimeout(Driver driver) {
    Resilience p = policy().withDeadline(Duration.ofMillis(300)).withAttemptTimeout(Duration.ofSeconds(10));
    Result r = driver.run(p, time, ok("late").after(Duration.ofSeconds(5)));
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(300));
    assertThat(r.thrown).isInstanceOf(DeadlineExceededException.class)
        .hasCauseInstanceOf(AttemptTimeoutException.class);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aRefusedRetryServesTheGuardedPauseThenRejects(Driver driver) {
    RetryBudget budget = RetryBudget.of(0.1, 0, time); // one token, no floor
    assertThat(budget.trySpend()).isTrue();
    IOException failure = new IOException("down");
    Result r = driver.run(policy().withBudget(budget), time, fail(failure));
    assertThat(r.reason).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.elapsed).as("the 100 ms guarded pause").isEqualTo(Duration.ofMillis(100));
    assertThat(r.terminal().type()).isEqualTo(ResilienceEvent.Type.REJECTED_BY_BUDGET);
    assertThat(r.terminal().delay()).as("announced before it is served").contains(Duration.ofMillis(100));
    assertThat(r.thrown).isInstanceOf(CallRejectedException.class).hasCause(failure);
    CallRejectedException rejected = (CallRejectedException) r.thrown;
    assertThat(rejected.reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(rejected.attempts()).isEqualTo(1);
    assertThat(rejected.retryAfter()).as("no floor, so no time-based hint").isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theGuardedPauseIsCappedByTheTimeLeftBeforeTheDeadline(Driver driver) {
    RetryBudget budget = TokenBucketDrain.drain(RetryBudget.of(0.1, 0.1, time)); // one token, refills in 10 s
    Resilience p = policy().withDeadline(Duration.ofSeconds(1)).withBackoff(Backoff.NONE).withBudget(budget);
    Result r = driver.run(p, time, fail(new IOException()).after(Duration.ofMillis(960)));
    assertThat(r.reason).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(r.elapsed).isEqualTo(Duration.ofSeconds(1));
    assertThat(r.terminal().delay()).contains(Duration.ofMillis(40));
    assertThat(((CallRejectedException) r.thrown).retryAfter()).as("the floor funds the next token in about 9 s")
        .hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofSeconds(9), Duration.ofSeconds(10)));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aServersRetryAfterWinsOverTheBackoffUnjitteredAndCappedByItsMax(Driver driver) {
    Classifier throttling = Classifier.rules()
        .onFailure(e -> e.getMessage().startsWith("slow down"), Verdict.throttled(Duration.ofSeconds(2)))
        .onFailure(e -> e.getMessage().startsWith("back off"), Verdict.throttled(Duration.ofMinutes(5)));
    Resilience p = policy().withClassifier(throttling).withDeadline(Duration.ofMinutes(10))
        .withBackoff(Backoff.exponential().withMax(Duration.ofSeconds(20)));
    Result r = driver.run(p, time, fail(new IOException("slow down")), fail(new IOException("back off")), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.ofType(ResilienceEvent.Type.RETRYING)).extracting(e -> e.delay().orElseThrow())
        .containsExactly(Duration.ofSeconds(2), Duration.ofSeconds(20));
    assertThat(r.elapsed).isEqualTo(Duration.ofSeconds(22));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aResultTheClassifierRejectsIsRetriedAndReturnedWhenRetryingIsOver(Driver driver) {
    Classifier busy = Classifier.rules().onResult("busy"::equals, Verdict.TRANSIENT);
    Result r = driver.run(policy().withClassifier(busy), time, ok("busy"), ok("busy"), ok("busy"));
    assertThat(r.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(r.attempts).isEqualTo(3);
    assertThat(r.thrown).isNull();
    assertThat(r.value).isEqualTo("busy");
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aThrowingListenerNeverBreaksACall(Driver driver) {
    Resilience p = policy().withListener(e -> {
      throw new IllegalStateException("listener bug");
    });
    Result r = driver.run(p, time, fail(new IOException()), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("v");
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aClassifierThatThrowsMakesTheFailurePermanent(Driver driver) {
    Resilience p = policy().withClassifier((result, failure) -> {
      throw new IllegalStateException("classifier bug");
    });
    Result r = driver.run(p, time, fail(new IOException()));
    assertThat(r.reason).isEqualTo(StopReason.PERMANENT);
    assertThat(r.attempts).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void successesCreditTheBudgetAndRetriesSpendIt(Driver driver) {
    RetryBudget budget = TokenBucketDrain.drain(RetryBudget.of(0.5, 0, time)); // capacity 1
    Resilience p = policy().withBudget(budget);
    driver.run(p, time, ok("a"));
    driver.run(p, time, ok("b"));
    assertThat(budget.tokens()).isEqualTo(1.0);
    Result r = driver.run(p, time, fail(new IOException()), ok("c"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(budget.tokens()).as("spent one, then the success deposited half").isEqualTo(0.5);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void firstAttemptsAreNeverChargedOrRefused(Driver driver) {
    RetryBudget budget = TokenBucketDrain.drain(RetryBudget.of(0.1, 0, time));
    for (int i = 0; i < 20; i++) {
      Result r = driver.run(policy().withBudget(budget), time, ok(i));
      assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    }
    assertThat(budget.tokens()).isEqualTo(1.0); // 20 × 0.1, capped at capacity 1
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void permanentFailuresAndCancellationsAreNeverCharged(Driver driver) {
    RetryBudget budget = RetryBudget.feedback(10, 0.1);
    driver.run(policy().withBudget(budget), time, fail(new IllegalArgumentException()));
    assertThat(budget.tokens()).isEqualTo(10.0);
    driver.run(policy().withBudget(budget), time, fail(new IOException()), ok("v"));
    assertThat(budget.tokens()).as("the transient failure took one, the success gave 0.1").isEqualTo(9.1);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void drainingStopsNewAttempts(Driver driver) {
    try {
      Draining.begin(Duration.ofSeconds(5), time);
      Result r = driver.run(policy(), time);
      assertThat(r.reason).isEqualTo(StopReason.DRAINING);
      assertThat(r.attempts).isZero();
      assertThat(r.thrown).isInstanceOf(CallRejectedException.class);
      assertThat(((CallRejectedException) r.thrown).reason()).isEqualTo(StopReason.DRAINING);
    } finally {
      Draining.resetForTests();
    }
  }

  /** Empties a budget. */
  static final class TokenBucketDrain {
    static RetryBudget drain(RetryBudget b) {
      while (b.trySpend()) {
        // empty
      }
      return b;
    }
  }
}
