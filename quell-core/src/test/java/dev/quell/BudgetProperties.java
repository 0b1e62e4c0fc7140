package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Bounds that must hold for every sequence of successes, retries and passing time. */
class BudgetProperties {

  /** One step: 0 = a successful attempt, 1 = a retry asks to be funded, 2 = time passes by {@code millis}. */
  static final class Step {
    final int kind;
    final int millis;

    Step(int kind, int millis) {
      this.kind = kind;
      this.millis = millis;
    }

    @Override
    public String toString() {
      return kind == 0 ? "success" : kind == 1 ? "retry" : "wait " + millis + "ms";
    }
  }

  @Property(tries = 500)
  void retriesNeverExceedFractionOfSuccessesPlusFloorTimesElapsedPlusCapacity(
      @ForAll("fractions") double fraction, @ForAll("floors") double floor, @ForAll("steps") List<Step> steps) {
    ManualClock clock = new ManualClock();
    RetryBudget budget = RetryBudget.of(fraction, floor, clock);
    long successes = 0;
    long retries = 0;
    long elapsedNanos = 0;
    for (Step s : steps) {
      switch (s.kind) {
        case 0:
          budget.deposit();
          successes++;
          break;
        case 1:
          if (budget.trySpend()) {
            retries++;
          }
          break;
        default:
          clock.advance(Duration.ofMillis(s.millis));
          elapsedNanos += Duration.ofMillis(s.millis).toNanos();
      }
      double bound = fraction * successes + floor * elapsedNanos / 1e9 + budget.capacity();
      assertThat((double) retries).isLessThanOrEqualTo(bound + 1e-6);
      assertThat(budget.tokens()).isBetween(0.0, budget.capacity());
    }
  }

  @Property(tries = 300)
  void aHealthyTrafficMixIsNeverRefusedWhileTheBalanceCoversIt(@ForAll("fractions") double fraction) {
    // retries at exactly the funded rate are always granted: the bucket refuses amplification, not traffic
    ManualClock clock = new ManualClock();
    RetryBudget budget = TokenBucketTest.drained(RetryBudget.of(fraction, 0, clock));
    int per = (int) Math.ceil(1.0 / fraction);
    for (int round = 0; round < 20; round++) {
      for (int i = 0; i < per; i++) {
        budget.deposit();
      }
      assertThat(budget.trySpend()).as("round %d", round).isTrue();
    }
  }

  @Provide
  Arbitrary<Double> fractions() {
    return Arbitraries.of(0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0);
  }

  @Provide
  Arbitrary<Double> floors() {
    return Arbitraries.of(0.0, 0.5, 1.0, 3.0, 10.0, 100.0);
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Step> step = Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers().between(1, 2000))
        .as(Step::new);
    return step.list().ofMaxSize(400);
  }
}
