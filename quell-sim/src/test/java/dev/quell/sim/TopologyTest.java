package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * SPEC §1: three layers of 4 attempts each put 4 × 4 × 4 = 64 attempts on the database for one call
 * while it is down, and no layer sees it; budgets bound it.
 */
class TopologyTest {
  private static final Duration RUN = Duration.ofSeconds(60);
  private static final double RATE = 50;

  private static Resilience fourAttempts(String name, RetryBudget budget) {
    return Resilience.DEFAULT.with(s -> s.name(name).attempts(4).backoff(Backoff.exponential(Duration.ofMillis(10)))
        .budget(budget));
  }

  private static SimulationReport layers(RetryBudget budget) {
    Dependency database = Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(50))
        .named("database")
        .incident(Incident.outage()); // down for the whole run
    Service backend = Service.named("backend").calls(database, fourAttempts("database", budget));
    Service frontend = Service.named("frontend").calls(backend, fourAttempts("backend", budget));
    return Simulate.policy(fourAttempts("frontend", budget))
        .against(frontend)
        .under(Load.perSecond(RATE))
        .lasting(RUN)
        .run(11);
  }

  @Test
  void withoutBudgetsEachCallPutsAbout64AttemptsOnTheLeaf() {
    SimulationReport r = layers(RetryBudget.NONE);
    assertThat(r.node("frontend").attemptsPerCall()).isCloseTo(4, org.assertj.core.data.Offset.offset(0.01));
    assertThat(r.node("backend").attemptsPerCall()).isCloseTo(16, org.assertj.core.data.Offset.offset(0.1));
    assertThat(r.node("database").attemptsPerCall()).isBetween(63.0, 64.0);
    // each layer, looking only at its own calls, sees a modest 4×
    for (EdgeReport e : r.edges()) {
      assertThat(e.loadMultiplier()).as(e.from() + " → " + e.to()).isCloseTo(4, org.assertj.core.data.Offset.offset(0.05));
    }
    assertThat(r.availability()).isZero();
    assertThat(r.diagnosis()).isEqualTo(Diagnosis.RETRY_STORM);
  }

  @Test
  void withBudgetsEachLayerBoundsItsOwnRetriesAndTheLeafStaysNearOneAttemptPerCall() {
    SimulationReport r = layers(RetryBudget.AUTOMATIC);
    // no success ever deposits: each edge's budget funds at most its 30 tokens plus 3 a second
    double seconds = RUN.toSeconds() + 2; // calls in flight at the end finish within a couple of seconds
    double perEdge = 30 + 3 * seconds;
    for (EdgeReport e : r.edges()) {
      assertThat((double) e.retries()).as(e.from() + " → " + e.to()).isLessThanOrEqualTo(perEdge);
    }
    double bound = 1 + 3 * perEdge / r.calls();
    assertThat(r.node("database").attemptsPerCall()).isLessThanOrEqualTo(bound).isLessThan(1.25);
    assertThat(r.diagnosis()).isEqualTo(Diagnosis.HEALTHY);
  }

  @Test
  void theTopologyScenarioReportsEveryEdgeAndService() {
    ScenarioResult result = Scenario.topology().run(1);
    SimulationReport off = result.arm("budgets off").first();
    SimulationReport on = result.arm("budgets on").first();
    assertThat(off.edges()).extracting(e -> e.from() + "→" + e.to())
        .containsExactly("load→frontend", "frontend→backend", "backend→database");
    assertThat(off.nodes()).extracting(NodeReport::name).containsExactly("frontend", "backend", "database");
    int during = 1;
    assertThat(off.phases().get(during).incident()).isTrue();
    assertThat(off.node("database").attemptsPerCallByPhase().get(during)).isBetween(60.0, 64.5);
    assertThat(on.node("database").attemptsPerCallByPhase().get(during)).isLessThan(1.5);
    assertThat(off.node("database").attemptsPerCallByPhase().get(0)).isCloseTo(1.0,
        org.assertj.core.data.Offset.offset(0.01));
    assertThat(result.toTable()).contains("attempts per call at database");
  }
}
