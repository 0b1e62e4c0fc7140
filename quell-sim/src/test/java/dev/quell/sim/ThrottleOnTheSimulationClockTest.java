package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The adaptive throttle for a fleet against an overloaded dependency: the sixteen-pods brownout
 * (16 pods at 500 calls/s against room for 400 concurrent attempts, eight times slower from 2:00 to
 * 3:00), with the retry budget alone, the breaker alone, and the throttle beside the budget.
 */
class ThrottleOnTheSimulationClockTest {
  private static final Dependency BROWNOUT = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
      .capacity(400)
      .incident(Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3)));
  private static final Load FLEET = Load.perSecond(500).peers(15).criticality(Criticality.CRITICAL, 0.5)
      .criticality(Criticality.SHEDDABLE, 0.5);

  private static Resilience base(dev.quell.TimeSource clock) {
    return Resilience.NONE.with(s -> s.attempts(3).attemptTimeout(Duration.ofMillis(160))
        .backoff(Backoff.constant(Duration.ofMillis(50))).deadline(Duration.ofSeconds(1)).timeSource(clock));
  }

  private static SimulationReport run(Function<dev.quell.TimeSource, Resilience> policy) {
    return Simulate.policy(policy::apply).against(BROWNOUT).under(FLEET).lasting(Duration.ofMinutes(5)).run(1);
  }

  @Test
  void theThrottleShedsSheddableWorkFirstAndSendsTheDependencyLessThanTheBudgetAlone() {
    SimulationReport budget = run(clock -> base(clock).withBudget(RetryBudget.AUTOMATIC));
    SimulationReport breaker = run(clock -> base(clock).withBudget(RetryBudget.NONE)
        .withBreaker(CircuitBreaker.Config.DEFAULT));
    SimulationReport throttle = run(clock -> base(clock).withBudget(RetryBudget.AUTOMATIC)
        .withLimiter(Limiter.throttle(2, Duration.ofMinutes(2), clock)));
    SimulationReport shortWindow = run(clock -> base(clock).withBudget(RetryBudget.AUTOMATIC)
        .withLimiter(Limiter.throttle(2, Duration.ofSeconds(10), clock)));
    if (Boolean.getBoolean("quell.print")) {
      for (SimulationReport r : new SimulationReport[] {budget, breaker, throttle, shortWindow}) {
        StringBuilder phases = new StringBuilder();
        for (Phase p : r.phases()) {
          phases.append(String.format(Locale.ROOT, " %s %.3f", p.name(), p.availability()));
        }
        System.out.println(String.format(Locale.ROOT, "load %.2f worst %.2f availability %.3f by %s limited %d;%s",
            r.loadMultiplier(), r.worstSecond(), r.availability(), r.availabilityBy(), r.limited(), phases));
      }
    }
    assertThat(throttle.limited()).isPositive();
    assertThat(throttle.attempts()).isLessThan(budget.attempts());
    assertThat(throttle.availabilityBy().get(Criticality.CRITICAL))
        .isGreaterThan(throttle.availabilityBy().get(Criticality.SHEDDABLE));
    assertThat(breaker.attempts()).isPositive();
    // the two-minute window remembers the brownout for two minutes after it: a ten-second one recovers sooner
    assertThat(phase(shortWindow, "after")).isGreaterThan(phase(throttle, "after"));
  }

  private static double phase(SimulationReport r, String name) {
    return r.phases().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow().availability();
  }
}
