package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.RetryBudget;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** SPEC §9's reference scenario: the budget lowers the load multiplier and bounds the worst second. */
class ReferenceScenarioTest {
  private static final long[] SEEDS = {1, 2, 3};
  private static ScenarioResult result;

  @BeforeAll
  static void run() {
    result = Scenario.reference().run(SEEDS);
  }

  @Test
  void theBudgetLowersTheLoadMultiplierAndTheWorstSecondForEverySeed() {
    List<SimulationReport> off = result.arm("budget off").bands().reports();
    List<SimulationReport> on = result.arm("budget on").bands().reports();
    for (int i = 0; i < SEEDS.length; i++) {
      assertThat(on.get(i).loadMultiplier()).as("seed %d", SEEDS[i]).isLessThan(off.get(i).loadMultiplier());
      assertThat(on.get(i).worstSecond()).as("seed %d", SEEDS[i]).isLessThan(off.get(i).worstSecond());
    }
  }

  @Test
  void theBudgetOnWorstSecondRespectsTheBucketBound() {
    // in any one second the bucket can fund at most what it held, plus a second of its floor, plus a
    // tenth of that second's successes: 1 + (capacity + floor + fraction × rate) / rate
    RetryBudget budget = Scenario.referencePolicy(RetryBudget.AUTOMATIC).budget();
    double capacity = budget.capacity();
    double rate = 500;
    double bound = 1 + (capacity + RetryBudget.DEFAULT_MINIMUM_PER_SECOND + RetryBudget.DEFAULT_FRACTION * rate) / rate;
    assertThat(capacity).isEqualTo(30);
    assertThat(bound).isEqualTo(1.166, org.assertj.core.data.Offset.offset(1e-9));
    for (SimulationReport on : result.arm("budget on").bands().reports()) {
      assertThat(on.worstSecond()).as("seed %d", on.seed()).isLessThanOrEqualTo(bound);
    }
  }

  @Test
  void withoutTheBudgetTheBrownoutStartsARetryStormAndWithItTheRunStaysHealthy() {
    for (SimulationReport off : result.arm("budget off").bands().reports()) {
      assertThat(off.diagnosis()).isEqualTo(Diagnosis.RETRY_STORM);
      assertThat(off.worstSecond()).isGreaterThan(1.5);
      assertThat(off.worstSecondAt()).isBetween(120, 180);
      assertThat(off.retriesRefused()).isZero();
    }
    for (SimulationReport on : result.arm("budget on").bands().reports()) {
      assertThat(on.diagnosis()).isEqualTo(Diagnosis.HEALTHY);
      assertThat(on.retriesRefused()).isPositive();
      assertThat(on.stopReasons()).containsKey(dev.quell.StopReason.BUDGET_EXHAUSTED);
    }
  }

  @Test
  void phasesCutTheRunAtTheBrownout() {
    SimulationReport on = result.arm("budget on").first();
    assertThat(on.phases()).extracting(Phase::name).containsExactly("before", "during brownout ×8", "after");
    Phase before = on.phases().get(0);
    Phase during = on.phases().get(1);
    Phase after = on.phases().get(2);
    assertThat(before.to()).isEqualTo(java.time.Duration.ofMinutes(2));
    assertThat(during.incident()).isTrue();
    assertThat(before.availability()).isGreaterThan(0.999);
    assertThat(after.availability()).isGreaterThan(0.999);
    assertThat(during.availability()).isLessThan(before.availability());
    assertThat(before.calls() + during.calls() + after.calls()).isEqualTo(on.calls());
    assertThat(on.timeToRecover()).hasValueSatisfying(d -> assertThat(d).isLessThanOrEqualTo(java.time.Duration.ofSeconds(5)));
  }

  @Test
  void everyCallIsAccountedForAndTheSeriesAddsUp() {
    for (ScenarioResult.ArmResult arm : result.arms()) {
      SimulationReport r = arm.first();
      long ended = r.stopReasons().values().stream().mapToLong(Long::longValue).sum();
      assertThat(ended).as(arm.name()).isEqualTo(r.calls());
      assertThat(r.entry().unfinished()).isZero();
      assertThat(r.attempts()).isEqualTo(r.entry().firstAttempts() + r.retries());
      assertThat(r.entry().firstAttempts()).isEqualTo(r.calls());
      assertThat(r.series()).hasSize(300);
      assertThat(r.series().stream().mapToLong(Second::offered).sum()).isEqualTo(r.calls());
      assertThat(r.series().stream().mapToLong(Second::succeeded).sum()).isEqualTo(r.entry().succeeded());
      assertThat(r.series().stream().mapToLong(Second::retriesRefused).sum()).isEqualTo(r.retriesRefused());
      assertThat(r.loadMultiplier()).isEqualTo((double) r.attempts() / r.calls());
    }
    // the budget's balance is sampled each second; without a budget there is none
    assertThat(result.arm("budget off").first().series().get(10).budgetTokens()).isNaN();
    assertThat(result.arm("budget on").first().series().get(10).budgetTokens()).isBetween(0.0, 30.0);
    assertThat(result.arm("budget on").first().series().get(150).budgetTokens()).isLessThan(3.0);
  }
}
