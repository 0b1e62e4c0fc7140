package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.quell.RetryBudget;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The same simulation and seed give an identical report; another seed gives another. */
class DeterminismTest {
  private static final Simulation BRIEF_REFERENCE = Simulate.policy(Scenario.referencePolicy(RetryBudget.AUTOMATIC))
      .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)).capacity(400)
          .incident(Incident.failing(0.2).between(Duration.ofSeconds(20), Duration.ofSeconds(40))))
      .under(Load.perSecond(300))
      .lasting(Duration.ofSeconds(60));

  @Test
  void theSameSeedGivesAnIdenticalReport() {
    SimulationReport first = BRIEF_REFERENCE.run(7);
    SimulationReport second = BRIEF_REFERENCE.run(7);
    assertThat(second.toJson()).isEqualTo(first.toJson());
    assertThat(second.series()).isEqualTo(first.series());
    assertThat(second.phases()).isEqualTo(first.phases());
    assertThat(second.latency()).isEqualTo(first.latency());
    assertThat(second.events()).isEqualTo(first.events());
  }

  @Test
  void theFullReferenceScenarioRepeatsExactly() {
    ScenarioResult a = Scenario.reference().run(3);
    ScenarioResult b = Scenario.reference().run(3);
    for (int i = 0; i < a.arms().size(); i++) {
      assertThat(b.arms().get(i).first().toJson()).isEqualTo(a.arms().get(i).first().toJson());
    }
    assertThat(b.toCsv()).isEqualTo(a.toCsv());
  }

  @Test
  void anotherSeedGivesAnotherRun() {
    assertThat(BRIEF_REFERENCE.run(8).series()).isNotEqualTo(BRIEF_REFERENCE.run(7).series());
  }

  @Test
  void bothArmsOfAComparisonSeeTheSameArrivals() {
    ScenarioResult r = Scenario.reference().run(5);
    var off = r.arm("budget off").first().series();
    var on = r.arm("budget on").first().series();
    for (int s = 0; s < off.size(); s++) {
      assertThat(on.get(s).offered()).isEqualTo(off.get(s).offered());
    }
  }

  @Test
  void theJsonParsesAndCarriesTheHeadlineNumbers() throws Exception {
    SimulationReport report = BRIEF_REFERENCE.run(7);
    JsonNode json = new ObjectMapper().readTree(report.toJson());
    assertThat(json.get("seed").asLong()).isEqualTo(7);
    assertThat(json.get("loadMultiplier").asDouble()).isCloseTo(report.loadMultiplier(),
        org.assertj.core.data.Offset.offset(1e-5));
    assertThat(json.get("worstSecondAt").asInt()).isEqualTo(report.worstSecondAt());
    assertThat(json.get("phases")).hasSize(3);
    assertThat(json.get("series")).hasSize(60);
    assertThat(json.get("diagnosis").asText()).isEqualTo(report.diagnosis().name());
    assertThat(json.get("series").get(30).get("budgetTokens").isNumber()).isTrue();
  }
}
