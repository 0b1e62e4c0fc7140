package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.RetryBudget;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BandsTest {

  @Test
  void aBandIsTheMedianMinimumAndMaximum() {
    assertThat(Band.of(3, 1, 2)).isEqualTo(new Band(2, 1, 3));
    assertThat(Band.of(4, 1, 2, 3)).isEqualTo(new Band(2.5, 1, 4));
    assertThat(Band.of(Double.NaN, 5)).isEqualTo(new Band(5, 5, 5));
    assertThat(Band.of(7).isPoint()).isTrue();
    assertThat(Band.of().median()).isNaN();
  }

  @Test
  void severalSeedsGiveBandsAroundEachRun() {
    Simulation s = Simulate.policy(Scenario.referencePolicy(RetryBudget.NONE))
        .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)).capacity(400)
            .incident(Incident.brownout(8).between(Duration.ofSeconds(10), Duration.ofSeconds(20))))
        .under(Load.perSecond(200))
        .lasting(Duration.ofSeconds(30));
    SimulationBands bands = s.runSeeds(1, 2, 3, 4, 5);
    assertThat(bands.reports()).hasSize(5).extracting(SimulationReport::seed).containsExactly(1L, 2L, 3L, 4L, 5L);
    Band lm = bands.loadMultiplier();
    assertThat(lm.min()).isLessThanOrEqualTo(lm.median()).isLessThan(lm.max());
    for (SimulationReport r : bands.reports()) {
      assertThat(r.loadMultiplier()).isBetween(lm.min(), lm.max());
    }
    assertThat(bands.phaseAvailability()).hasSize(3);
    assertThat(bands.diagnoses().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(5);
    assertThat(s.run(3).toJson()).isEqualTo(bands.reports().get(2).toJson());
  }
}
