package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** gRPC's retry throttling, gRFC A6: checked against a plain integer model of the spec. */
class FeedbackThrottleTest {

  @Test
  void tenRefundsOfOneTenthAreExactlyOneToken() {
    FeedbackThrottle t = (FeedbackThrottle) RetryBudget.feedback(10, 0.1);
    t.recordFailure();
    assertThat(t.milliTokens()).isEqualTo(9000);
    for (int i = 0; i < 10; i++) {
      t.deposit();
    }
    assertThat(t.milliTokens()).isEqualTo(10_000);
    assertThat(t.tokens()).isEqualTo(10.0);
  }

  @Test
  void retriesAreAllowedOnlyStrictlyAboveHalf() {
    RetryBudget t = RetryBudget.feedback(10, 0.5);
    for (int i = 0; i < 4; i++) {
      t.recordFailure();
    }
    assertThat(t.tokens()).isEqualTo(6.0);
    assertThat(t.trySpend()).isTrue();
    assertThat(t.tokens()).as("spending does not charge the feedback throttle").isEqualTo(6.0);
    t.recordFailure();
    assertThat(t.tokens()).isEqualTo(5.0);
    assertThat(t.trySpend()).as("exactly half is not above half").isFalse();
    assertThat(t.utilization()).isEqualTo(1.0);
    t.deposit();
    assertThat(t.trySpend()).isTrue();
  }

  @Test
  void ratioIsTruncatedToThreeDecimals() {
    FeedbackThrottle t = (FeedbackThrottle) RetryBudget.feedback(10, 0.1239);
    t.recordFailure();
    t.deposit();
    assertThat(t.milliTokens()).isEqualTo(9123);
  }

  @Test
  void lowerLevelsKeepTheirReserveOfTheHeadroomAboveHalf() {
    // ten tokens: retries need more than 5; SHEDDABLE more than 5 + 0.5 × 5 = 7.5, SHEDDABLE_PLUS more than 6.25
    FeedbackThrottle t = (FeedbackThrottle) RetryBudget.feedback(10, 0.1);
    for (Criticality c : Criticality.values()) {
      assertThat(t.trySpend(c)).as("full funds %s", c).isTrue();
    }
    t.recordFailure();
    t.recordFailure();
    t.recordFailure(); // 7
    assertThat(t.trySpend(Criticality.SHEDDABLE)).isFalse();
    assertThat(t.wouldFund(Criticality.SHEDDABLE)).isFalse();
    assertThat(t.retryAfterNanos(Criticality.SHEDDABLE)).as("only successes refill it: no time to wait for").isEqualTo(-1);
    assertThat(t.trySpend(Criticality.SHEDDABLE_PLUS)).isTrue();
    assertThat(t.retryAfterNanos(Criticality.SHEDDABLE_PLUS)).isZero();
    for (int i = 0; i < 5; i++) {
      t.deposit(); // 7.5: not strictly above
    }
    assertThat(t.milliTokens()).isEqualTo(7500);
    assertThat(t.trySpend(Criticality.SHEDDABLE)).as("at 7.5 exactly").isFalse();
    t.deposit(); // 7.6
    assertThat(t.trySpend(Criticality.SHEDDABLE)).isTrue();
    assertThat(t.trySpend(Criticality.SHEDDABLE)).as("spending charges nothing").isTrue();
    assertThat(t.milliTokens()).isEqualTo(7600);
    t.recordFailure(); // 6.6
    t.recordFailure(); // 5.6
    assertThat(t.trySpend(Criticality.SHEDDABLE_PLUS)).isFalse();
    assertThat(t.trySpend(Criticality.CRITICAL)).isTrue();
  }

  @Test
  void utilizationRetryAfterAndTheFiguresADashboardReads() {
    FeedbackThrottle t = (FeedbackThrottle) RetryBudget.feedback(10, 0.25);
    assertThat(t.utilization()).isZero();
    assertThat(t.retryAfter()).contains(java.time.Duration.ZERO);
    t.recordFailure();
    t.recordFailure();
    t.recordFailure(); // 7: 3 of the 5 tokens above half spent
    assertThat(t.utilization()).isCloseTo(0.6, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(t.tokens()).isEqualTo(7.0);
    t.recordFailure();
    t.recordFailure(); // 5: retries stop
    assertThat(t.utilization()).isEqualTo(1.0);
    assertThat(t.retryAfter()).as("no wait that a clock could end").isEmpty();
    for (int i = 0; i < 20; i++) {
      t.recordFailure();
    }
    assertThat(t.tokens()).as("never below zero").isZero();
    assertThat(t.utilization()).isEqualTo(1.0);
    for (int i = 0; i < 100; i++) {
      t.deposit();
    }
    assertThat(t.tokens()).as("never above its maximum").isEqualTo(10.0);
    assertThat(t.capacity()).isEqualTo(10.0);
    assertThat(t.tokenRatio()).isEqualTo(0.25);
    assertThat(t.name()).isNotEmpty();
    assertThat(t.toString()).contains(t.name()).contains("tokens=10.0/10.0").contains("ratio=0.25");
  }

  @Test
  void theLimitsOfItsSettingsAreInclusive() {
    assertThat(RetryBudget.feedback(1_000_000, 0.001).capacity()).isEqualTo(1_000_000.0);
    assertThat(RetryBudget.feedback(1, 1_000_000).capacity()).isEqualTo(1.0);
    assertThatThrownBy(() -> RetryBudget.feedback(1_000_001, 0.1)).hasMessageContaining("maxTokens was 1000001");
    assertThatThrownBy(() -> RetryBudget.feedback(10, 0.0009)).hasMessageContaining("tokenRatio was 9.0E-4");
    assertThatThrownBy(() -> RetryBudget.feedback(10, 1_000_001)).hasMessageContaining("tokenRatio");
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> RetryBudget.feedback(0, 0.1)).hasMessageContaining("maxTokens was 0");
    assertThatThrownBy(() -> RetryBudget.feedback(10, 0.0005)).hasMessageContaining("tokenRatio was 5.0E-4");
    assertThatThrownBy(() -> RetryBudget.feedback(10, Double.NaN)).hasMessageContaining("NaN");
  }

  @Property(tries = 300)
  void followsA6OnEveryEventSequence(@ForAll @IntRange(min = 1, max = 50) int maxTokens,
      @ForAll @IntRange(min = 1, max = 5000) int ratioMilli, @ForAll("events") List<Integer> events) {
    RetryBudget t = RetryBudget.feedback(maxTokens, ratioMilli / 1000.0);
    int model = maxTokens * 1000;
    for (int e : events) {
      switch (e) {
        case 0:
          t.recordFailure();
          model = Math.max(0, model - 1000);
          break;
        case 1:
          t.deposit();
          model = Math.min(maxTokens * 1000, model + ratioMilli);
          break;
        default:
          assertThat(t.trySpend()).isEqualTo(model > maxTokens * 1000 / 2);
      }
      assertThat(((FeedbackThrottle) t).milliTokens()).isEqualTo(model);
      assertThat(t.tokens()).isBetween(0.0, t.capacity());
    }
  }

  @Provide
  Arbitrary<List<Integer>> events() {
    return Arbitraries.integers().between(0, 2).list().ofMaxSize(300);
  }
}
