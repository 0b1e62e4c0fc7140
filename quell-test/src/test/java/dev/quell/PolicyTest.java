package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The policy as a value, and the behaviours that belong to one driver only. */
class PolicyTest {
  private final VirtualTime time = VirtualTime.create();

  @Test
  void presets() {
    assertThat(Resilience.DEFAULT.attempts()).isEqualTo(3);
    assertThat(Resilience.DEFAULT.deadline()).contains(Duration.ofSeconds(30));
    assertThat(Resilience.DEFAULT.attemptTimeout()).contains(Duration.ofSeconds(10));
    assertThat(Resilience.DEFAULT.backoff()).isEqualTo(Backoff.exponential());
    assertThat(((Backoff.Exponential) Resilience.DEFAULT.backoff()).jitter()).isEqualTo(Jitter.FULL);
    assertThat(Resilience.DEFAULT.configuredBudget()).isSameAs(RetryBudget.AUTOMATIC);
    assertThat(Resilience.HTTP.classifier()).isSameAs(Classifier.HTTP);
    assertThat(Resilience.HTTP.attempts()).isEqualTo(3);
    assertThat(Resilience.NONE.attempts()).isEqualTo(1);
    assertThat(Resilience.NONE.deadline()).isEmpty();
    assertThat(Resilience.NONE.budget()).isSameAs(RetryBudget.NONE);
  }

