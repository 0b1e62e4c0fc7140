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
  void validation() {
    assertThatThrownBy(() -> RetryBudget.replenishing(0, Duration.ofSeconds(1)))
        .hasMessageContaining("maxTokens was 0").hasMessageContaining("RetryBudget.NONE");
    assertThatThrownBy(() -> RetryBudget.replenishing(1, Duration.ZERO)).hasMessageContaining("period");
  }
}
