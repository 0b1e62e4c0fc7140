package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.quell.AttemptTimeoutException;
import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceEvent.Type;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ChaosTest {

  private static final Supplier<IOException> CHAOS = () -> new IOException("chaos");

  @Test
  void offReturnsTheWorkUnchanged() {
    Callable<String> work = () -> "real";
    Supplier<CompletionStage<String>> asyncWork = () -> CompletableFuture.completedFuture("real");
    Resilience.AsyncWork<String> attemptWork = attempt -> CompletableFuture.completedFuture("real");
    Chaos configuredButOff = Chaos.seeded(7).failing(1.0, CHAOS).enabled(false);

    for (Chaos off : List.of(Chaos.OFF, Chaos.seeded(7), configuredButOff)) {
      assertThat(off.isActive()).isFalse();
      assertThat(off.wrap(work)).isSameAs(work);
      assertThat(off.wrapAsync(asyncWork)).isSameAs(asyncWork);
      assertThat(off.wrapAsync(attemptWork)).isSameAs(attemptWork);
    }
    assertThat(configuredButOff.enabled(true).isActive()).isTrue();
    assertThat(Chaos.OFF.toString()).isEqualTo("Chaos.OFF");
  }

  @Test
  void theSameSeedGivesTheSameFaultPattern() {
    assertThat(pattern(Chaos.seeded(7), 500)).isEqualTo(pattern(Chaos.seeded(7), 500));
    assertThat(pattern(Chaos.seeded(7), 500)).isNotEqualTo(pattern(Chaos.seeded(8), 500));
  }

  @Test
  void faultsAndDelaysComeAtTheirProbabilities() throws Exception {
    VirtualTime time = VirtualTime.create();
    Chaos chaos = Chaos.seeded(3)
        .failing(0.2, CHAOS)
        .failing(0.1, () -> new IllegalStateException("chaos"))
        .slowing(0.25, Duration.ofMillis(10), time);
    Callable<String> work = chaos.wrap(() -> "real");
    int io = 0;
    int state = 0;
    int n = 4000;
    for (int i = 0; i < n; i++) {
      try {
        work.call();
      } catch (IOException e) {
        io++;
      } catch (IllegalStateException e) {
        state++;
      }
    }

    // deterministic for the seed; the bounds are the expected shares, give or take a few standard deviations
    assertThat(io).isBetween(720, 880);
    assertThat(state).isBetween(340, 460);
    assertThat(chaos.injectedFaults()).isEqualTo(io + state);
    assertThat(chaos.injectedDelays()).isBetween(900L, 1100L);
    assertThat(chaos.attempts()).isEqualTo(n);
    assertThat(time.elapsed()).isEqualTo(Duration.ofMillis(10 * chaos.injectedDelays()));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void injectedFaultsAreClassifiedTransientAndChargedToTheBudget(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withBackoff(Backoff.NONE));
    RetryBudget budget = test.policy().budget();
    Chaos chaos = Chaos.seeded(11).failing(0.3, CHAOS);
    Callable<String> work = chaos.wrap(() -> "ok");
    Resilience.AsyncWork<String> asyncWork = chaos.wrapAsync(attempt -> CompletableFuture.completedFuture("ok"));
    double before = budget.tokens();

    for (int i = 0; i < 40; i++) {
      driver.run(test.policy(), test.time(), work, asyncWork);
    }

    EventRecorder events = test.events();
    List<ResilienceEvent> failed = new ArrayList<>();
    for (ResilienceEvent e : events.ofType(Type.ATTEMPT_ENDED)) {
      if (e.failure().isPresent()) {
        failed.add(e);
      }
    }
    assertThat(failed).hasSize((int) chaos.injectedFaults()).isNotEmpty();
    assertThat(failed).allSatisfy(e -> {
      assertThat(e.failure().orElseThrow()).hasMessage("chaos");
      assertThat(e.verdict()).contains(Verdict.TRANSIENT);
    });
    int retries = events.count(Type.RETRYING);
    assertThat(retries).isPositive();
    assertThat(budget.tokens()).isLessThan(before);
    // exact accounting: replay the events through a bucket of the same shape (micro-tokens, capped)
    long micros = Math.round(before * 1_000_000);
    long capacity = Math.round(budget.capacity() * 1_000_000);
    for (ResilienceEvent e : events.events()) {
      if (e.type() == Type.RETRYING) {
        micros -= 1_000_000;
      } else if (e.type() == Type.ATTEMPT_ENDED && e.verdict().orElseThrow() == Verdict.OK) {
        micros = Math.min(capacity, micros + 100_000);
      }
    }
    assertThat(budget.tokens()).isCloseTo(micros / 1e6, within(1e-9));
    assertThat(events.terminals()).hasSize(40);
  }

  @Test
  void aFaultThePolicyCallsPermanentIsNotRetriedNorCharged() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    Chaos chaos = Chaos.seeded(1).failing(1.0, () -> new IllegalArgumentException("chaos"));
    double before = test.policy().budget().tokens();

    Outcome<String> outcome = test.policy().run(chaos.wrap(() -> "ok"));

    assertThat(outcome.stopReason()).isEqualTo(StopReason.PERMANENT);
    assertThat(outcome.attempts()).isEqualTo(1);
    assertThat(test.policy().budget().tokens()).isEqualTo(before);
    assertThat(test.events().terminal().type()).isEqualTo(Type.NOT_RETRIED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void injectedLatencyBeyondTheAttemptTimeoutTimesAttemptsOut(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT
        .withAttemptTimeout(Duration.ofMillis(200))
        .withBackoff(Backoff.constant(Duration.ofMillis(100))));
    Chaos chaos = Chaos.seeded(5).slowing(1.0, Duration.ofMillis(500), test.time());
    AtomicInteger reached = new AtomicInteger();

    Outcome<String> outcome = driver.run(test.policy(), test.time(),
        chaos.wrap(() -> "r" + reached.incrementAndGet()),
        chaos.wrapAsync(attempt -> CompletableFuture.completedFuture("r" + reached.incrementAndGet())));

    assertThat(outcome.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(outcome.failure()).containsInstanceOf(AttemptTimeoutException.class);
    assertThat(outcome.attempts()).isEqualTo(3);
    assertThat(reached).as("a slowed attempt cut off by its timeout never reaches the dependency").hasValue(0);
    assertThat(test.time().elapsed()).isEqualTo(Duration.ofMillis(3 * 200 + 2 * 100));
    assertThat(test.time().pendingTimers()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void injectedLatencyWithinTheTimeoutDelaysTheAnswer(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    Chaos chaos = Chaos.seeded(5).slowing(1.0, Duration.ofMillis(500), test.time());

    Outcome<String> outcome = driver.run(test.policy(), test.time(),
        chaos.wrap(() -> "real"),
        chaos.wrapAsync(attempt -> CompletableFuture.completedFuture("real")));

    assertThat(outcome.value()).isEqualTo("real");
    assertThat(outcome.elapsed()).isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void aSlowedAsyncAttemptRunsTheWorkAfterTheDelayAndCarriesFailures() {
    VirtualTime time = VirtualTime.create();
    Chaos chaos = Chaos.seeded(5).slowing(1.0, Duration.ofMillis(30), time);
    AtomicInteger started = new AtomicInteger();
    Supplier<? extends CompletionStage<String>> work = chaos.wrapAsync(() -> {
      started.incrementAndGet();
      return CompletableFuture.<String>failedFuture(new IOException("real failure"));
    });

    CompletableFuture<String> f = work.get().toCompletableFuture();
    assertThat(started).hasValue(0);
    time.advance(Duration.ofMillis(30));

    assertThat(started).hasValue(1);
    assertThat(f).isCompletedExceptionally();
    assertThatThrownBy(f::join).hasRootCauseMessage("real failure");
  }

  @Test
  void wrappedSuppliersServeExecuteAsync() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withBackoff(Backoff.NONE));
    Chaos chaos = Chaos.seeded(2).failing(1.0, CHAOS);
    AtomicInteger reached = new AtomicInteger();

    CompletableFuture<String> result = test.policy().executeAsync(chaos.wrapAsync(() -> {
      reached.incrementAndGet();
      return CompletableFuture.completedFuture("real");
    }));
    test.time().runUntilIdle(Duration.ofMinutes(1));

    assertThat(result).isCompletedExceptionally();
    assertThatThrownBy(result::join).hasRootCauseMessage("chaos");
    assertThat(reached).hasValue(0);
    assertThat(chaos.injectedFaults()).isEqualTo(3);
    assertThat(test.events().terminal().type()).isEqualTo(Type.EXHAUSTED);
  }

  @Test
  void concurrentCallersMeetTheSameSetOfFates() throws Exception {
    int threads = 8;
    int perThread = 500;
    Chaos sequential = Chaos.seeded(21).failing(0.35, CHAOS);
    Callable<String> once = sequential.wrap(() -> "ok");
    for (int i = 0; i < threads * perThread; i++) {
      try {
        once.call();
      } catch (IOException expected) {
        // counted by the chaos
      }
    }

    Chaos concurrent = Chaos.seeded(21).failing(0.35, CHAOS);
    Callable<String> shared = concurrent.wrap(() -> "ok");
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          go.await();
          for (int i = 0; i < perThread; i++) {
            try {
              shared.call();
            } catch (IOException expected) {
              // counted by the chaos
            }
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(1, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(concurrent.injectedFaults()).isEqualTo(sequential.injectedFaults());
  }

  @Test
  void rulesAreValidated() {
    assertThatThrownBy(() -> Chaos.seeded(1).failing(1.5, CHAOS))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("probability").hasMessageContaining("1.5")
        .hasMessageContaining("[0, 1]");
    assertThatThrownBy(() -> Chaos.seeded(1).failing(Double.NaN, CHAOS))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NaN");
    assertThatThrownBy(() -> Chaos.seeded(1).failing(0.6, CHAOS).failing(0.6, CHAOS))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 1");
    assertThatThrownBy(() -> Chaos.seeded(1).slowing(0.5, Duration.ofMillis(-5), VirtualTime.create()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delay");
    assertThat(Chaos.seeded(1).failing(0.5, CHAOS).failing(0.5, CHAOS).isActive()).isTrue();
    assertThat(Chaos.seeded(9).failing(0.5, CHAOS).toString()).contains("seed=9").contains("p=0.5");
  }

  @Test
  void aFaultSupplierThatReturnsNullIsReported() {
    Callable<String> work = Chaos.seeded(1).failing(1.0, () -> null).wrap(() -> "ok");

    assertThatThrownBy(work::call).isInstanceOf(NullPointerException.class).hasMessageContaining("fault supplier");
  }

  private static List<Boolean> pattern(Chaos seeded, int n) {
    Callable<String> work = seeded.failing(0.2, CHAOS).wrap(() -> "ok");
    List<Boolean> failed = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      try {
        work.call();
        failed.add(false);
      } catch (Exception e) {
        failed.add(true);
      }
    }
    return failed;
  }
}
