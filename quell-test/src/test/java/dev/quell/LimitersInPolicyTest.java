package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Driver.Result;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Limiters as the policy's gates after the breaker, on every way a call runs. */
class LimitersInPolicyTest {
  private final VirtualTime time = VirtualTime.create();

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aRateLimiterRefusesWithLimitedAfterTheGuardedPauseAndSaysWhenToComeBack(Way way) {
    Limiter rate = Limiter.rate(1, 1, time); // one a second, burst of one
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withLimiter(rate);
    assertThat(way.run(p, time, ok("first")).reason).isEqualTo(StopReason.SUCCEEDED);
    Result refused = way.run(p, time, ok("never"));
    assertThat(refused.reason).isEqualTo(StopReason.LIMITED);
    assertThat(refused.attempts).isZero();
    assertThat(refused.elapsed).isEqualTo(Duration.ofMillis(100));
    assertThat(refused.terminal().type()).isEqualTo(ResilienceEvent.Type.LIMITED);
    assertThat(refused.thrown).isInstanceOfSatisfying(RateLimitedException.class,
        e -> assertThat(e.retryAfter()).contains(Duration.ofSeconds(1)));
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aBoundedWaitStartsTheAttemptWhenItsPermitIsDue(Way way) {
    Limiter rate = Limiter.rate(10, 1, Duration.ofMillis(500), time); // one every 100 ms
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withLimiter(rate);
    way.run(p, time, ok("first"));
    Result waited = way.run(p, time, ok("second"));
    assertThat(waited.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(waited.elapsed).isEqualTo(Duration.ofMillis(100));
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aLimiterRefusalChargesNoBudgetAndIsNoFailureToTheBreaker(Way way) {
    Limiter bulkhead = Limiter.concurrency(1);
    CircuitBreaker breaker = CircuitBreaker.of("dep", CircuitBreaker.Config.DEFAULT.withMinimumCalls(1), time);
    RetryBudget budget = RetryBudget.of(0.1, 0, time);
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE).withBudget(budget)
        .withBreaker(breaker).withLimiter(bulkhead);
    // hold the only permit with an async call that never answers
    CompletableFuture<String> holder = Resilience.DEFAULT.withTimeSource(time).withAttempts(1).withLimiter(bulkhead)
        .withoutAttemptTimeout().withoutDeadline().executeAsync(CompletableFuture::new);
    double tokens = budget.tokens();
    Result r = way.run(p, time, ok("never"));
    assertThat(r.reason).isEqualTo(StopReason.LIMITED);
    assertThat(budget.tokens()).isEqualTo(tokens);
    assertThat(breaker.metrics().calls()).isZero();
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    holder.cancel(true);
    assertThat(bulkhead.inFlight()).as("the cancelled call gave its permit back").isZero();
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void everyPermitComesBackOnEveryExitPath(Way way) {
    Limiter bulkhead = Limiter.concurrency(5);
    Limiter adaptive = Limiter.adaptive();
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE)
        .withAttemptTimeout(Duration.ofMillis(50)).withLimiter(bulkhead).withLimiter(adaptive);
    way.run(p, time, fail(new IOException()), ok("late").after(Duration.ofSeconds(1)), fail(new IllegalStateException()));
    way.run(p, time, ok("v"));
    assertThat(bulkhead.inFlight()).isZero();
    assertThat(adaptive.inFlight()).isZero();
  }

  @Test
  void rateLimitersAreAskedBeforeBulkheadsWhateverTheOrderGiven() {
    Limiter bulkhead = Limiter.concurrency(1);
    Limiter rate = Limiter.rate(1, 1, time);
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withLimiter(bulkhead).withLimiter(rate);
    assertThat(p.limiters()).containsExactly(bulkhead, rate);
    p.run(() -> "first");
    Outcome<String> refused = p.run(() -> "second");
    assertThat(refused.stopReason()).isEqualTo(StopReason.LIMITED);
    assertThat(bulkhead.inFlight()).as("the rate limiter refused before the bulkhead took a permit").isZero();
  }

  @Test
  void eachScopeKeyLearnsItsOwnAdaptiveLimitAndSharesTheRest() {
    Limiter adaptive = Limiter.adaptive();
    Limiter bulkhead = Limiter.concurrency(10);
    PolicyScope<String> scope = PolicyScope.of(Resilience.DEFAULT.withName("catalog").withLimiter(adaptive)
        .withLimiter(bulkhead));
    Resilience a = scope.policy("a");
    Resilience b = scope.policy("b");
    assertThat(scope.adaptiveLimits()).containsOnlyKeys("a", "b");
    assertThat(scope.adaptiveLimits().get("a")).isNotSameAs(adaptive).isNotSameAs(scope.adaptiveLimits().get("b"));
    assertThat(scope.adaptiveLimits().get("a").name()).isEqualTo("catalog:a");
    assertThat(a.limiters()).contains(bulkhead);
    assertThat(b.limiters()).contains(bulkhead);
  }

  @Test
  void aRateLimiterOnAnotherClockIsAConfigurationError() {
    assertThatThrownBy(() -> Resilience.DEFAULT.withLimiter(Limiter.rate(5, 5, time)))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("limiter was");
  }
}
