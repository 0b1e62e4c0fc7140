package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.cli.internal.Builtins;
import dev.quell.cli.internal.ScenarioFile;
import dev.quell.sim.Diagnosis;
import dev.quell.sim.NodeReport;
import dev.quell.sim.Overload;
import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.SimulationReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Scenario files: the built-in ones are docs/scenarios, and they mean what the Java model means. */
class ScenarioFileTest {
  private static final Path DOCS = Path.of("..", "docs", "scenarios");

  private static void sameRuns(Scenario fromFile, Scenario builtIn) {
    assertThat(fromFile.arms()).extracting(Scenario.Arm::name)
        .containsExactlyElementsOf(builtIn.arms().stream().map(Scenario.Arm::name).collect(Collectors.toList()));
    for (int i = 0; i < builtIn.arms().size(); i++) {
      SimulationReport a = fromFile.arms().get(i).simulation().run(1);
      SimulationReport b = builtIn.arms().get(i).simulation().run(1);
      assertThat(a.toJson()).isEqualTo(b.toJson());
    }
  }

  @Test
  void theBuiltInReferenceFleetAndTopologyRunExactlyAsTheJavaOnes() {
    sameRuns(Builtins.find("reference").orElseThrow().scenario(), Scenario.reference());
    sameRuns(Builtins.find("fleet").orElseThrow().scenario(), Scenario.fleet());
    sameRuns(Builtins.find("topology").orElseThrow().scenario(), Scenario.topology());
  }

  @Test
  void everyFileInDocsScenariosIsABuiltInAndTheOtherWayRound() throws IOException {
    try (Stream<Path> files = Files.list(DOCS)) {
      List<String> names = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml"))
          .map(n -> n.replaceFirst("\\.yaml$", "")).sorted().collect(Collectors.toList());
      assertThat(names).containsExactlyInAnyOrderElementsOf(Builtins.NAMES);
    }
    for (String name : Builtins.NAMES) {
      ScenarioFile f = Builtins.find(name).orElseThrow();
      assertThat(f.scenario().name()).isEqualTo(name);
      assertThat(f.source()).isEqualTo(Files.readString(DOCS.resolve(name + ".yaml")));
    }
  }

  @Test
  void sixteenPodsTurnTheBrownoutIntoAMetastableFailureWithoutTheBudget() {
    ScenarioResult result = Builtins.find("sixteen-pods").orElseThrow().scenario().run(1);
    assertThat(result.arm("budget off").first().diagnosis()).isEqualTo(Diagnosis.METASTABLE_FAILURE);
    assertThat(result.arm("budget off").first().timeToRecover()).isEmpty();
    assertThat(result.arm("budget on").first().timeToRecover()).isPresent();
    assertThat(result.arm("budget on").first().diagnosis()).isNotEqualTo(Diagnosis.METASTABLE_FAILURE);
  }

  @Test
  void theFleetVariantsChooseTheirOverloadModel() {
    assertThat(overload("fleet")).isEqualTo(Overload.unboundedQueue());
    assertThat(overload("fleet-bounded-queue")).isEqualTo(Overload.boundedQueue(400));
    assertThat(overload("fleet-concurrency-limit")).isEqualTo(Overload.concurrencyLimit(400));
  }

  private static Overload overload(String name) {
    return ((dev.quell.sim.Dependency) Builtins.find(name).orElseThrow().scenario().arms().get(0).simulation()
        .target()).overload();
  }

  @Test
  void aTopologyFileGivesEachEdgeItsPolicy() {
    ScenarioResult result = ScenarioFile.read(DOCS.resolve("topology.yaml")).scenario().run(2);
    SimulationReport off = result.arm("budgets off").first();
    SimulationReport on = result.arm("budgets on").first();
    assertThat(off.nodes()).extracting(NodeReport::name).containsExactly("frontend", "backend", "database");
    assertThat(off.node("database").attemptsPerCallByPhase().get(1)).isBetween(60.0, 64.5);
    assertThat(on.node("database").attemptsPerCallByPhase().get(1)).isLessThan(1.5);
    assertThat(on.edges().get(2).budget()).startsWith("database");
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
  void theTreeIsKeptForSweepsAndReports() {
    ScenarioFile f = Builtins.find("reference").orElseThrow();
    assertThat(f.tree()).containsKeys("load", "dependency", "arms");
    f.tree().put("load", "changed"); // a copy: the file's own tree stays as read
    assertThat(f.tree().get("load")).isInstanceOf(java.util.Map.class);
  }

  @Test
  void mistakesSayWhereTheyAre() {
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependency: {p50: 20, p99: 30ms}\n"
        + "policy: {}\n", "x")).hasMessageContaining("dependency.p50 needs a unit");
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependencies: {db: {p50: 1ms, p99: 2ms}}\n"
        + "services: {a: {calls: [b]}, b: {calls: [a]}}\ntarget: a\npolicy: {}\n", "x"))
        .hasMessageContaining("a → b → a is a cycle");
    assertThatThrownBy(() -> ScenarioFile.parse("load: {perSecond: 1}\ndependencies: {db: {p50: 1ms, p99: 2ms}}\n"
        + "services: {a: {calls: [{to: db, policy: nope}]}}\ntarget: a\npolicy: {}\n", "x"))
        .hasMessageContaining("\"nope\"");
  }
}
