package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Hedge;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Java examples of docs/simulation.md, verbatim where the page shows code. */
class DocsExamplesTest {

  /** docs/simulation.md's policy and dependency, verbatim, shared by the examples that use them. */
  private static final class Inventory {
    final Resilience policy;
    final Dependency inventory;

    Inventory() {
      Resilience policy = Resilience.DEFAULT.with(s -> s
          .name("inventory")
          .attempts(3)
          .attemptTimeout(Duration.ofMillis(160))
          .backoff(Backoff.exponential(Duration.ofMillis(50)))
          .deadline(Duration.ofSeconds(1)));

      Dependency inventory = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
          .named("inventory")
          .capacity(400)
          .incident(Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3)));
      this.policy = policy;
      this.inventory = inventory;
    }
  }

  @Test
  void theReferencePolicyAsTheDocsShowIt() {
    Resilience shown = Resilience.DEFAULT.with(s -> s
        .attempts(3)
        .attemptTimeout(Duration.ofMillis(160))
        .backoff(Backoff.exponential(Duration.ofMillis(50)))
        .deadline(Duration.ofSeconds(1))
        .budget(RetryBudget.NONE));       // "budget off"; the other arm keeps RetryBudget.AUTOMATIC
    assertThat(shown.withName("reference")).isEqualTo(Scenario.referencePolicy(RetryBudget.NONE));
  }

  @Test
  void modellingYourOwnDependency() {
    Inventory example = new Inventory();
    Resilience policy = example.policy;
    Dependency inventory = example.inventory;

    SimulationReport report = Simulate.policy(policy)
        .against(inventory)
        .under(Load.perSecond(500).peers(15))
        .lasting(Duration.ofMinutes(5))
        .run(42);

    report.loadMultiplier();   // attempts ÷ calls
    report.worstSecond();      // and report.worstSecondAt(), in seconds from the start
    report.phases();           // availability before, during and after the brownout
    report.timeToRecover();    // empty if it had not recovered when the run ended
    report.diagnosis();        // HEALTHY, RETRY_STORM, METASTABLE_FAILURE or CAPACITY_PROBLEM
    report.series();           // one Second per second: offered, attempts, refusals, tokens, occupancy…
    report.toJson();

    assertThat(policy.name()).isEqualTo("inventory");
    assertThat(report.phases()).hasSize(3);
    assertThat(report.diagnosis()).isEqualTo(Diagnosis.HEALTHY);
    assertThat(report.timeToRecover()).isPresent();
  }

  @Test
  void bandsAndScenarios() {
    Inventory example = new Inventory();
    Resilience policy = example.policy;
    Dependency inventory = example.inventory;

    SimulationBands bands = Simulate.policy(policy).against(inventory).under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(5))
        .runSeeds(1, 2, 3, 4, 5);
    Band worst = bands.worstSecond();   // worst.median(), worst.min(), worst.max()
    assertThat(worst.max()).isLessThan(1.2);

    Load load = Load.perSecond(500).peers(15);
    Duration fiveMinutes = Duration.ofMinutes(5);
    Scenario scenario = Scenario.of("inventory", "budget off and on, 16 pods", List.of(
        new Scenario.Arm("budget off",
            Simulate.policy(policy.withBudget(RetryBudget.NONE)).against(inventory).under(load).lasting(fiveMinutes)),
        new Scenario.Arm("budget on", Simulate.policy(policy).against(inventory).under(load).lasting(fiveMinutes))));
    String table = scenario.run(1).toTable();
    assertThat(table).contains("budget off", "budget on", "load multiplier");
  }

  @Test
  void aBudgetOfYourOwnOnTheSimulationClock() {
    Inventory example = new Inventory();
    Resilience policy = example.policy;
    Dependency inventory = example.inventory;
    SimulationReport report = Simulate.policy(clock -> policy.withBudget(RetryBudget.of(0.2, 5, clock)))
        .against(inventory)
        .under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(3))
        .run(1);
    assertThat(report.retriesRefused()).isPositive();
  }

  @Test
  void aBreakerAsConfigurationIsBuiltAfreshForEveryRun() {
    Inventory example = new Inventory();
    Resilience policy = example.policy;
    Dependency inventory = example.inventory;
    SimulationReport guarded = Simulate.policy(policy.withBreaker(CircuitBreaker.Config.DEFAULT))
        .against(inventory)
        .under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(3))
        .run(1);
    guarded.refusedByBreaker();   // attempts it refused: none of them reached the dependency
    // the brownout makes half the attempts time out: the breaker opens
    assertThat(guarded.refusedByBreaker()).isPositive();
    assertThat(guarded.entry().breaker()).startsWith("CircuitBreaker.Config[");
  }

  @Test
  void limitersFromAFactory() {
    Inventory example = new Inventory();
    Resilience policy = example.policy;
    Dependency inventory = example.inventory;
    SimulationReport limited = Simulate.policy(clock -> policy.withTimeSource(clock)
            .withLimiter(Limiter.rate(400, 40, clock))
            .withLimiter(Limiter.concurrency(100)))
        .against(inventory)
        .under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(3))
        .run(1);
    limited.limited();            // attempts the limiters refused (each call ended LIMITED)
    assertThat(limited.limited()).isPositive();   // 500 calls a second against a rate of 400
    assertThat(limited.entry().limiters()).isEqualTo("rate, burst 40, concurrency 100");
  }

  @Test
  void hedgesAgainstAHeavyTail() {
    Inventory example = new Inventory();
    Resilience policy = example.policy;
    Dependency tailed = Dependency.latency(Duration.ofMillis(10), Duration.ofMillis(40))
        .tail(0.02, Duration.ofMillis(300), Duration.ofSeconds(1));   // 2% of attempts are this slow
    SimulationReport hedged = Simulate.policy(policy.withHedge(Hedge.maxExtraLoad(0.05)))
        .against(tailed)
        .under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(2))
        .run(1);
    hedged.latency().p999();      // the tail the hedges cut...
    hedged.hedges();              // ...and what they cost, in attempts the dependency served
    assertThat(hedged.hedges()).isPositive();
    SimulationReport unhedged = Simulate.policy(policy).against(tailed).under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(2)).run(1);
    assertThat(hedged.latency().p99()).isLessThan(unhedged.latency().p99().dividedBy(4));
    assertThat(hedged.latency().p999()).isLessThan(unhedged.latency().p999());
  }

  @Test
  void topologies() {
    Resilience fourAttempts = Resilience.DEFAULT.withAttempts(4).withBudget(RetryBudget.NONE);
    Dependency database = Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(50))
        .named("database")
        .incident(Incident.outage().between(Duration.ofSeconds(30), Duration.ofSeconds(90)));
    Service backend = Service.named("backend").calls(database, fourAttempts);
    Service frontend = Service.named("frontend").calls(backend, fourAttempts);

    SimulationReport layers = Simulate.policy(fourAttempts)
        .against(frontend)
        .under(Load.perSecond(100))
        .lasting(Duration.ofMinutes(2))
        .run(1);
    layers.node("database").attemptsPerCallByPhase();   // about 64 during the outage (1.1 with budgets)
    layers.edges();                                      // every caller → target edge, each with its own numbers

    assertThat(layers.node("database").attemptsPerCallByPhase().get(1)).isBetween(60.0, 64.5);
    assertThat(layers.edges()).hasSize(3);

    SimulationReport withBudgets = Simulate.policy(fourAttempts.withBudget(RetryBudget.AUTOMATIC))
        .against(Service.named("frontend").calls(Service.named("backend")
            .calls(database, fourAttempts.withBudget(RetryBudget.AUTOMATIC)), fourAttempts.withBudget(RetryBudget.AUTOMATIC)))
        .under(Load.perSecond(100)).lasting(Duration.ofMinutes(2)).run(1);
    assertThat(withBudgets.node("database").attemptsPerCallByPhase().get(1)).isLessThan(1.2);
  }
}
