package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Driver.Result;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CriticalityAndDrainingTest {
  private final VirtualTime time = VirtualTime.create();

  @AfterEach
  void stopDraining() {
    Draining.resetForTests();
  }

  private Resilience policy(RetryBudget budget) {
    return Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(budget).withAmbientCriticality(true);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aSheddableRetryIsRefusedOnceTheBucketIsMoreThanHalfSpentWithTheOrdinaryRefusal(Driver driver) throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 1, time); // 10 tokens, floor 1/s
    for (int i = 0; i < 5; i++) {
      budget.trySpend();
    }
    budget.trySpend(); // 4 left: more than half spent
    ResilienceContext sheddable = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
    Result r = sheddable.call(() -> driver.run(policy(budget), time, fail(new IOException()), ok("v")));
    assertThat(r.reason).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(r.terminal().type()).isEqualTo(ResilienceEvent.Type.REJECTED_BY_BUDGET);
    assertThat(r.terminal().criticality()).isEqualTo(Criticality.SHEDDABLE);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(100));
    assertThat(r.thrown).isInstanceOf(CallRejectedException.class);

    Result critical = driver.run(policy(budget), time, fail(new IOException()), ok("v"));
    assertThat(critical.reason).as("critical work still retries").isEqualTo(StopReason.SUCCEEDED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aHealthyBudgetRefusesNobody(Driver driver) throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 3, time);
    ResilienceContext sheddable = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
    Result r = sheddable.call(() -> driver.run(policy(budget), time, fail(new IOException()), ok("v")));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void withoutUseAmbientCriticalityTheLabelIsIgnored(Driver driver) throws Exception {
    RetryBudget budget = RetryBudget.of(0.1, 1, time);
    for (int i = 0; i < 8; i++) {
      budget.trySpend();
    }
    ResilienceContext sheddable = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
    Result r = sheddable.call(() -> driver.run(policy(budget).withAmbientCriticality(false), time,
        fail(new IOException()), ok("v")));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
  }

  @Test
  void validationRejectsAmbientCriticalityWhereItCanHaveNoEffect() {
    assertThat(org.assertj.core.api.Assertions.catchThrowable(
        () -> Resilience.DEFAULT.with(s -> s.useAmbientCriticality(true).budget(RetryBudget.NONE))))
        .isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("useAmbientCriticality was true: has no effect without a budget");
  }

  @Test
  void drainingLatchesOnceTheFirstCallWins() {
    assertThat(Draining.begin(Duration.ofSeconds(10), time)).isTrue();
    assertThat(Draining.begin(Duration.ofSeconds(99), time)).isFalse();
    time.advance(Duration.ofSeconds(4));
    assertThat(Draining.graceLeft()).contains(Duration.ofSeconds(6));
    assertThat(Draining.isDraining()).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void whileDrainingNewCallsStartNoAttempt(Driver driver) {
    Resilience p = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE);
    Draining.begin(Duration.ofSeconds(1), time);
    Result during = driver.run(p, time);
    assertThat(during.reason).isEqualTo(StopReason.DRAINING);
    assertThat(during.attempts).isZero();
    assertThat(during.terminal().type()).isEqualTo(ResilienceEvent.Type.DRAINING);
  }

  @Test
  void drainingStopsTheRetryOfACallAlreadyInFlight() {
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE);
    CompletableFuture<String> attempt = new CompletableFuture<>();
    CompletableFuture<Outcome<String>> call = p.runAsync(a -> attempt);
    Draining.begin(Duration.ofSeconds(1), time);
    attempt.completeExceptionally(new IOException("failed during shutdown"));
    assertThat(call.join().stopReason()).isEqualTo(StopReason.DRAINING);
    assertThat(call.join().attempts()).isEqualTo(1);
  }

  @Test
  void anAttemptInFlightWhenDrainingBeginsMayStillSucceed() {
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBudget(RetryBudget.NONE);
    CompletableFuture<String> attempt = new CompletableFuture<>();
    CompletableFuture<Outcome<String>> call = p.runAsync(a -> attempt);
    Draining.begin(Duration.ofMillis(200), time);
    time.advance(Duration.ofMillis(50));
    attempt.complete("answered during the grace");
    assertThat(call.join().stopReason()).isEqualTo(StopReason.SUCCEEDED);
  }

  @Test
  void nestedWorkSeesTheDeadlineClampedToTheGraceLeft() throws Exception {
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBudget(RetryBudget.NONE);
    Duration seen = p.execute(() -> {
      Draining.begin(Duration.ofMillis(200), time);
      return ResilienceContext.current().remaining().orElseThrow();
    });
    assertThat(seen).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  @org.junit.jupiter.api.Timeout(30)
  void onTheRealClockASyncAttemptStillRunningWhenTheGraceEndsIsInterrupted() {
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withAttemptTimeout(Duration.ofMinutes(5));
    Outcome<Object> o = p.run(() -> {
      Draining.begin(Duration.ofMillis(30));
      new CountDownLatch(1).await(); // blocks until interrupted: hangs the test if the grace did not cut it off
      return "never";
    });
    assertThat(o.stopReason()).isEqualTo(StopReason.DRAINING);
    assertThat(o.attempts()).isEqualTo(1);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }
}
