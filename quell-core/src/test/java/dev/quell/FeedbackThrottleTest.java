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
