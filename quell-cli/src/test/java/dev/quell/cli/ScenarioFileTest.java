package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.cli.internal.ScenarioFile;
import dev.quell.sim.NodeReport;
import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.SimulationReport;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Scenario files: the ones docs/simulation.md shows load, run, and mean what the Java model means. */
class ScenarioFileTest {
  private static final Path DOCS = Path.of("..", "docs", "scenarios");

  @Test
  void theReferenceScenarioAsAFileRunsExactlyAsTheBuiltInOne() {
    ScenarioFile file = ScenarioFile.read(DOCS.resolve("reference.yaml"));
    assertThat(file.scenario().arms()).extracting(Scenario.Arm::name).containsExactly("budget off", "budget on");
    for (int i = 0; i < 2; i++) {
      SimulationReport fromFile = file.scenario().arms().get(i).simulation().run(1);
      SimulationReport builtIn = Scenario.reference().arms().get(i).simulation().run(1);
      assertThat(fromFile.toJson()).isEqualTo(builtIn.toJson());
    }
  }

  @Test
  void sixteenPodsTurnTheBrownoutIntoAMetastableFailureWithoutTheBudget() {
    ScenarioResult result = ScenarioFile.read(DOCS.resolve("sixteen-pods.yaml")).scenario().run(1);
    assertThat(result.arm("budget off").first().diagnosis()).isEqualTo(dev.quell.sim.Diagnosis.METASTABLE_FAILURE);
    assertThat(result.arm("budget off").first().timeToRecover()).isEmpty();
    assertThat(result.arm("budget on").first().timeToRecover()).isPresent();
    assertThat(result.arm("budget on").first().diagnosis()).isNotEqualTo(dev.quell.sim.Diagnosis.METASTABLE_FAILURE);
  }

  @Test
  void aTopologyFileGivesEachEdgeItsPolicy() {
    ScenarioFile file = ScenarioFile.read(DOCS.resolve("topology.yaml"));
    ScenarioResult result = file.scenario().run(2);
    SimulationReport off = result.arm("budgets off").first();
    SimulationReport on = result.arm("budgets on").first();
    assertThat(off.nodes()).extracting(NodeReport::name).containsExactly("frontend", "backend", "database");
    assertThat(off.node("database").attemptsPerCallByPhase().get(1)).isBetween(60.0, 64.5);
    assertThat(on.node("database").attemptsPerCallByPhase().get(1)).isLessThan(1.5);
    assertThat(on.edges().get(2).budget()).startsWith("budget-");
    assertThat(on.edges().get(1).budget()).startsWith("backend");
  }

  @Test
  void durationsAreReadAsPeopleWriteThem() {
    String yaml = "duration: 90s\nload: {perSecond: 10}\n"
        + "dependency: {p50: 1.5ms, p99: '0:00.250', incidents: [{outage: true, from: PT10S, to: 1m}]}\n"
        + "policy: {attempts: 2, deadline: none, attemptTimeout: 1s, backoff: {constant: 5ms}}\n";
    Scenario s = ScenarioFile.parse(yaml, "inline").scenario();
    assertThat(s.name()).isEqualTo("inline");
    assertThat(s.arms().get(0).simulation().duration()).hasSeconds(90);
    assertThat(s.arms().get(0).simulation().target().toString())
        .contains("p50 1.5 ms", "p99 250 ms", "outage from 0:10 to 1:00");
  }

  @Test
  void mistakesSayWhereTheyAre() {
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependency: {p50: 20, p99: 30ms}\n"
        + "policy: {}\n", "x")).hasMessageContaining("scenario.dependency.p50 needs a unit");
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependency: {p50: 20ms, p99: 30ms}\n"
        + "policy: {attempts: 0}\n", "x")).hasMessageContaining("attempts");
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependency: {p50: 20ms, p99: 30ms}\n"
        + "policy: {budget: plenty}\n", "x")).hasMessageContaining("budget must be none, automatic");
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependencies: {db: {p50: 1ms, p99: 2ms}}\n"
        + "services: {a: {calls: [b]}, b: {calls: [a]}}\ntarget: a\npolicy: {}\n", "x"))
        .hasMessageContaining("a → b → a is a cycle");
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependencies: {db: {p50: 1ms, p99: 2ms}}\n"
        + "services: {a: {calls: [{to: db, policy: nope}]}}\ntarget: a\npolicy: {}\n", "x"))
        .hasMessageContaining("'nope'");
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\n"
        + "dependency: {p50: 1ms, p99: 2ms, incidents: [{brownout: 2, outage: true}]}\npolicy: {}\n", "x"))
        .hasMessageContaining("exactly one of");
  }
}