  @Test
  void eachPolicyInstanceOwnsItsAutomaticBudgetWhichIsNotPartOfEquality() {
    Resilience a = Resilience.DEFAULT.withName("inventory");
    Resilience b = Resilience.DEFAULT.withName("inventory");
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a.budget()).isNotSameAs(b.budget());
    assertThat(a.budget().name()).isEqualTo("inventory");
    assertThat(a.budget().capacity()).isEqualTo(30.0);
    int hash = a.hashCode();
    a.budget().trySpend();
    assertThat(a.hashCode()).as("running never changes equality").isEqualTo(hash);
    assertThat(a).isNotEqualTo(a.withAttempts(4));
  }

  @Test
  void aOneAttemptPolicyGetsNoBudget() {
    assertThat(Resilience.DEFAULT.withAttempts(1).budget()).isSameAs(RetryBudget.NONE);
    assertThat(Resilience.DEFAULT.withBudget(null).budget()).isSameAs(RetryBudget.NONE);
    RetryBudget shared = RetryBudget.shared("policy-test");
    assertThat(Resilience.DEFAULT.withBudget(shared).budget()).isSameAs(shared);
  }

  @Test
  void validationListsEveryProblemAtOnce() {
    ResilienceConfigurationException e = (ResilienceConfigurationException) catchThrowable(() ->
        Resilience.DEFAULT.with(s -> s.name("").attempts(0).deadline(Duration.ZERO)
            .attemptTimeout(Duration.ofMillis(-5))));
    assertThat(e.problems()).containsExactly(
        "name was \"\": must not be blank",
        "attempts was 0: must be at least 1 (attempts counts the first attempt too)",
        "deadline was 0 ms: must be a positive duration",
        "attemptTimeout was PT-0.005S: must be a positive duration");
    assertThat(e).hasMessageStartingWith("4 configuration problems:");
  }

  @Test
  void singleSettingsAreValidatedToo() {
    assertThatThrownBy(() -> Resilience.DEFAULT.withAttempts(-1)).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessage("attempts was -1: must be at least 1 (attempts counts the first attempt too)");
    assertThatThrownBy(() -> Backoff.exponential().withFactor(0.5)).hasMessageContaining("backoff factor was 0.5");
    assertThatThrownBy(() -> Resilience.DEFAULT.withAmbientCriticality(true).withAttempts(1))
        .hasMessageContaining("useAmbientCriticality");
  }

  @Test
  void settingsCannotBeUsedAfterWithReturns() {
    Resilience.Settings[] leaked = new Resilience.Settings[1];
    Resilience.DEFAULT.with(s -> leaked[0] = s);
    assertThatThrownBy(() -> leaked[0].attempts(9)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void interruptingTheCallerStopsRetryingAndKeepsTheFlag() {
    AtomicInteger attempts = new AtomicInteger();
    Resilience p = Resilience.DEFAULT.withTimeSource(time);
    Throwable thrown = catchThrowable(() -> p.execute(() -> {
      attempts.incrementAndGet();
      Thread.currentThread().interrupt(); // the caller is told to stop while the attempt fails
      throw new IOException("failed while interrupted");
    }));
    try {
      assertThat(thrown).isInstanceOf(InterruptedException.class).hasCauseInstanceOf(IOException.class);
      assertThat(attempts).hasValue(1);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void workThatThrowsInterruptedExceptionEndsTheCallCancelled() {
    InterruptedException interrupted = new InterruptedException("stop");
    Outcome<Object> o = Resilience.DEFAULT.withTimeSource(time).run(() -> {
      throw interrupted;
    });
    try {
      assertThat(o.stopReason()).isEqualTo(StopReason.CANCELLED);
      assertThat(o.failure()).containsSame(interrupted);
      assertThat(o.attempts()).isEqualTo(1);
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  @Timeout(30)
  void onTheRealClockASyncAttemptTimeoutInterruptsTheBlockedAttemptAndClearsTheInterrupt() {
    Resilience p = Resilience.DEFAULT.withAttempts(2).withBackoff(Backoff.NONE)
        .withAttemptTimeout(Duration.ofMillis(20)).withBudget(RetryBudget.NONE);
    AtomicInteger attempts = new AtomicInteger();
    Outcome<Object> o = p.run(() -> {
      attempts.incrementAndGet();
      new CountDownLatch(1).await(); // blocks until interrupted: hangs the test if the watchdog did not interrupt it
      return "never";
    });
    assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(o.failure()).get().isInstanceOf(AttemptTimeoutException.class);
    assertThat(attempts).hasValue(2);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  @Timeout(30)
  @org.junit.jupiter.api.condition.EnabledForJreRange(min = org.junit.jupiter.api.condition.JRE.JAVA_21)
  void onVirtualThreadsTheWatchdogEndsBlockedAttemptsToo() throws Exception {
    java.util.concurrent.ExecutorService virtual = (java.util.concurrent.ExecutorService)
        java.util.concurrent.Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    try {
      Resilience p = Resilience.DEFAULT.withAttempts(2).withBackoff(Backoff.NONE)
          .withAttemptTimeout(Duration.ofMillis(20)).withBudget(RetryBudget.NONE);
      List<java.util.concurrent.Future<Outcome<Object>>> calls = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        calls.add(virtual.submit(() -> p.run(() -> {
          new CountDownLatch(1).await(); // blocks until the watchdog interrupts it
          return "never";
        })));
      }
      for (java.util.concurrent.Future<Outcome<Object>> call : calls) {
        Outcome<Object> o = call.get();
        assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
        assertThat(o.failure()).get().isInstanceOf(AttemptTimeoutException.class);
        assertThat(o.attempts()).isEqualTo(2);
      }
    } finally {
      virtual.shutdownNow();
    }
  }

  @Test
  @Timeout(30)
  void theFastPathHandsAFailedFirstAttemptToTheCore() throws Exception {
    // real clock and no listener: the first attempt runs on the allocation-free fast path
    Resilience p = Resilience.DEFAULT.withBackoff(Backoff.NONE);
    AtomicInteger attempts = new AtomicInteger();
    String v = p.execute(() -> {
      if (attempts.incrementAndGet() == 1) {
        throw new IOException("once");
      }
      return "ok";
    });
    assertThat(v).isEqualTo("ok");
    assertThat(attempts).hasValue(2);
    assertThat(p.budget().tokens()).isCloseTo(29.1, org.assertj.core.api.Assertions.within(0.2));
    IllegalStateException bug = new IllegalStateException();
    assertThatThrownBy(() -> p.execute(() -> {
      throw bug;
    })).isSameAs(bug);
  }

  @Test
  @Timeout(30)
  void nestedSyncCallsEachTimeTheirOwnAttempts() {
    Resilience outer = Resilience.DEFAULT.withAttempts(1).withAttemptTimeout(Duration.ofSeconds(20));
    Resilience inner = Resilience.DEFAULT.withAttempts(2).withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE)
        .withAttemptTimeout(Duration.ofMillis(20));
    Outcome<Object> o = outer.run(() -> {
      Outcome<Object> in = inner.run(() -> {
        new CountDownLatch(1).await(); // blocks until its attempt timeout interrupts it
        return "never";
      });
      assertThat(in.failure()).get().isInstanceOf(AttemptTimeoutException.class);
      return "outer survived";
    });
    assertThat(o.value()).isEqualTo("outer survived");
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  void nestedPoliciesChargeOnlyTheirOwnRetries() throws Exception {
    RetryBudget outerBudget = RetryBudget.of(0.1, 3, time);
    RetryBudget innerBudget = RetryBudget.of(0.1, 3, time);
    Resilience outer = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE).withBudget(outerBudget);
    Resilience inner = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE).withBudget(innerBudget);
    AtomicInteger leaf = new AtomicInteger();
    List<ResilienceEvent> nested = new ArrayList<>();
    Resilience innerObserved = inner.withListener(e -> {
      if (e.type() == ResilienceEvent.Type.NESTED_RETRY) {
        nested.add(e);
      }
    });
    outer.run(() -> innerObserved.execute(() -> {
      if (leaf.incrementAndGet() < 3) {
        throw new IOException();
      }
      return "ok";
    }));
    assertThat(leaf).hasValue(3);
    assertThat(innerBudget.tokens()).isEqualTo(28.1); // two retries spent, one success deposited
    assertThat(outerBudget.tokens()).isEqualTo(30.0); // full: its single attempt succeeded
    assertThat(nested).hasSize(1);
  }

  @Test
  void cancellingAnAsyncCallCancelsTheAttemptInFlightAndStartsNoOther() {
    AtomicInteger attempts = new AtomicInteger();
    List<CompletableFuture<String>> started = new ArrayList<>();
    CompletableFuture<Outcome<String>> outcome = Resilience.DEFAULT.withTimeSource(time).runAsync(attempt -> {
      attempts.incrementAndGet();
      CompletableFuture<String> f = new CompletableFuture<>();
      started.add(f);
      return f;
    });
    outcome.cancel(true);
    time.runUntilIdle(Duration.ofMinutes(5));
    assertThat(started).singleElement().satisfies(f -> assertThat(f).isCancelled());
    assertThat(attempts).hasValue(1);
    assertThat(time.pendingTimers()).as("no timer leaks").isZero();
  }

  @Test
  void asyncAttemptsRunInTheCallersContextWithTheirOwnEndAsDeadline() throws Exception {
    List<ResilienceContext> seen = new ArrayList<>();
    List<Duration> remaining = new ArrayList<>();
    ResilienceContext inbound = ResilienceContext.current().withDeadline(Duration.ofSeconds(2), time)
        .withCriticality(Criticality.SHEDDABLE_PLUS);
    CompletableFuture<String> f = inbound.call(() -> Resilience.DEFAULT.withTimeSource(time)
        .withAttemptTimeout(Duration.ofMillis(500)).executeAsync(attempt -> {
          seen.add(ResilienceContext.current());
          remaining.add(ResilienceContext.current().remaining().orElseThrow());
          return attempt.number() == 1 ? CompletableFuture.failedFuture(new IOException())
              : CompletableFuture.completedFuture("ok");
        }));
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(f).isCompletedWithValue("ok");
    assertThat(seen).hasSize(2);
    assertThat(remaining.get(0)).isEqualTo(Duration.ofMillis(500));
    assertThat(seen.get(1).criticality()).as("retries run in the caller's context").isEqualTo(Criticality.SHEDDABLE_PLUS);
    assertThat(remaining.get(1)).isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void attemptAwareWorkSeesItsNumberAndTimeLeft() throws Exception {
    List<Attempt> attempts = new ArrayList<>();
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.constant(Duration.ofSeconds(1)))
        .withDeadline(Duration.ofSeconds(5)).withAttemptTimeout(Duration.ofSeconds(2));
    p.execute(attempt -> {
      attempts.add(attempt);
      if (attempt.number() < 3) {
        throw new IOException();
      }
      return attempt.number();
    });
    assertThat(attempts).extracting(Attempt::number).containsExactly(1, 2, 3);
    assertThat(attempts).extracting(Attempt::isRetry).containsExactly(false, true, true);
    assertThat(attempts).extracting(Attempt::remaining)
        .containsExactly(Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofSeconds(3));
    assertThat(attempts.get(2).timeout()).isEqualTo(Duration.ofSeconds(2));
  }
}
