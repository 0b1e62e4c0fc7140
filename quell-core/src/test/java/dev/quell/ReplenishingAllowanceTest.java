package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ReplenishingAllowanceTest {
  private final ManualClock clock = new ManualClock();

  @Test
  void allowsMaxTokensPerWindowAndRefillsToFullWithoutCarryOver() {
    RetryBudget a = RetryBudget.replenishing(3, Duration.ofSeconds(10), clock);
    assertThat(a.trySpend()).isTrue();
    assertThat(a.trySpend()).isTrue();
    assertThat(a.trySpend()).isTrue();
    assertThat(a.trySpend()).isFalse();
    assertThat(a.retryAfter()).contains(Duration.ofSeconds(10));
    clock.advance(Duration.ofSeconds(9));
    assertThat(a.trySpend()).isFalse();
    assertThat(a.retryAfter()).contains(Duration.ofSeconds(1));
    clock.advance(Duration.ofSeconds(1));
    assertThat(a.tokens()).isEqualTo(3.0);
    clock.advance(Duration.ofSeconds(25)); // unused windows do not accumulate
    assertThat(a.tokens()).isEqualTo(3.0);
  }

  @Test
  void outcomesNeverChangeTheBalance() {
    RetryBudget a = RetryBudget.replenishing(2, Duration.ofSeconds(1), clock);
    a.trySpend();
    a.deposit();
    a.recordFailure();
    assertThat(a.tokens()).isEqualTo(1.0);
  }

  @Test
  void windowsAreAnchoredAtCreation() {
    clock.advance(Duration.ofMillis(700));
    RetryBudget a = RetryBudget.replenishing(1, Duration.ofSeconds(1), clock);
    assertThat(a.trySpend()).isTrue();
    clock.advance(Duration.ofMillis(999));
    assertThat(a.trySpend()).isFalse();
    clock.advance(Duration.ofMillis(1));
    assertThat(a.trySpend()).isTrue();
  }

  @Test
  void criticalityReservesHoldBackTheirShareAndTheCriticalLevelsSpendTheLastToken() {
    // five tokens: SHEDDABLE must leave floor(0.5 × 4) = 2, SHEDDABLE_PLUS floor(0.25 × 4) = 1
    RetryBudget a = RetryBudget.replenishing(5, Duration.ofSeconds(1), clock);
    assertThat(a.trySpend(Criticality.SHEDDABLE)).isTrue(); // 4 left
    assertThat(a.trySpend(Criticality.SHEDDABLE)).isTrue(); // 3 left
    assertThat(a.trySpend(Criticality.SHEDDABLE)).isTrue(); // 2 left
    assertThat(a.wouldFund(Criticality.SHEDDABLE)).isFalse();
    assertThat(a.trySpend(Criticality.SHEDDABLE)).as("its reserve of 2").isFalse();
    assertThat(a.wouldFund(Criticality.SHEDDABLE_PLUS)).isTrue();
    assertThat(a.trySpend(Criticality.SHEDDABLE_PLUS)).isTrue(); // 1 left
    assertThat(a.trySpend(Criticality.SHEDDABLE_PLUS)).as("its reserve of 1").isFalse();
    assertThat(a.wouldFund(Criticality.CRITICAL)).isTrue();
    assertThat(a.tokens()).as("asking never spends").isEqualTo(1.0);
    assertThat(a.trySpend(Criticality.CRITICAL)).as("the last token").isTrue();
    assertThat(a.wouldFund(Criticality.CRITICAL_PLUS)).isFalse();
    assertThat(a.trySpend(Criticality.CRITICAL_PLUS)).isFalse();
  }

  @Test
  void aFullAllowanceOfOneFundsEveryLevel() {
    for (Criticality c : Criticality.values()) {
      RetryBudget a = RetryBudget.replenishing(1, Duration.ofSeconds(1), clock);
      assertThat(a.wouldFund(c)).as("%s", c).isTrue();
      assertThat(a.trySpend(c)).as("%s", c).isTrue();
    }
  }

  @Test
  void retryAfterIsZeroWhileALevelIsFundedAndTheNextWindowOnceItIsNot() {
    RetryBudget a = RetryBudget.replenishing(5, Duration.ofSeconds(1), clock);
    clock.advance(Duration.ofMillis(300));
    a.trySpend(Criticality.SHEDDABLE);
    a.trySpend(Criticality.SHEDDABLE);
    assertThat(a.retryAfterNanos(Criticality.SHEDDABLE)).as("one more still funded").isZero();
    a.trySpend(Criticality.SHEDDABLE);
    assertThat(a.retryAfterNanos(Criticality.SHEDDABLE)).as("until the window turns")
        .isEqualTo(Duration.ofMillis(700).toNanos());
    assertThat(a.retryAfterNanos(Criticality.CRITICAL)).as("still funded for critical work").isZero();
    assertThat(a.retryAfter()).as("tokens left: no wait").contains(Duration.ZERO);
    clock.advance(Duration.ofMillis(699));
    assertThat(a.retryAfterNanos(Criticality.SHEDDABLE)).isEqualTo(Duration.ofMillis(1).toNanos());
    clock.advance(Duration.ofMillis(1));
    assertThat(a.retryAfterNanos(Criticality.SHEDDABLE)).as("a new window").isZero();
  }

  @Test
  void utilizationTokensCapacityAndName() {
    RetryBudget a = RetryBudget.replenishing(4, Duration.ofSeconds(1), clock);
    assertThat(a.capacity()).isEqualTo(4.0);
    assertThat(a.utilization()).isZero();
    a.trySpend();
    assertThat(a.utilization()).isEqualTo(0.25);
    a.trySpend();
    a.trySpend();
    assertThat(a.utilization()).isEqualTo(0.75);
    assertThat(a.tokens()).isEqualTo(1.0);
    assertThat(a.name()).isNotEmpty();
    assertThat(a.toString()).contains(a.name()).contains("4 per PT1S");
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> RetryBudget.replenishing(0, Duration.ofSeconds(1)))
        .hasMessageContaining("maxTokens was 0").hasMessageContaining("RetryBudget.NONE");
    assertThatThrownBy(() -> RetryBudget.replenishing(1, Duration.ZERO)).hasMessageContaining("period");
  }
}
