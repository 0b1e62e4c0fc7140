package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Driver.Result;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** The circuit breaker as the policy's first gate, on every way a call runs. */
class BreakerInPolicyTest {
  private final VirtualTime time = VirtualTime.create();

  private static final CircuitBreaker.Config TRIPS_FAST = CircuitBreaker.Config.DEFAULT
      .withMinimumCalls(2).withFailureRate(0.5).withBreakDuration(Duration.ofSeconds(5)).withRamp(Duration.ZERO);

  private Resilience policy() {
    return Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE).withBreaker(TRIPS_FAST);
  }

  /**
   * The drivers build a copy of the policy for each run (with its listener), and a breaker given as
   * configuration belongs to each copy: tests that look at one breaker across runs share a live one.
   */
  private Resilience sharing(CircuitBreaker.Config config) {
    return Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE)
        .withBreaker(CircuitBreaker.of("dependency", config, time));
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void anOpenBreakerRefusesTheFirstAttemptWithTheGuardedPauseAndItsRetryAfter(Way way) {
    Resilience p = sharing(TRIPS_FAST).withBudget(RetryBudget.NONE);
    Result opened = way.run(p, time, fail(new IOException()), fail(new IOException()), fail(new IOException()));
    assertThat(opened.ofType(ResilienceEvent.Type.BREAKER_TRANSITION)).singleElement()
        .satisfies(e -> assertThat(e.breakerState()).contains(CircuitBreaker.State.OPEN));
    assertThat(opened.reason).as("its own retry was refused").isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);

    Result refused = way.run(p, time, ok("never"));
    assertThat(refused.reason).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    assertThat(refused.attempts).isZero();
    assertThat(refused.elapsed).as("the guarded pause, as for a refused retry").isEqualTo(Duration.ofMillis(100));
    assertThat(refused.terminal().type()).isEqualTo(ResilienceEvent.Type.REJECTED_BY_BREAKER);
    assertThat(refused.thrown).isInstanceOfSatisfying(CallRejectedException.class, e -> {
      assertThat(e.reason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
      assertThat(e.retryAfter()).get().satisfies(d -> assertThat(d).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5)));
    });
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void aBreakerRefusalIsNeverChargedToTheBudget(Way way) {
    RetryBudget budget = RetryBudget.of(0.1, 0, time);
    Resilience p = sharing(TRIPS_FAST).withBudget(budget);
    p.breaker().orElseThrow().isolate();
    double before = budget.tokens();
    Result r = way.run(p, time, ok("never"));
    assertThat(r.reason).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    assertThat(budget.tokens()).isEqualTo(before);
    assertThat(p.breaker().orElseThrow().metrics().calls()).as("refusals are not counted as calls").isZero();
  }

  @Test
  void theBreakerCountsEveryAttemptTheDependencySaw() {
    Resilience p = sharing(CircuitBreaker.Config.DEFAULT.withMinimumCalls(100)).withBudget(RetryBudget.NONE);
    Result r = Driver.RUN.run(p, time, fail(new IOException()), fail(new IOException()), ok("v"));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    CircuitBreaker.Metrics m = p.breaker().orElseThrow().metrics();
    assertThat(m.calls()).isEqualTo(3);
    assertThat(m.failedCalls()).isEqualTo(2);
  }

  @Test
  void eachPolicyInstanceAndEachScopeKeyOwnsABreakerBuiltFromConfiguration() {
    Resilience a = policy();
    Resilience b = a.withName("other");
    assertThat(a.breaker()).isPresent();
    assertThat(a.breaker().orElseThrow()).isNotSameAs(b.breaker().orElseThrow());
    assertThat(a.breaker().orElseThrow().name()).isEqualTo(a.name());

    PolicyScope<String> byHost = PolicyScope.of(policy().withName("catalog"));
    byHost.policy("a.example");
    byHost.policy("b.example");
    Map<String, CircuitBreaker> breakers = byHost.breakers();
    assertThat(breakers).containsOnlyKeys("a.example", "b.example");
    assertThat(breakers.get("a.example")).isNotSameAs(breakers.get("b.example"));
    assertThat(breakers.get("a.example").name()).isEqualTo("catalog:a.example");
  }

  @Test
  void aLiveBreakerIsSharedByEveryKeyAndMustRunOnThePolicysClock() {
    CircuitBreaker shared = CircuitBreaker.of("inventory", TRIPS_FAST, time);
    PolicyScope<String> scope = PolicyScope.of(Resilience.DEFAULT.withTimeSource(time).withBreaker(shared));
    scope.policy("x");
    scope.policy("y");
    assertThat(scope.breakers().values()).containsOnly(shared);

    assertThatThrownBy(() -> Resilience.DEFAULT.withBreaker(shared))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("breaker was inventory");
  }

  @Test
  void equalityFollowsTheConfigurationNotTheLiveBreaker() {
    assertThat(Resilience.DEFAULT.withBreaker(TRIPS_FAST)).isEqualTo(Resilience.DEFAULT.withBreaker(TRIPS_FAST));
    assertThat(Resilience.DEFAULT.withBreaker(TRIPS_FAST)).isNotEqualTo(Resilience.DEFAULT);
  }

  @Test
  void onceIsTheSameInstanceForWorkThatMustNotBeRepeated() throws Exception {
    Resilience p = policy().withHedge(Hedge.after(Duration.ofMillis(10)));
    Resilience once = p.once();
    assertThat(once.attempts()).isEqualTo(1);
    assertThat(once.hedge()).isEmpty();
    assertThat(once.breaker().orElseThrow()).isSameAs(p.breaker().orElseThrow());
    assertThat(once.budget()).isSameAs(p.budget());
    assertThat(once.once()).isSameAs(once);
    assertThat(p.once()).isSameAs(once);

    int[] calls = new int[1];
    Outcome<String> o = once.run(() -> {
      calls[0]++;
      throw new IOException("not repeated");
    });
    assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(calls[0]).isEqualTo(1);
    assertThat(p.breaker().orElseThrow().metrics().failedCalls()).as("the shared breaker saw it").isEqualTo(1);
    assertThat(Resilience.NONE.once()).isSameAs(Resilience.NONE);
  }
}
