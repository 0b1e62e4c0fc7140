package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.RetryBudget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** SPEC §9: arms and seeds run on all cores, with results that do not depend on how many. */
class ScenarioRunsTest {

  private static Scenario shortReference() {
    List<Scenario.Arm> arms = new ArrayList<>();
    for (Scenario.Arm a : Scenario.reference().arms()) {
      arms.add(new Scenario.Arm(a.name(), a.simulation().under(Load.perSecond(300)).lasting(Duration.ofSeconds(150))));
    }
    return Scenario.of("short", "the reference brownout, shorter", arms);
  }

  @Test
  void manyThreadsGiveTheSameResultAsOne() {
    long[] seeds = {1, 2, 3, 4};
    ScenarioResult one = shortReference().parallelism(1).run(seeds);
    ScenarioResult many = shortReference().parallelism(4).run(seeds);
    assertThat(one.threads()).isEqualTo(1);
    assertThat(many.threads()).isEqualTo(4);
    for (int a = 0; a < one.arms().size(); a++) {
      for (int i = 0; i < seeds.length; i++) {
        assertThat(many.arms().get(a).bands().reports().get(i).toJson())
            .isEqualTo(one.arms().get(a).bands().reports().get(i).toJson());
      }
    }
    assertThat(many.toTable()).isEqualTo(one.toTable());
    assertThat(many.toCsv()).isEqualTo(one.toCsv());
  }

  @Test
  void theDefaultIsOneThreadPerProcessor() {
    assertThat(shortReference().parallelism()).isEqualTo(Runtime.getRuntime().availableProcessors());
    assertThatThrownBy(() -> shortReference().parallelism(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1");
  }

  @Test
  void progressCountsEverySimulatedSecondOfEveryRun() {
    Progress progress = Progress.tracker();
    shortReference().parallelism(2).run(progress, 1, 2);
    assertThat(progress.runsPlanned()).isEqualTo(4);
    assertThat(progress.runsDone()).isEqualTo(4);
    assertThat(progress.plannedSeconds()).isEqualTo(4 * 150);
    assertThat(progress.doneSeconds()).isEqualTo(progress.plannedSeconds());
    assertThat(progress.fraction()).isEqualTo(1.0);
  }

  @Test
  void anInterruptStopsTheRunsAndLeavesNoThreadBehind() throws Exception {
    Scenario day = Scenario.of("long", "long enough to interrupt", List.of(
        new Scenario.Arm("a", Simulate.policy(Scenario.referencePolicy(RetryBudget.NONE))
            .against(Scenario.referenceDependency()).under(Load.perSecond(500)).lasting(Duration.ofHours(6))),
        new Scenario.Arm("b", Simulate.policy(Scenario.referencePolicy(RetryBudget.AUTOMATIC))
            .against(Scenario.referenceDependency()).under(Load.perSecond(500)).lasting(Duration.ofHours(6)))));
    Progress progress = Progress.tracker();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    CountDownLatch ended = new CountDownLatch(1);
    Thread runner = new Thread(() -> {
      try {
        day.parallelism(2).run(progress, 1);
      } catch (Throwable t) {
        thrown.set(t);
      } finally {
        ended.countDown();
      }
    });
    runner.start();
    while (progress.doneSeconds() < 2 && ended.getCount() > 0) {
      Thread.onSpinWait();
    }
    runner.interrupt();
    assertThat(ended.await(60, TimeUnit.SECONDS)).isTrue();
    assertThat(thrown.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("interrupted");
    assertThat(progress.doneSeconds()).isLessThan(progress.plannedSeconds());
    runner.join(60_000);
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("quell-sim-")) {
        t.join(60_000);
        assertThat(t.isAlive()).as(t.getName()).isFalse();
      }
    }
  }

  @Test
  void anEstimateCountsCallsAndBoundsAttemptsBeforeAnythingRuns() {
    Estimate e = Scenario.reference().estimate(3);
    assertThat(e.runs()).isEqualTo(6);
    assertThat(e.simulatedSeconds()).isEqualTo(6 * 300);
    assertThat(e.calls()).isEqualTo(6 * 150_000);
    assertThat(e.attempts()).isEqualTo(3 * e.calls()); // 3 attempts a call at most
    assertThat(e.overAttemptLimit()).isFalse();
    assertThat(e.bytes()).isBetween(1_000_000L, 200_000_000L);

    // the topology multiplies: 4 attempts on each of three edges is up to 4 + 16 + 64 per call
    Estimate layers = Scenario.topology().estimate(1);
    assertThat(layers.attempts()).isEqualTo(2 * 12_000L * (4 + 16 + 64));
  }

  @Test
  void aHugeRunIsOverTheLimitWithoutOverflowing() {
    Simulation huge = Simulate.policy(Scenario.referencePolicy(RetryBudget.NONE))
        .against(Scenario.referenceDependency()).under(Load.perSecond(1_000_000)).lasting(Duration.ofDays(1));
    Estimate e = Scenario.of("huge", "a day at a million calls a second", List.of(new Scenario.Arm("a", huge)))
        .estimate(1000);
    assertThat(e.overAttemptLimit()).isTrue();
    assertThat(e.attempts()).isPositive();
    assertThat(e.bytes()).isPositive();
    assertThat(e.toString()).contains("attempts");
  }

  @Test
  void anIncidentAfterTheEndOfTheRunIsRefused() {
    Simulation late = Simulate.policy(Scenario.referencePolicy(RetryBudget.NONE))
        .against(Scenario.referenceDependency().incident(
            Incident.outage().between(Duration.ofMinutes(6), Duration.ofMinutes(7))))
        .lasting(Duration.ofMinutes(5));
    assertThatThrownBy(() -> late.run(1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("outage from 6:00 to 7:00").hasMessageContaining("after the end of the run (5:00)");
  }
}
