package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Driver.Result;
import dev.quell.internal.HttpClassification;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One regression test per defect found when the core was tried under faults, cancellation and
 * hostile input (issue 8), each on every way a call runs — sync throw style, sync result style,
 * async, and the real-clock fast path without listeners — where the defect can arise there.
 */
class CoreRegressionTest {
  private final VirtualTime time = VirtualTime.create();

  @AfterEach
  void stopDraining() {
    Draining.resetForTests();
    Thread.interrupted();
  }

  private static Resilience noBudget() {
    return Resilience.DEFAULT.withBudget(RetryBudget.NONE);
  }

  // ---------------------------------------------------------------- durations from outside saturate

  @ParameterizedTest
  @EnumSource(Way.class)
  void aRetryAfterInTheYear9999EndsTheCallInsteadOfOverflowing(Way way) {
    Duration farFuture = HttpClassification.parseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", Instant.now());
    assertThat(farFuture).isNotNull();
    Resilience p = noBudget().withClassifier((r, f) -> f != null ? Verdict.throttled(farFuture) : Verdict.OK);
    Result r = way.run(p, time, fail(new IOException("busy")), ok("v"));
    // capped at the backoff's 30 s maximum, which does not fit before the 30 s deadline: fail now
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.attempts).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aHugeThrottledVerdictIsCappedByTheBackoffsMaximum(Way way) {
    Resilience p = noBudget().withoutDeadline()
        .withClassifier((r, f) -> f != null ? Verdict.throttled(ChronoUnit.FOREVER.getDuration()) : Verdict.OK);
    Result r = way.run(p, time, fail(new IOException("busy")), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.elapsed).isEqualTo(Duration.ofSeconds(30));
  }

  @ParameterizedTest
  @EnumSource(Way.class)
  void aHugeConstantBackoffFailsNowAtTheDeadlineInsteadOfOverflowing(Way way) {
    Resilience p = noBudget().withBackoff(Backoff.constant(Duration.ofSeconds(Long.MAX_VALUE)));
    Result r = way.run(p, time, fail(new IOException("down")), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.attempts).isEqualTo(1);
  }

  @Test
  void aConstantBackoffLongerThanThirtySecondsIsNotCutShort() {
    Resilience p = noBudget().withoutDeadline().withBackoff(Backoff.constant(Duration.ofMinutes(2)));
    Result r = Driver.RUN.run(p, time, fail(new IOException("down")), ok("v"));
    assertThat(r.elapsed).isEqualTo(Duration.ofMinutes(2));
  }

