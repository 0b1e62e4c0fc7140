package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The simulator runs the user's own policy: its budget refills on simulated time, its criticality counts. */
class PolicyOnTheSimulationClockTest {
  private static final Simulation BROWNOUT = Simulate.policy(Scenario.referencePolicy(RetryBudget.AUTOMATIC))
      .against(Scenario.referenceDependency())
      .under(Load.perSecond(500))
      .lasting(Duration.ofMinutes(4));

  @Test
  void aPolicyWithALiveBudgetOfItsOwnIsRefusedWithAWayOut() {
    Resilience live = Scenario.referencePolicy(RetryBudget.of(0.1, 3));
    assertThatThrownBy(() -> Simulate.policy(live))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Simulate.policy(clock ->");
  }

  @Test
  void aBudgetBuiltOnTheSimulationClockBehavesAsTheAutomaticOne() {
    SimulationReport automatic = BROWNOUT.run(4);
    SimulationReport own = Simulate.policy(clock -> Scenario.referencePolicy(RetryBudget.of(0.1, 3, clock)))
        .against(Scenario.referenceDependency())
        .under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(4))
        .run(4);
    assertThat(own.series()).isEqualTo(automatic.series());
    assertThat(own.retriesRefused()).isEqualTo(automatic.retriesRefused()).isPositive();
  }

  @Test
  void aStingierBudgetRefusesMore() {
    SimulationReport automatic = BROWNOUT.run(4);
    SimulationReport stingy = Simulate.policy(clock -> Scenario.referencePolicy(RetryBudget.of(0.01, 0, clock)))
        .against(Scenario.referenceDependency()).under(Load.perSecond(500)).lasting(Duration.ofMinutes(4)).run(4);
    assertThat(stingy.retries()).isLessThan(automatic.retries());
    assertThat(stingy.worstSecond()).isLessThanOrEqualTo(automatic.worstSecond());
  }

  @Test
  void withACriticalityMixSheddableRetriesAreRefusedFirst() {
    SimulationReport r = BROWNOUT
        .under(Load.perSecond(500).criticality(Criticality.CRITICAL, 0.5).criticality(Criticality.SHEDDABLE, 0.5))
        .run(2);
    assertThat(r.availabilityBy()).containsOnlyKeys(Criticality.CRITICAL, Criticality.SHEDDABLE);
    assertThat(r.availabilityBy().get(Criticality.SHEDDABLE)).isLessThan(r.availabilityBy().get(Criticality.CRITICAL));
  }

  @Test
  void aMixIsHarmlessForAPolicyThatCannotUseIt() {
    // one attempt and no budget: ambient criticality would fail validation, so the simulator leaves it off
    SimulationReport r = Simulate.policy(Resilience.NONE)
        .against(Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(10)))
        .under(Load.perSecond(100).criticality(Criticality.SHEDDABLE, 1))
        .lasting(Duration.ofSeconds(5))
        .run(1);
    assertThat(r.availabilityBy()).containsOnlyKeys(Criticality.SHEDDABLE);
    assertThat(r.availability()).isEqualTo(1.0);
  }

  @Test
  void aRunDoesNotSeeTheContextOfTheThreadThatStartedIt() {
    // a real-clock deadline that has already passed on the caller's thread must not end simulated calls
    dev.quell.ResilienceContext expired = dev.quell.ResilienceContext.current().withDeadline(Duration.ZERO);
    SimulationReport r;
    dev.quell.ResilienceContext.Scope scope = expired.open();
    try {
      r = Simulate.policy(Scenario.referencePolicy(RetryBudget.NONE))
          .against(Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(10)))
          .lasting(Duration.ofSeconds(5))
          .run(1);
    } finally {
      scope.close();
    }
    assertThat(r.availability()).isEqualTo(1.0);
  }
}
