package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConcurrentBudgetTest {

  @Test
  void theDefaultsAreEnvoys() {
    RetryBudget budget = RetryBudget.concurrent();
    startCalls(budget, 25);
    assertThat(budget.capacity()).isEqualTo(5.0); // envoy#9069: 20%, minimum 3 → 5 retries at 25 active
    assertThat(spendAll(budget, Criticality.CRITICAL)).isEqualTo(5);
    assertThat(budget.name()).startsWith("concurrent-");
    assertThat(budget.isUnbounded()).isFalse();
  }

  @Test
  void theMinimumKeepsALowTrafficClientAbleToRetry() {
    RetryBudget budget = RetryBudget.concurrent(0.2, 3);
    startCalls(budget, 1);
    assertThat(budget.capacity()).isEqualTo(3.0);
    assertThat(spendAll(budget, Criticality.CRITICAL)).isEqualTo(3);
    assertThat(budget.tokens()).isZero();
    assertThat(budget.utilization()).isEqualTo(1.0);
    assertThat(budget.retryAfter()).as("only traffic makes room").isEmpty();
  }

  @Test
  void anEndingRetryOrHedgeGivesItsRoomBack() {
    RetryBudget budget = RetryBudget.concurrent(0.5, 0);
    startCalls(budget, 4);
    assertThat(spendAll(budget, Criticality.CRITICAL)).isEqualTo(2);
    budget.additionalEnded();
    assertThat(budget.retryAfter()).contains(Duration.ZERO);
    assertThat(budget.tokens()).isEqualTo(1.0);
    assertThat(budget.trySpend()).isTrue();
    assertThat(budget.trySpend()).isFalse();
  }

  @Test
  void theAllowanceFollowsTheCallsInFlight() {
    RetryBudget budget = RetryBudget.concurrent(0.1, 1);
    startCalls(budget, 30);
    assertThat(spendAll(budget, Criticality.CRITICAL)).isEqualTo(3);
    for (int i = 0; i < 20; i++) {
      budget.callEnded();
    }
    // 10 calls left: the allowance is 1 and 3 are still in flight; nothing more until they end
    assertThat(budget.capacity()).isEqualTo(1.0);
    assertThat(budget.tokens()).isZero();
    assertThat(budget.utilization()).isEqualTo(1.0);
    assertThat(budget.trySpend()).isFalse();
    budget.additionalEnded();
    budget.additionalEnded();
    assertThat(budget.trySpend()).isFalse();
    budget.additionalEnded();
    assertThat(budget.trySpend()).isTrue();
  }

  @Test
  void percentagesAreExactFixedPoint() {
    RetryBudget budget = RetryBudget.concurrent(0.29, 0);
    startCalls(budget, 100);
    assertThat(budget.capacity()).isEqualTo(29.0); // 0.29 × 100 is 28.999999999999996 in doubles
  }

  @Test
  void lowerCriticalitiesLeaveTheirReserveButAHealthyBudgetFundsEveryLevel() {
    RetryBudget budget = RetryBudget.concurrent(0.2, 0);
    startCalls(budget, 45); // allowance 9
    // as for every kind, a level's reserve is its share of the allowance beyond the retry itself
    assertThat(spendAll(budget, Criticality.SHEDDABLE)).isEqualTo(5); // leaves half of 8
    assertThat(spendAll(budget, Criticality.SHEDDABLE_PLUS)).isEqualTo(2); // leaves a quarter of 8
    assertThat(spendAll(budget, Criticality.CRITICAL)).isEqualTo(2);

    RetryBudget small = RetryBudget.concurrent(0.2, 1);
    startCalls(small, 1); // allowance 1: a healthy budget still funds background work
    assertThat(small.trySpend(Criticality.SHEDDABLE)).isTrue();
    assertThat(small.trySpend(Criticality.CRITICAL_PLUS)).isFalse();
  }

  @Test
  void theCoreCanAskWithoutChargingAndLearnsThatOnlyTrafficMakesRoom() {
    RetryBudget budget = RetryBudget.concurrent(0.2, 3);
    assertThat(budget.wouldFund(Criticality.SHEDDABLE)).isTrue();
    assertThat(budget.wouldFund(Criticality.SHEDDABLE)).as("asking charges nothing").isTrue();
    assertThat(budget.retryAfterNanos(Criticality.CRITICAL)).isZero();
    assertThat(budget.trySpend(Criticality.CRITICAL)).isTrue();
    assertThat(budget.trySpend(Criticality.CRITICAL)).isTrue();
    assertThat(budget.wouldFund(Criticality.SHEDDABLE)).as("2 of 3 in flight: past half").isFalse();
    assertThat(budget.retryAfterNanos(Criticality.SHEDDABLE)).isEqualTo(-1);
    assertThat(budget.wouldFund(Criticality.CRITICAL)).isTrue();
    assertThat(budget.trySpend(Criticality.CRITICAL)).isTrue();
    assertThat(budget.wouldFund(Criticality.CRITICAL_PLUS)).isFalse();
    assertThat(budget.retryAfterNanos(Criticality.CRITICAL_PLUS)).isEqualTo(-1);
    budget.additionalEnded();
    assertThat(budget.retryAfterNanos(Criticality.CRITICAL)).isZero();
  }

  @Test
  void depositsAndFailuresChangeNothing() {
    RetryBudget budget = RetryBudget.concurrent(0.2, 2);
    budget.deposit();
    budget.recordFailure();
    assertThat(budget.tokens()).isEqualTo(2.0);
    assertThat(budget.utilization()).isZero();
  }

  @Test
  void moreEndsThanStartsNeverDriveACountNegative() {
    ConcurrentAllowance budget = (ConcurrentAllowance) RetryBudget.concurrent(0.2, 3);
    budget.callEnded();
    budget.additionalEnded();
    assertThat(budget.callsInFlight()).isZero();
    assertThat(budget.additionalInFlight()).isZero();
    assertThat(budget.tokens()).isEqualTo(3.0);
  }

  @Test
  void aMinimumOfZeroWithNoCallsFundsNothingAndReadsFullyUsed() {
    RetryBudget budget = RetryBudget.concurrent(0.2, 0);
    assertThat(budget.trySpend()).isFalse();
    assertThat(budget.utilization()).isEqualTo(1.0);
    assertThat(budget.retryAfter()).isEmpty();
  }

  @Test
  void badParametersAreNamedWithTheirValues() {
    assertThatThrownBy(() -> RetryBudget.concurrent(0, 3)).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("concurrent budget percent was 0.0")
        .hasMessageContaining("RetryBudget.NONE");
    assertThatThrownBy(() -> RetryBudget.concurrent(1.5, 3)).hasMessageContaining("percent was 1.5");
    assertThatThrownBy(() -> RetryBudget.concurrent(Double.NaN, 3)).hasMessageContaining("percent was NaN");
    assertThatThrownBy(() -> RetryBudget.concurrent(20, 3)).hasMessageContaining("0.2 means 20%");
    assertThatThrownBy(() -> RetryBudget.concurrent(0.2, -1)).hasMessageContaining("concurrent budget minimum was -1");
    ResilienceConfigurationException both = catchThrowableOfType(
        ResilienceConfigurationException.class, () -> RetryBudget.concurrent(Double.NEGATIVE_INFINITY, Integer.MAX_VALUE));
    assertThat(both.problems()).hasSize(2);
  }

  @Test
  void toStringShowsTheCounts() {
    RetryBudget budget = RetryBudget.concurrent(0.25, 1);
    startCalls(budget, 8);
    budget.trySpend();
    assertThat(budget.toString()).contains("calls=8", "additional=1/2");
  }

  static void startCalls(RetryBudget budget, int n) {
    for (int i = 0; i < n; i++) {
      budget.callStarted();
    }
  }

  static int spendAll(RetryBudget budget, Criticality criticality) {
    int n = 0;
    while (budget.trySpend(criticality)) {
      n++;
    }
    return n;
  }
}