  @Test
  void hugeDurationsInConfigurationMeanNoLimit() {
    Resilience forever = Resilience.DEFAULT.withDeadline(ChronoUnit.FOREVER.getDuration())
        .withAttemptTimeout(Duration.ofSeconds(Long.MAX_VALUE));
    Result r = Driver.RUN.run(forever.withBudget(RetryBudget.NONE), time, fail(new IOException()), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(ResilienceContext.EMPTY.withDeadline(ChronoUnit.FOREVER.getDuration()).hasDeadline()).isFalse();
    assertThat(ResilienceContext.EMPTY.withDeadline(Duration.ofSeconds(Long.MAX_VALUE), time).hasDeadline()).isFalse();
    assertThat(RetryBudget.replenishing(3, ChronoUnit.FOREVER.getDuration(), time).trySpend()).isTrue();
    assertThat(Backoff.exponential().withMax(ChronoUnit.FOREVER.getDuration()).max())
        .isEqualTo(ChronoUnit.FOREVER.getDuration());
    // a base too long for milliseconds above the default 30 s max: named in the error, not an overflow
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("backoff max was 30000 ms: must not be less than transientBase (forever)");
  }

  @Test
  void nullArgumentsAreNamedInsteadOfTurningALimitOff() {
    assertThatThrownBy(() -> Resilience.DEFAULT.withDeadline(null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("deadline was null");
    assertThatThrownBy(() -> Resilience.DEFAULT.withAttemptTimeout(null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("attemptTimeout was null");
    assertThatThrownBy(() -> Resilience.DEFAULT.withBackoff(null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("backoff");
    assertThatThrownBy(() -> Backoff.constant(null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("backoff delay was null");
    assertThatThrownBy(() -> ResilienceContext.EMPTY.withDeadline(null)).hasMessageContaining("timeout");
  }

  // ---------------------------------------------------------------- user code that misbehaves

  @ParameterizedTest
  @EnumSource(Way.class)
  void aBackoffThatThrowsEndsTheCallOnceWithTheLastFailure(Way way) {
    IOException failure = new IOException("down");
    Resilience p = noBudget().withBackoff(Backoff.of((retry, verdict) -> {
      throw new IllegalStateException("broken backoff");
    }));
    Result r;
    List<String> warnings;
    try (CapturedWarnings log = CapturedWarnings.of("dev.quell.Resilience")) {
      r = way.run(p, time, fail(failure), ok("v"));
      warnings = log.messages();
    }
    if (way != Way.FAST) {
      assertThat(r.reason).isEqualTo(StopReason.PERMANENT);
    }
    assertThat(r.thrown).isSameAs(failure);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(warnings).singleElement().asString().startsWith("quell.policy.misbehaving: policy 'default': backoff")
        .contains("threw java.lang.IllegalStateException: broken backoff; the call stops retrying");
  }

  @ParameterizedTest
  @EnumSource(Way.class)
  void aBackoffThatReturnsNullEndsTheCallOnceWithTheLastFailure(Way way) {
    IOException failure = new IOException("down");
    Resilience p = noBudget().withBackoff(Backoff.of((retry, verdict) -> null));
    Result r;
    List<String> warnings;
    try (CapturedWarnings log = CapturedWarnings.of("dev.quell.Resilience")) {
      r = way.run(p, time, fail(failure), ok("v"));
      warnings = log.messages();
    }
    assertThat(r.thrown).isSameAs(failure);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(warnings).singleElement().asString().endsWith("returned null; the call stops retrying");
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void backoffOfKeepsItsPromisedThirtySecondCap(Way way) {
    Resilience p = noBudget().withoutDeadline().withBackoff(Backoff.of((retry, verdict) -> Duration.ofHours(1)));
    Result r = way.run(p, time, fail(new IOException()), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.elapsed).isEqualTo(Duration.ofSeconds(30));
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aListenerThatThrowsOnEveryEventNeverBreaksTheCall(Way way) {
    Resilience p = noBudget().withBackoff(Backoff.NONE).withListener(e -> {
      throw new IllegalStateException("listener bug");
    });
    Result r = way.run(p, time, fail(new IOException()), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("v");
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aListenerThatCancelsTheCallFromInsideAnEventCannotCorruptIt(Way way) {
    AtomicReference<CompletableFuture<?>> future = new AtomicReference<>();
    AtomicInteger terminals = new AtomicInteger();
    List<ResilienceEvent.Type> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    Resilience p = noBudget().withBackoff(Backoff.constant(Duration.ofMillis(10))).withTimeSource(time)
        .withListener(e -> {
          seen.add(e.type());
          if (e.isTerminal()) {
            terminals.incrementAndGet();
          }
          if (e.type() == ResilienceEvent.Type.RETRYING) {
            CompletableFuture<?> f = future.get();
            if (f != null) {
              f.cancel(true); // re-enters the call from its own event
            } else {
              Thread.currentThread().interrupt(); // the sync caller's way to cancel
            }
          }
        });
    if (way == Way.ASYNC) {
      CompletableFuture<Object> f = new CompletableFuture<>();
      future.set(f);
      CompletableFuture<String> call = p.executeAsync(() -> CompletableFuture.failedFuture(new IOException()));
      future.set(call);
      time.runUntilIdle(Duration.ofMinutes(1));
      assertThat(call).isDone();
    } else {
      Outcome<Object> o = p.run(() -> {
        throw new IOException();
      });
      Thread.interrupted();
      assertThat(o.stopReason()).isIn(StopReason.CANCELLED, StopReason.ATTEMPTS_EXHAUSTED);
    }
    assertThat(terminals).hasValue(1);
    assertThat(seen.get(seen.size() - 1).isTerminal()).isTrue();
  }

  // ---------------------------------------------------------------- async: the caller ends the call

  @Test
  void completingTheReturnedFutureStopsTheCallAndItsAttempt() {
    List<ResilienceEvent> events = new ArrayList<>();
    RetryBudget budget = RetryBudget.of(0.1, 3, time);
    double before = budget.tokens();
    CompletableFuture<String> attempt = new CompletableFuture<>();
    AtomicInteger started = new AtomicInteger();
    CompletableFuture<String> call = Resilience.DEFAULT.withTimeSource(time).withBudget(budget)
        .withListener(events::add).executeAsync(() -> {
          started.incrementAndGet();
          return attempt;
        });
    assertThat(call.complete("mine")).isTrue();
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(call.join()).isEqualTo("mine");
    assertThat(attempt).as("the attempt in flight is cancelled").isCancelled();
    assertThat(started).hasValue(1);
    assertThat(budget.tokens()).as("no retry charged").isEqualTo(before);
    assertThat(events.stream().filter(ResilienceEvent::isTerminal).map(ResilienceEvent::type))
        .containsExactly(ResilienceEvent.Type.CANCELLED);
  }

  @Test
  void orTimeoutOnTheReturnedFutureStopsTheCall() throws Exception {
    CompletableFuture<String> attempt = new CompletableFuture<>();
    CountDownLatch ended = new CountDownLatch(1);
    AtomicInteger started = new AtomicInteger();
    CompletableFuture<String> call = Resilience.DEFAULT.withListener(e -> {
      if (e.isTerminal()) {
        ended.countDown();
      }
    }).executeAsync(() -> {
      started.incrementAndGet();
      return attempt;
    }).orTimeout(1, TimeUnit.MILLISECONDS);
    assertThatThrownBy(call::join).hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
    assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(attempt.isCancelled()).isTrue();
    assertThat(started).hasValue(1);
  }

  @Test
  void cancelReturnsTrueOnlyWhenTheCallEndsCancelled() {
    List<ResilienceEvent> events = new ArrayList<>();
    CompletableFuture<String> attempt = new CompletableFuture<>();
    CompletableFuture<String> call = Resilience.DEFAULT.withTimeSource(time).withListener(events::add)
        .executeAsync(() -> attempt);
    assertThat(call.cancel(true)).isTrue();
    assertThat(call).isCancelled();
    assertThat(events.get(events.size() - 1).type()).isEqualTo(ResilienceEvent.Type.CANCELLED);

    List<ResilienceEvent> done = new ArrayList<>();
    CompletableFuture<String> succeeded = Resilience.DEFAULT.withTimeSource(time).withListener(done::add)
        .executeAsync(() -> CompletableFuture.completedFuture("v"));
    assertThat(succeeded.cancel(true)).isFalse();
    assertThat(succeeded.join()).isEqualTo("v");
  }

  @Test
  @Timeout(60)
  void aCancelRacingTheStartOfARetryNeverStartsWorkAfterTheTerminalEvent() throws Exception {
    for (int round = 0; round < 300; round++) {
      AtomicBoolean terminal = new AtomicBoolean();
      AtomicBoolean workAfterTerminal = new AtomicBoolean();
      AtomicReference<Boolean> cancelled = new AtomicReference<>();
      AtomicReference<ResilienceEvent.Type> terminalType = new AtomicReference<>();
      CountDownLatch ended = new CountDownLatch(1);
      Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withBackoff(Backoff.NONE).withAttempts(50)
          .withListener(e -> {
            if (e.isTerminal()) {
              terminalType.set(e.type());
              terminal.set(true);
              ended.countDown();
            }
          });
      CompletableFuture<String> call = p.executeAsync(() -> {
        if (terminal.get()) {
          workAfterTerminal.set(true);
        }
        return CompletableFuture.supplyAsync(() -> {
          throw new java.io.UncheckedIOException(new IOException("flaky"));
        });
      });
      Thread canceller = new Thread(() -> cancelled.set(call.cancel(true)));
      canceller.start();
      canceller.join();
      try {
        call.get(10, TimeUnit.SECONDS);
      } catch (ExecutionException | java.util.concurrent.CancellationException expected) {
        // either way
      }
      // the terminal event may be delivered a moment after cancel() returns; then let any straggler run
      assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
      ForkJoinPoolQuiescence.await();
      assertThat(workAfterTerminal).as("round %d", round).isFalse();
      if (Boolean.TRUE.equals(cancelled.get())) {
        assertThat(terminalType.get()).isEqualTo(ResilienceEvent.Type.CANCELLED);
      }
    }
  }

  /** Waits until the common pool has nothing running (the async driver hands timer work to it). */
  static final class ForkJoinPoolQuiescence {
    static void await() {
      java.util.concurrent.ForkJoinPool.commonPool().awaitQuiescence(10, TimeUnit.SECONDS);
    }
  }

  // ---------------------------------------------------------------- async: stack and threads

  @Test
  @Timeout(60)
  void aThousandImmediateAsyncFailuresDoNotGrowTheStack() {
    AtomicInteger depth = new AtomicInteger();
    AtomicInteger firstDepth = new AtomicInteger();
    AtomicInteger maxDepth = new AtomicInteger();
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withBackoff(Backoff.NONE).withAttempts(1000)
        .withoutDeadline().withTimeSource(time);
    CompletableFuture<String> call = p.executeAsync(() -> {
      int d = Thread.currentThread().getStackTrace().length;
      firstDepth.compareAndSet(0, d);
      maxDepth.accumulateAndGet(d, Math::max);
      depth.incrementAndGet();
      return CompletableFuture.failedFuture(new IOException("at once"));
    });
    assertThat(call).isCompletedExceptionally();
    assertThat(depth).hasValue(1000);
    assertThat(maxDepth.get()).as("stack depth stays flat").isLessThanOrEqualTo(firstDepth.get() + 5);
  }

  @Test
  @Timeout(60)
  void userWorkNeverRunsOnTheSharedTimerThread() throws Exception {
    List<String> threads = java.util.Collections.synchronizedList(new ArrayList<>());
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withBackoff(Backoff.constant(Duration.ofMillis(1)))
        .withAttemptTimeout(Duration.ofMillis(20)).withAttempts(4);
    CompletableFuture<String> call = p.executeAsync(() -> {
      threads.add(Thread.currentThread().getName());
      return threads.size() < 3 ? new CompletableFuture<>() : CompletableFuture.completedFuture("v"); // two hang
    });
    List<String> dependents = java.util.Collections.synchronizedList(new ArrayList<>());
    assertThat(call.thenApply(v -> {
      dependents.add(Thread.currentThread().getName());
      return v;
    }).get(10, TimeUnit.SECONDS)).isEqualTo("v");
    assertThat(threads).hasSize(3).noneMatch(n -> n.equals("quell-timer"));
    assertThat(dependents).noneMatch(n -> n.equals("quell-timer"));
  }

  // ---------------------------------------------------------------- interrupts

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN"})
  void theCallersInterruptWinsOverTheTimeoutOfAnAttemptThatIgnoredIt(Way way) {
    // the caller interrupts at 100 ms; the attempt ignores it (its flag stays set, as blocking
    // java.io leaves it) and runs on past its 1 s timeout, then fails
    Resilience p = noBudget().withAttemptTimeout(Duration.ofSeconds(1)).withBackoff(Backoff.NONE).withTimeSource(time);
    time.schedule(Thread.currentThread()::interrupt, Duration.ofMillis(100).toNanos());
    AtomicInteger attempts = new AtomicInteger();
    java.util.concurrent.Callable<String> ignoresInterrupts = () -> {
      attempts.incrementAndGet();
      time.advance(Duration.ofSeconds(5)); // runs the interrupt and the timeout, and does not stop for either
      throw new IOException("read ended at last");
    };
    Object thrown = null;
    try {
      if (way == Way.RUN) {
        assertThat(p.run(ignoresInterrupts).stopReason()).isEqualTo(StopReason.CANCELLED);
      } else {
        p.execute(ignoresInterrupts);
      }
    } catch (Exception e) {
      thrown = e;
    }
    assertThat(Thread.currentThread().isInterrupted()).as("the caller's interrupt is kept").isTrue();
    assertThat(attempts).as("no retry after the caller's interrupt").hasValue(1);
    if (way == Way.EXECUTE) {
      assertThat(thrown).isInstanceOf(InterruptedException.class);
    }
  }

  @Test
  @Timeout(30)
  void onTheRealClockTheCallersInterruptWinsOverTheWatchdog() throws Exception {
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withAttemptTimeout(Duration.ofMillis(50))
        .withBackoff(Backoff.NONE);
    AtomicInteger attempts = new AtomicInteger();
    Throwable thrown = null;
    try {
      p.execute(() -> {
        attempts.incrementAndGet();
        Thread.currentThread().interrupt(); // the caller cancels; the attempt keeps going regardless
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200); // past its timeout
        while (System.nanoTime() - until < 0) {
          Thread.onSpinWait();
        }
        throw new IOException("ignored the interrupt");
      });
    } catch (Exception e) {
      thrown = e;
    }
    assertThat(Thread.interrupted()).as("the caller's interrupt is kept").isTrue();
    assertThat(thrown).as("cancelled, not timed out and retried").isInstanceOf(InterruptedException.class)
        .hasCauseInstanceOf(IOException.class);
    assertThat(attempts).hasValue(1);
  }

  @ParameterizedTest
  @EnumSource(Way.class)
  void anInterruptedIoExceptionFromAClientTimeoutIsATransientFailureNotACancellation(Way way) {
    Result r = way.run(noBudget().withBackoff(Backoff.NONE), time, fail(new InterruptedIOException("timeout")),
        ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.attempts).isEqualTo(2);
    assertThat(Thread.currentThread().isInterrupted()).as("no interrupt flag set").isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN"})
  void anInterruptDuringTheBackoffChargesNothing(Way way) {
    RetryBudget budget = RetryBudget.of(0.1, 3, time);
    double full = budget.tokens();
    time.schedule(Thread.currentThread()::interrupt, Duration.ofMillis(50).toNanos());
    Result r = way.run(Resilience.DEFAULT.withBudget(budget).withBackoff(Backoff.constant(Duration.ofSeconds(1))),
        time, fail(new IOException()), ok("v"));
    Thread.interrupted();
    assertThat(r.reason).isEqualTo(StopReason.CANCELLED);
    assertThat(budget.tokens()).as("the retry that never started cost nothing").isEqualTo(full);
  }

  // ---------------------------------------------------------------- draining

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aCallWaitingOutItsBackoffEndsWhenTheGraceEndsNotWhenTheBackoffDoes(Way way) {
    Resilience p = noBudget().withBackoff(Backoff.constant(Duration.ofSeconds(20)));
    time.schedule(() -> Draining.begin(Duration.ofSeconds(1), time), Duration.ofSeconds(2).toNanos());
    Result r = way.run(p, time, fail(new IOException()), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.DRAINING);
    assertThat(r.elapsed).isEqualTo(Duration.ofSeconds(3));
    assertThat(r.attempts).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  @Timeout(30)
  void theFastPathAndRunCutOffARunningAttemptAtTheEndOfTheGraceAlike(boolean fastPath) throws Exception {
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withoutAttemptTimeout();
    CountDownLatch running = new CountDownLatch(1);
    java.util.concurrent.Callable<String> blocks = () -> {
      running.countDown();
      new CountDownLatch(1).await(); // until interrupted
      return "never";
    };
    AtomicReference<Object> result = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        result.set(fastPath ? p.execute(blocks) : p.run(blocks));
      } catch (Exception e) {
        result.set(e);
      }
    });
    caller.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    Draining.begin(Duration.ofMillis(20));
    caller.join(TimeUnit.SECONDS.toMillis(20));
    assertThat(caller.isAlive()).as("the grace ended the attempt").isFalse();
    if (fastPath) {
      assertThat(result.get()).isInstanceOfSatisfying(CallRejectedException.class,
          e -> assertThat(e.reason()).isEqualTo(StopReason.DRAINING));
    } else {
      assertThat(result.get()).isInstanceOfSatisfying(Outcome.class,
          o -> assertThat(o.stopReason()).isEqualTo(StopReason.DRAINING));
    }
  }

  // ---------------------------------------------------------------- criticality reserves

  @ParameterizedTest
  @EnumSource(Way.class)
  void aFullBudgetOfOneTokenFundsASheddableRetry(Way way) throws Exception {
    for (RetryBudget budget : List.of(RetryBudget.of(0.5, 0, time), RetryBudget.replenishing(1, Duration.ofMinutes(1),
        time), RetryBudget.feedback(), RetryBudget.of(0.1, 0.05, time))) {
      ResilienceContext sheddable = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
      Resilience p = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(budget).withAmbientCriticality(true);
      Result r = sheddable.call(() -> way.run(p, time, fail(new IOException()), ok("v")));
      assertThat(r.reason).as("healthy, nothing is refused: %s", budget).isEqualTo(StopReason.SUCCEEDED);
    }
  }

  @Test
  void theRetryAfterOfAReserveRefusalAccountsForTheReserve() throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 1, time); // 10 tokens, one a second
    for (int i = 0; i < 6; i++) {
      assertThat(budget.trySpend()).isTrue();
    }
    // 4 left: a CRITICAL retry is funded now; a SHEDDABLE one needs 1 + 0.5 × 9 = 5.5, 1.5 s away
    ResilienceContext sheddable = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
    Outcome<Object> o = sheddable.call(() -> Resilience.DEFAULT.withTimeSource(time).withBudget(budget)
        .withAmbientCriticality(true).run(() -> {
          throw new IOException();
        }));
    assertThat(o.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(o.retryAfter()).contains(Duration.ofMillis(1500));
  }

  @Test
  void whenTheServersRetryAfterIsLaterThanTheBudgetsTheLaterOneIsReported() throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 1, time);
    while (budget.trySpend()) {
      // drain it
    }
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBudget(budget)
        .withClassifier((r, f) -> f != null ? Verdict.throttled(Duration.ofSeconds(7)) : Verdict.OK);
    Outcome<Object> o = p.run(() -> {
      throw new IOException("429");
    });
    assertThat(o.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(o.retryAfter()).contains(Duration.ofSeconds(7));
  }

  // ---------------------------------------------------------------- the clock

  @ParameterizedTest
  @ValueSource(longs = {Long.MAX_VALUE - 1_000_000_000L, Long.MIN_VALUE + 1, -1_000_000_000L})
  void clockReadingsNearTheEndsOfLongWork(long origin) throws Exception {
    TimeSource shifted = new ShiftedTime(time, origin);
    Resilience unbounded = noBudget().withTimeSource(shifted).withoutDeadline()
        .withBackoff(Backoff.constant(Duration.ofSeconds(2)));
    AtomicInteger calls = new AtomicInteger();
    java.util.concurrent.Callable<String> failOnce = () -> {
      if (calls.getAndIncrement() % 2 == 0) {
        throw new IOException();
      }
      return "v";
    };
    assertThat(unbounded.run(failOnce).stopReason()).as("no deadline: never deadline exceeded")
        .isEqualTo(StopReason.SUCCEEDED);
    assertThat(unbounded.execute(failOnce)).isEqualTo("v");
    CompletableFuture<Outcome<String>> async = unbounded.runAsync(a -> calls.getAndIncrement() % 2 == 0
        ? CompletableFuture.failedFuture(new IOException()) : CompletableFuture.completedFuture("v"));
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(async.join().stopReason()).isEqualTo(StopReason.SUCCEEDED);

    Outcome<String> bounded = noBudget().withTimeSource(shifted).withDeadline(Duration.ofSeconds(3))
        .withBackoff(Backoff.constant(Duration.ofSeconds(2))).run(() -> {
          throw new IOException();
        });
    assertThat(bounded.stopReason()).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(bounded.attempts()).isEqualTo(2);
    ResilienceContext c = ResilienceContext.EMPTY.withDeadline(Duration.ofSeconds(5), shifted);
    assertThat(c.remaining()).contains(Duration.ofSeconds(5));
  }

  /** A clock that reads {@code origin} plus a virtual clock's time: only differences mean anything. */
  static final class ShiftedTime implements TimeSource {
    private final VirtualTime base;
    private final long origin;

    ShiftedTime(VirtualTime base, long origin) {
      this.base = base;
      this.origin = origin;
    }

    @Override
    public long nanoTime() {
      return origin + base.nanoTime();
    }

    @Override
    public void sleep(long nanos) throws InterruptedException {
      base.sleep(nanos);
    }

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
      return base.schedule(task, delayNanos);
    }
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aClockThatCannotScheduleLeavesNoStaleAmbientDeadline(Way way) throws Exception {
    TimeSource broken = new TimeSource() {
      @Override
      public long nanoTime() {
        return time.nanoTime();
      }

      @Override
      public void sleep(long nanos) throws InterruptedException {
        time.sleep(nanos);
      }

      @Override
      public Scheduled schedule(Runnable task, long delayNanos) {
        throw new IllegalStateException("no timers here");
      }
    };
    Resilience p = noBudget().withTimeSource(broken).withAttempts(1);
    if (way == Way.ASYNC) {
      CompletableFuture<String> f = p.executeAsync(() -> CompletableFuture.completedFuture("v"));
      assertThat(f).isCompletedExceptionally(); // the attempt could not be timed: it fails, clearly
    } else if (way == Way.RUN) {
      assertThat(p.run(() -> "v").failure()).get().isInstanceOf(IllegalStateException.class);
    } else {
      assertThatThrownBy(() -> p.execute(() -> "v")).hasMessage("no timers here");
    }
    assertThat(ResilienceContext.current().hasDeadline()).as("no stale ambient deadline").isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void nestedCallsSeeTheSameAmbientDeadlineWhicheverDriverRunsTheOuterCall(Way way) throws Exception {
    Resilience outer = noBudget().withDeadline(Duration.ofSeconds(1)).withAttemptTimeout(Duration.ofMillis(400))
        .withTimeSource(time);
    AtomicReference<Optional<Duration>> seen = new AtomicReference<>();
    AtomicReference<Criticality> label = new AtomicReference<>();
    ResilienceContext labelled = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE_PLUS);
    labelled.call(() -> {
      if (way == Way.ASYNC) {
        outer.executeAsync(() -> {
          seen.set(ResilienceContext.current().remaining());
          label.set(ResilienceContext.current().criticality());
          return CompletableFuture.completedFuture("v");
        }).join();
      } else {
        Resilience.Work<String> work = a -> {
          seen.set(ResilienceContext.current().remaining());
          label.set(ResilienceContext.current().criticality());
          return "v";
        };
        if (way == Way.RUN) {
          outer.run(work);
        } else {
          outer.execute(work);
        }
      }
      return null;
    });
    assertThat(seen.get()).contains(Duration.ofMillis(400));
    assertThat(label.get()).isEqualTo(Criticality.SHEDDABLE_PLUS);
  }

  @Test
  void onTheRealClockTheFastPathPublishesTheAttemptsEndToo() throws Exception {
    Resilience outer = noBudget().withDeadline(Duration.ofSeconds(10)).withAttemptTimeout(Duration.ofSeconds(5));
    Duration seen = outer.execute(() -> ResilienceContext.current().remaining().orElseThrow());
    // measured on the real clock by the watchdog's sighting: never more than the attempt timeout
    assertThat(seen).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5));
  }

  // ---------------------------------------------------------------- inbound headers

  @ParameterizedTest
  @ValueSource(strings = {"１２３", "١٢٣", "१२३", "12３"})
  void onlyAsciiDigitsMakeAnInboundDeadline(String value) {
    assertThat(ResilienceContext.parseDeadline(value)).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"crıtıcal", "ſheddable", "SHEDDABLE\u0130", "ｃｒｉｔｉｃａｌ"})
  void onlyAsciiLettersMakeAnInboundCriticality(String value) {
    assertThat(ResilienceContext.parseCriticality(value)).isNull();
  }

  @Test
  void asciiHeadersStillParse() {
    assertThat(ResilienceContext.parseDeadline("250")).isEqualTo(Duration.ofMillis(250));
    assertThat(ResilienceContext.parseCriticality("sheddable-plus")).isEqualTo(Criticality.SHEDDABLE_PLUS);
  }
}
