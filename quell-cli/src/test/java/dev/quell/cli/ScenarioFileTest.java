package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.CircuitBreaker;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.cli.internal.Builtins;
import dev.quell.cli.internal.ScenarioFile;
import dev.quell.sim.Diagnosis;
import dev.quell.sim.NodeReport;
import dev.quell.sim.Overload;
import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.Load;
import dev.quell.sim.Simulate;
import dev.quell.sim.SimulationReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
  void theOutageAndTailFilesMeanWhatTheJavaGuardsMean() {
    // the outage's "both" arm: the reference policy with the breaker's defaults written out in YAML
    dev.quell.sim.Dependency down = dev.quell.sim.Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
        .capacity(400)
        .incident(dev.quell.sim.Incident.outage().between(Duration.ofMinutes(1), Duration.ofMinutes(2)));
    Resilience both = Scenario.referencePolicy(RetryBudget.AUTOMATIC).withName("outage")
        .withBreaker(CircuitBreaker.Config.DEFAULT);
    SimulationReport fromFile = Builtins.find("outage").orElseThrow().scenario().arms().get(2).simulation().run(1);
    SimulationReport fromJava = Simulate.policy(both).against(down).under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(4)).run(1);
    assertThat(fromFile.toJson()).isEqualTo(fromJava.toJson());

    // its throttle arms: the reference policy with Limiter.throttle(2, window) on the simulation's clock
    for (int arm = 3; arm <= 4; arm++) {
      Duration window = arm == 3 ? Duration.ofSeconds(10) : Duration.ofMinutes(2);
      SimulationReport throttledFile = Builtins.find("outage").orElseThrow().scenario().arms().get(arm).simulation()
          .run(1);
      SimulationReport throttledJava = Simulate.policy(clock -> Scenario.referencePolicy(RetryBudget.AUTOMATIC)
          .withName("outage").withTimeSource(clock).withLimiter(dev.quell.Limiter.throttle(2, window, clock)))
          .against(down).under(Load.perSecond(500)).lasting(Duration.ofMinutes(4)).run(1);
      assertThat(throttledFile.toJson()).as("outage arm %d", arm).isEqualTo(throttledJava.toJson());
    }

    // the tail's live-p95 arm: a heavy tail and Hedge.maxExtraLoad(0.05)
    dev.quell.sim.Dependency tailed = dev.quell.sim.Dependency.latency(Duration.ofMillis(10), Duration.ofMillis(40))
        .tail(0.02, Duration.ofMillis(300), Duration.ofSeconds(1))
        .capacity(400);
    Resilience live = Resilience.DEFAULT.withName("tail").withAttempts(2).withHedge(Hedge.maxExtraLoad(0.05));
    SimulationReport tailFile = Builtins.find("tail-at-scale").orElseThrow().scenario().arms().get(3).simulation()
        .run(1);
    SimulationReport tailJava = Simulate.policy(live).against(tailed).under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(5)).run(1);
    assertThat(tailFile.toJson()).isEqualTo(tailJava.toJson());
  }

  @Test
  void everyRunOfAFileBuildsItsOwnLimitersOnItsOwnClock() {
    String yaml = "duration: 5s\nload: {perSecond: 100}\ndependency: {p50: 5ms, p99: 20ms}\n"
        + "policy: {attempts: 2, limiters: [{rate: 50, burst: 5, maxWait: 20ms}, {concurrency: 3},"
        + " {adaptive: gradient}]}\n";
    dev.quell.sim.Simulation s = ScenarioFile.parse(yaml, "inline").scenario().arms().get(0).simulation();
    SimulationReport first = s.run(1);
    SimulationReport again = s.run(1);   // a second run: new limiters, so the very same numbers
    assertThat(again.toJson()).isEqualTo(first.toJson());
    assertThat(first.limited()).isPositive();
    assertThat(first.entry().limiters()).startsWith("rate, burst 5, concurrency 3, adaptive, ");
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
