package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Issue 8 item 7: breakers and limiters run on the simulation's clock like everything else, each run
 * with guards of its own, and the report counts their refusals as calls (or retries) that never
 * reached the dependency.
 */
class GuardsOnTheSimulationClockTest {
  private static final Dependency DOWN_FOR_A_MINUTE = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
      .capacity(400)
      .incident(Incident.outage().between(Duration.ofMinutes(1), Duration.ofMinutes(2)));
  private static final Resilience POLICY = Scenario.referencePolicy(RetryBudget.AUTOMATIC).withName("outage");

  private static SimulationReport outage(Resilience policy, long seed) {
    return Simulate.policy(policy).against(DOWN_FOR_A_MINUTE).under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(3)).run(seed);
  }

  @Test
  void aBreakerRefusesWhatTheDependencyWouldHaveRefusedAndTheReportCountsItAsNeverSent() {
    SimulationReport budgetOnly = outage(POLICY, 1);
    SimulationReport both = outage(POLICY.withBreaker(CircuitBreaker.Config.DEFAULT), 1);

    // the breaker opened during the outage: far fewer attempts reached the dependency
    double without = budgetOnly.phases().get(1).loadMultiplier();
    double with = both.phases().get(1).loadMultiplier();
    assertThat(without).isGreaterThan(0.99);
    assertThat(with).isLessThan(without / 2);
    assertThat(both.refusedByBreaker()).isPositive();
    assertThat(budgetOnly.refusedByBreaker()).isZero();

    // each refusal ended its call (DEPENDENCY_UNAVAILABLE), reached no dependency, and was no attempt
    EdgeReport e = both.entry();
    assertThat(e.refusedByBreaker()).isEqualTo(e.stopped(StopReason.DEPENDENCY_UNAVAILABLE));
    assertThat(e.refusedBeforeFirstAttempt()).isPositive().isLessThanOrEqualTo(e.refusedByBreaker());
    assertThat(e.firstAttempts()).isEqualTo(e.calls() - e.refusedBeforeFirstAttempt());
    assertThat(e.attempts()).isEqualTo(e.firstAttempts() + e.retries() + e.hedges());
    assertThat(both.node("dependency").attempts()).isEqualTo(e.attempts());
    assertThat(both.loadMultiplier()).isLessThan(1.0);
    assertThat(e.breaker()).startsWith("CircuitBreaker.Config[failureRate=0.5, minimumCalls=20");
    assertThat(budgetOnly.entry().breaker()).isEqualTo("none");

    // the series counts every refusal in the second it happened: during the outage, or in the ramp after it
    long perSecond = 0;
    for (Second s : both.series()) {
      perSecond += s.refusedByBreaker();
      if (s.second() < 60) {
        assertThat(s.refusedByBreaker()).as("second %d, before the outage", s.second()).isZero();
      }
    }
    assertThat(perSecond).isEqualTo(both.refusedByBreaker());
    assertThat(both.series().stream().mapToLong(Second::attempts).sum()).isEqualTo(both.attempts());
  }

  @Test
  void everyRunGetsABreakerOfItsOwnSoSeedsAndThreadsAgree() {
    Resilience withBreaker = POLICY.withBreaker(CircuitBreaker.Config.DEFAULT);
    Simulation quiet = Simulate.policy(withBreaker).against(DOWN_FOR_A_MINUTE).under(Load.perSecond(100))
        .lasting(Duration.ofMinutes(3));
    String first = quiet.run(7).toJson();
    assertThat(quiet.run(7).toJson()).isEqualTo(first);
    assertThat(quiet.run(8).toJson()).isNotEqualTo(first);

    Scenario twice = Scenario.of("twice", "", java.util.List.of(
        new Scenario.Arm("a", Simulate.policy(withBreaker).against(DOWN_FOR_A_MINUTE).lasting(Duration.ofMinutes(3))),
        new Scenario.Arm("b", Simulate.policy(withBreaker).against(DOWN_FOR_A_MINUTE).lasting(Duration.ofMinutes(3)))));
    ScenarioResult parallel = twice.parallelism(2).run(3, 4);
    ScenarioResult serial = twice.parallelism(1).run(3, 4);
    for (String arm : java.util.List.of("a", "b")) {
      for (int i = 0; i < 2; i++) {
        assertThat(parallel.arm(arm).bands().reports().get(i).toJson())
            .isEqualTo(serial.arm(arm).bands().reports().get(i).toJson());
      }
    }
    assertThat(parallel.arm("a").first().toJson()).isEqualTo(parallel.arm("b").first().toJson());
  }

  @Test
  void aRateLimiterBoundsEverySecondToItsRateAndRefusesTheRestAsLimited() {
    SimulationReport r = Simulate.policy(clock -> Resilience.NONE.withTimeSource(clock)
            .withLimiter(Limiter.rate(100, 10, clock)))
        .against(Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(20)))
        .under(Load.perSecond(300))
        .lasting(Duration.ofSeconds(30))
        .run(2);
    for (Second s : r.series()) {
      // a token bucket: in any second at most its rate plus what the bucket held
      assertThat(s.attempts()).as("second %d", s.second()).isLessThanOrEqualTo(100 + 10);
    }
    assertThat(r.limited()).isEqualTo(r.stopReasons().get(StopReason.LIMITED));
    assertThat(r.entry().refusedBeforeFirstAttempt()).isEqualTo(r.limited());
    assertThat((double) r.limited() / r.calls()).isBetween(0.6, 0.72);   // two thirds of the calls are over the rate
    assertThat(r.series().stream().mapToLong(Second::limited).sum()).isEqualTo(r.limited());
    assertThat(r.entry().limiters()).isEqualTo("rate, burst 10");
  }

  @Test
  void aBulkheadBoundsWhatIsInFlightAtTheDependency() {
    SimulationReport r = Simulate.policy(clock -> Resilience.NONE.withLimiter(Limiter.concurrency(5)))
        .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)))
        .under(Load.perSecond(300))   // about 7.6 in flight on average without the bulkhead
        .lasting(Duration.ofSeconds(30))
        .run(3);
    assertThat(r.node("dependency").peakOccupancy()).isLessThanOrEqualTo(5);
    assertThat(r.limited()).isPositive();
    assertThat(r.availability()).isEqualTo((double) (r.calls() - r.limited()) / r.calls());
  }

  @Test
  void aBulkheadThatLetsAttemptsWaitQueuesThemOnTheSimulationClock() {
    Simulation waiting = Simulate.policy(clock -> Resilience.NONE.withDeadline(Duration.ofSeconds(1))
            .withLimiter(Limiter.concurrency(5, Duration.ofMillis(200))))
        .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)))
        .under(Load.perSecond(200))
        .lasting(Duration.ofSeconds(30));
    SimulationReport r = waiting.run(3);
    assertThat(r.node("dependency").peakOccupancy()).isLessThanOrEqualTo(5);
    assertThat(r.limited()).isLessThan(r.calls() / 10);   // most waited their turn instead of being refused
    assertThat(r.latency().p99()).isGreaterThan(Duration.ofMillis(100));
    assertThat(waiting.run(3).toJson()).isEqualTo(r.toJson());
  }

  @Test
  void anAdaptiveLimitShrinksWhenTheDependencyTimesOut() {
    // a brownout makes attempts time out: each loss shrinks the limit, and the limit then refuses
    Dependency slow = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
        .incident(Incident.brownout(20).between(Duration.ofSeconds(20), Duration.ofSeconds(40)));
    SimulationReport r = Simulate.policy(clock -> Resilience.NONE.withAttemptTimeout(Duration.ofMillis(100))
            .withLimiter(Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT.withMinLimit(5).withInitialLimit(40))))
        .against(slow)
        .under(Load.perSecond(1000))
        .lasting(Duration.ofMinutes(1))
        .run(1);
    long limitedBefore = r.series().subList(0, 20).stream().mapToLong(Second::limited).sum();
    long limitedDuring = r.series().subList(20, 40).stream().mapToLong(Second::limited).sum();
    assertThat(limitedBefore).isZero();
    assertThat(limitedDuring).isPositive();
  }

  @Test
  void liveGuardsCannotBeSharedBetweenRunsAndTheMessageSaysWhatToDo() {
    Resilience sharedBreaker = POLICY.withBreaker(CircuitBreaker.of("inventory"));
    assertThatThrownBy(() -> Simulate.policy(sharedBreaker))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("live circuit breaker (inventory)")
        .hasMessageContaining("withBreaker(CircuitBreaker.Config");
    Resilience limited = POLICY.withLimiter(Limiter.concurrency(10));
    assertThatThrownBy(() -> Simulate.policy(limited))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the limiter concurrency-")
        .hasMessageContaining("Simulate.policy(clock ->");

    // a factory that hands out the same live limiter twice is refused when it does, not silently shared
    Limiter one = Limiter.concurrency(10);
    Dependency quick = Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(10));
    Simulation lazy = Simulate.policy(clock -> POLICY.withLimiter(one)).against(quick)
        .lasting(Duration.ofSeconds(5));
    assertThatThrownBy(() -> {
      lazy.run(1);
      lazy.run(2);
    }).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the same live limiter " + one.name() + " for two runs");
    // ...and so is a factory that hands out the same breaker or budget
    CircuitBreaker breaker = CircuitBreaker.of("b");
    Simulation sameBreaker = Simulate.policy(clock -> POLICY.withBreaker(breaker)).against(quick)
        .lasting(Duration.ofSeconds(5));
    assertThatThrownBy(() -> {
      sameBreaker.estimate();
      sameBreaker.estimate();
    }).hasMessageContaining("the same live circuit breaker b");
    // a description never throws, even for such a factory
    assertThat(sameBreaker.toString()).contains("Resilience[outage");
  }
}
