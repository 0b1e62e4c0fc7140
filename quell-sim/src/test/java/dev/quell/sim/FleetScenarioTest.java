package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** SPEC §9: fifty pods against one dependency is a capacity problem, not a retry problem. */
class FleetScenarioTest {

  @Test
  void theFleetVerdictNamesTheCapacityProblem() {
    ScenarioResult result = Scenario.fleet().run(1);
    for (ScenarioResult.ArmResult arm : result.arms()) {
      SimulationReport r = arm.first();
      assertThat(r.diagnosis()).as(arm.name()).isEqualTo(Diagnosis.CAPACITY_PROBLEM);
      assertThat(r.demand()).isGreaterThan(1.5);
      assertThat(r.explanation()).contains("capacity").contains("50 pods");
    }
    assertThat(result.toTable()).contains("capacity problem");
  }

  @Test
  void aSinglePodOfTheSameLoadIsNoCapacityProblem() {
    SimulationReport r = Scenario.reference().arms().get(1).simulation().run(1);
    assertThat(r.demand()).isBetween(0.03, 0.04);
    assertThat(r.diagnosis()).isNotEqualTo(Diagnosis.CAPACITY_PROBLEM);
  }
}
