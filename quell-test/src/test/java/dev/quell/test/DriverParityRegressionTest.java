package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent.Type;
import dev.quell.StopReason;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Regression tests: places where the sync and async drivers (or run and execute) used to disagree. */
class DriverParityRegressionTest {

  @Test
  void anAnswerArrivingExactlyAtTheAttemptTimeoutIsJudgedAlikeByBothDrivers() {
    int[] attempts = new int[2];
    for (Driver driver : Driver.values()) {
      TestPolicy test = TestPolicy.instant(
          Resilience.DEFAULT.withAttemptTimeout(Duration.ofMillis(200)).withBackoff(Backoff.NONE));
      Sequence<String> work = Sequence.<String>script(test.time())
          .thenReturnAfter(Duration.ofMillis(200), "edge").thenReturn("second");
      attempts[driver.ordinal()] = driver.run(test.policy(), test.time(), work).attempts();
    }
    assertThat(attempts[Driver.ASYNC.ordinal()]).as("async attempts vs sync").isEqualTo(attempts[Driver.SYNC.ordinal()]);
  }

  @Test
  void cancellingAnAttemptInFlightReportsItsEndOnBothDrivers() {
    // sync: the caller's thread is interrupted 100 ms into a 1 s attempt
    TestPolicy sync = TestPolicy.instant(Resilience.DEFAULT);
    Sequence<String> syncWork = Sequence.<String>script(sync.time()).thenReturnAfter(Duration.ofSeconds(1), "x");
    Thread me = Thread.currentThread();
    sync.time().schedule(me::interrupt, Duration.ofMillis(100).toNanos());
    Outcome<String> syncOutcome = sync.policy().run(syncWork);
    Thread.interrupted();

    // async: the caller cancels the future 100 ms into a 1 s attempt
    TestPolicy async = TestPolicy.instant(Resilience.DEFAULT);
    Sequence<String> asyncWork = Sequence.<String>script(async.time()).thenReturnAfter(Duration.ofSeconds(1), "x");
    CompletableFuture<Outcome<String>> future = async.policy().runAsync(asyncWork);
    async.time().advance(Duration.ofMillis(100));
    future.cancel(true);

    assertThat(syncOutcome.stopReason()).isEqualTo(StopReason.CANCELLED);
    assertThat(sync.events().types()).containsExactly(Type.ATTEMPT_STARTED, Type.ATTEMPT_ENDED, Type.CANCELLED);
    assertThat(async.events().types()).as("async").containsExactly(Type.ATTEMPT_STARTED, Type.ATTEMPT_ENDED, Type.CANCELLED);
  }

  @Test
  void runKeepsTheInterruptFlagWhenTheCallerIsInterruptedDuringAnAttempt() {
    // real clock: the work is interrupted inside a blocking wait, which clears the flag as it throws
    Outcome<String> outcome = Resilience.DEFAULT.run(() -> {
      Thread.currentThread().interrupt();
      new java.util.concurrent.CountDownLatch(1).await();
      return "never";
    });
    boolean flag = Thread.interrupted();

    assertThat(outcome.stopReason()).isEqualTo(StopReason.CANCELLED);
    assertThat(flag).as("interrupt flag after run() ended CANCELLED").isTrue();
  }

  @Test
  void runKeepsTheInterruptFlagWhenTheCallerIsInterruptedDuringBackoff() {
    // for contrast: interrupted while waiting between attempts, run() keeps the flag (passes)
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withBackoff(Backoff.constant(Duration.ofSeconds(1))));
    Sequence<String> work = Sequence.<String>script(test.time()).thenThrow(new IOException("x"));
    Thread me = Thread.currentThread();
    test.time().schedule(me::interrupt, Duration.ofMillis(100).toNanos());
    Outcome<String> outcome = test.policy().run(work);
    boolean flag = Thread.interrupted();

    assertThat(outcome.stopReason()).isEqualTo(StopReason.CANCELLED);
    assertThat(flag).isTrue();
  }
}
