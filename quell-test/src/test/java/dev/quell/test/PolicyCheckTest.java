package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.RetryBudget;
import dev.quell.sim.Dependency;
import dev.quell.sim.Incident;
import dev.quell.sim.Load;
import dev.quell.sim.Scenario;
import dev.quell.sim.SimulationReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23: a policy regression test in a user's CI. The reference scenario's policy, with and
 * without its budget, against the reference dependency: the figures are the simulator's own, the
 * runs deterministic per seed, and a miss names the figure, the limit, the gap, the run in one line
 * and the chart.
 */
class PolicyCheckTest {
  @TempDir
  Path charts;

  private PolicyCheck reference(RetryBudget budget) {
    return PolicyCheck.of(Scenario.referencePolicy(budget))
        .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
            .capacity(400)
            .incident(Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3))))
        .under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(5))
        .chartsIn(charts);
  }

  @Test
  void theBudgetedPolicyKeepsEveryFigureTheTeamPromised() {
    PolicyOutcome outcome = reference(RetryBudget.AUTOMATIC).run()
        .hasLoadMultiplierAtMost(1.05)
        .hasWorstSecondAtMost(1.2)
        .hasAvailabilityAtLeast(0.9)
        .hasAvailabilityDuringIncidentAtLeast(0.5)
        .recoversWithin(Duration.ofSeconds(5))
        .hasAttemptsPerCallAtMost(1.05)
        .hasAttemptsPerCallDuringIncidentAtMost(1.1)
        .hasP99AtMost(Duration.ofMillis(400));

    // the figures are quell simulate's for the reference scenario's budget-on arm (docs/simulation.md)
    SimulationReport r = outcome.report();
    assertThat(r.calls()).isEqualTo(149_548);
    assertThat(r.worstSecond()).isEqualTo(Scenario.reference().run(1).arm("budget on").first().worstSecond());
    assertThat(outcome.summary()).startsWith("load 1.01×, worst second 1.11× at 2:00, availability 90.6%"
        + " (during brownout ×8: 52.6%), recovered 0 s after the incident").endsWith(": healthy");
    assertThat(charts).isEmptyDirectory(); // a check that passes draws nothing
  }

  @Test
  void aMissNamesTheFigureTheLimitAndTheGapAndPointsAtTheChart() throws Exception {
    PolicyOutcome outcome = reference(RetryBudget.NONE).named("checkout").run();

    assertThatThrownBy(() -> outcome.hasAvailabilityAtLeast(0.9).hasWorstSecondAtMost(1.2))
        .isInstanceOf(AssertionError.class)
        .hasMessageStartingWith("policy check 'checkout' failed: worst second was 1.91× at 2:32, above the allowed"
            + " 1.20× by 0.71× (59%)")
        .hasMessageContaining("\n  run: ")
        .hasMessageContaining("seed 1")
        .hasMessageContaining("\n  in one line: load 1.15×, worst second 1.91× at 2:32, availability 97.5% (during"
            + " brownout ×8: 87.4%)")
        .hasMessageContaining(": retry storm")
        .hasMessageContaining("\n  chart: " + charts.resolve("checkout-seed-1.png").toAbsolutePath());
    assertThat(Files.size(charts.resolve("checkout-seed-1.png"))).isGreaterThan(10_000);
  }

  @Test
  void eachFigureMissesWithItsOwnWords() {
    PolicyOutcome off = reference(RetryBudget.NONE).named("off").run();
    assertThatThrownBy(() -> off.hasLoadMultiplierAtMost(1.1))
        .hasMessageStartingWith("policy check 'off' failed: load multiplier was 1.15×, above the allowed 1.10× by");
    assertThatThrownBy(() -> off.hasAttemptsPerCallDuringIncidentAtMost(1.5))
        .hasMessageStartingWith("policy check 'off' failed: attempts per call during brownout ×8 was 1.75, above"
            + " the allowed 1.50 by 0.25");
    assertThatThrownBy(() -> off.hasP99AtMost(Duration.ofMillis(300)))
        .hasMessageStartingWith("policy check 'off' failed: call latency p99 was 569 ms, above the allowed 300 ms by"
            + " 269 ms");
    PolicyOutcome on = reference(RetryBudget.AUTOMATIC).named("on").run();
    assertThatThrownBy(() -> on.hasAvailabilityDuringIncidentAtLeast(0.8))
        .hasMessageStartingWith("policy check 'on' failed: availability during brownout ×8 was 52.6%, below the"
            + " allowed 80.0% by 27.4 points");
  }

  @Test
  void theSameSeedGivesTheSameRunAndEverySeedMustPass() {
    assertThat(reference(RetryBudget.AUTOMATIC).run().summary())
        .isEqualTo(reference(RetryBudget.AUTOMATIC).run().summary());

    PolicyOutcome three = reference(RetryBudget.NONE).named("off").seeds(1, 2, 3).run();
    assertThat(three.reports()).extracting(SimulationReport::seed).containsExactly(1L, 2L, 3L);
    assertThatThrownBy(() -> three.hasWorstSecondAtMost(1.5))
        .hasMessageContaining("seed 1 (1 of 3 seeds)");
  }

  @Test
  void theModelCanComeFromAScenarioFile() {
    PolicyOutcome fromFile = PolicyCheck.of(Scenario.referencePolicy(RetryBudget.AUTOMATIC))
        .against(Path.of("..", "docs", "scenarios", "reference.yaml"))
        .run();
    assertThat(fromFile.summary()).isEqualTo(reference(RetryBudget.AUTOMATIC).run().summary());

    // the file's load and duration can be overridden like any other
    assertThat(PolicyCheck.of(Scenario.referencePolicy(RetryBudget.AUTOMATIC))
        .against(Path.of("..", "docs", "scenarios", "reference.yaml"))
        .lasting(Duration.ofMinutes(4))
        .run().report().duration()).isEqualTo(Duration.ofMinutes(4));
  }

  @Test
  void aTopologyCountsAttemptsPerCallWhereTheyCompound() {
    Scenario topology = Scenario.topology();
    PolicyOutcome outcome = PolicyCheck.of(Resilience.DEFAULT.with(s -> s.name("frontend").attempts(4)
            .backoff(dev.quell.Backoff.constant(Duration.ofMillis(10))).budget(RetryBudget.NONE)))
        .against(topology.arms().get(0).simulation().target())
        .under(topology.arms().get(0).simulation().load())
        .lasting(topology.arms().get(0).simulation().duration())
        .chartsIn(charts)
        .run();
    assertThatThrownBy(() -> outcome.hasAttemptsPerCallDuringIncidentAtMost(2))
        .hasMessageStartingWith("policy check 'frontend' failed: attempts per call during outage at database was");
  }

  @Test
  void aScenarioFileThatIsWrongSaysWhereInOneLine(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("bad.yaml");
    Files.writeString(file, "duration: 5m\nload: {perSecond: 0}\ndependency: {p50: 20ms, p99: 100ms}\n");
    assertThatThrownBy(() -> PolicyCheck.of(Scenario.referencePolicy(RetryBudget.AUTOMATIC)).against(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bad.yaml: load.perSecond must be a number of calls per second above 0, was 0");
  }

  @Test
  void limitsThatMakeNoSenseAreConfigurationErrorsNamingTheFigure() {
    PolicyOutcome outcome = PolicyCheck.of(Scenario.referencePolicy(RetryBudget.AUTOMATIC))
        .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)))
        .lasting(Duration.ofSeconds(10))
        .run();
    assertThatThrownBy(() -> outcome.hasWorstSecondAtMost(Double.NaN))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("worst second maximum was NaN");
    assertThatThrownBy(() -> outcome.hasAvailabilityAtLeast(99))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("availability minimum was 99.0")
        .hasMessageContaining("0.99 for 99%");
    assertThatThrownBy(() -> outcome.recoversWithin(Duration.ofSeconds(-1)))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("time to recover");
    assertThatThrownBy(() -> reference(RetryBudget.AUTOMATIC).seeds())
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("seeds was empty");
    // a dependency without an incident: nothing to say about one
    assertThatThrownBy(() -> outcome.recoversWithin(Duration.ofSeconds(5)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no incident");
    assertThatThrownBy(() -> PolicyCheck.of(Resilience.DEFAULT).run())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("against(dependency)");
  }
}
