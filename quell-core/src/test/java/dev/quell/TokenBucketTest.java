package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TokenBucketTest {
  private final ManualClock clock = new ManualClock();

  @Test
  void startsFullWithTenSecondsOfTheFloor() {
    RetryBudget budget = RetryBudget.of(0.1, 3, clock);
    assertThat(budget.capacity()).isEqualTo(30.0);
    assertThat(budget.tokens()).isEqualTo(30.0);
    assertThat(budget.utilization()).isZero();
  }

  @Test
  void spendsOneTokenPerRetryAndRefusesWhenEmpty() {
    RetryBudget budget = RetryBudget.of(0.1, 3, clock);
    for (int i = 0; i < 30; i++) {
      assertThat(budget.trySpend()).as("spend %d", i).isTrue();
    }
    assertThat(budget.trySpend()).isFalse();
    assertThat(budget.tokens()).isZero();
    assertThat(budget.utilization()).isEqualTo(1.0);
  }

  @Test
  void eachSuccessDepositsTheFraction() {
    RetryBudget budget = drained(RetryBudget.of(0.1, 3, clock));
    for (int i = 0; i < 10; i++) {
      budget.deposit();
    }
    assertThat(budget.tokens()).isEqualTo(1.0);
    assertThat(budget.trySpend()).isTrue();
    assertThat(budget.trySpend()).isFalse();
  }

  @Test
  void theFloorRefillsFromTheClockLazily() {
    RetryBudget budget = drained(RetryBudget.of(0.1, 3, clock));
    clock.advance(Duration.ofMillis(500));
    assertThat(budget.tokens()).isCloseTo(1.5, within(1e-6));
    clock.advance(Duration.ofSeconds(60));
    assertThat(budget.tokens()).isEqualTo(30.0); // never above capacity
  }

  @Test
  void aFullSpellIsNeverBanked() {
    RetryBudget budget = RetryBudget.of(0.1, 1, clock); // 1 token a second
    clock.advance(Duration.ofHours(1));
    assertThat(budget.tokens()).isEqualTo(10.0); // read while full: the hour is not banked
    clock.advance(Duration.ofNanos(999_999));
    assertThat(budget.tokens()).isEqualTo(10.0); // nor is a sliver of it
    assertThat(budget.trySpend()).isTrue();
    assertThat(budget.tokens()).isEqualTo(9.0); // the refill starts from the spend, not before it
    clock.advance(Duration.ofMillis(500));
    assertThat(budget.tokens()).isCloseTo(9.5, within(1e-6));
  }

  @Test
  void refillIsNotLostInSubMicroTokenSteps() {
    RetryBudget budget = drained(RetryBudget.of(0.1, 3, clock));
    // 3 tokens/s = 3 micro-tokens per microsecond: many tiny steps must add up like one big one
    for (int i = 0; i < 1_000_000; i++) {
      clock.advance(Duration.ofNanos(100));
      budget.trySpend(Criticality.SHEDDABLE); // refused, but reads the clock
    }
    assertThat(budget.tokens()).isCloseTo(0.3, within(1e-3));
  }

  @Test
  void zeroFloorMeansOnlySuccessesFundRetriesAndCapacityIsOneToken() {
    RetryBudget budget = RetryBudget.of(0.5, 0, clock);
    assertThat(budget.capacity()).isEqualTo(1.0);
    assertThat(budget.trySpend()).isTrue();
    clock.advance(Duration.ofHours(1));
    assertThat(budget.trySpend()).isFalse();
    assertThat(budget.retryAfter()).isEmpty();
    budget.deposit();
    budget.deposit();
    assertThat(budget.retryAfter()).contains(Duration.ZERO);
    assertThat(budget.trySpend()).isTrue();
  }

  @Test
  void retryAfterIsTheTimeUntilTheFloorFundsTheNextToken() {
    RetryBudget budget = drained(RetryBudget.of(0.1, 4, clock));
    assertThat(budget.retryAfter()).contains(Duration.ofMillis(250));
    clock.advance(Duration.ofMillis(100));
    assertThat(budget.retryAfter()).contains(Duration.ofMillis(150)); // computed after refilling
    clock.advance(Duration.ofMillis(150));
    assertThat(budget.retryAfter()).contains(Duration.ZERO);
  }

  @Test
  void sheddableWorkStopsRetryingOnceTheBucketIsMoreThanHalfSpent() {
    RetryBudget budget = RetryBudget.of(0.1, 3, clock); // 30 tokens
    int sheddable = 0;
    while (budget.trySpend(Criticality.SHEDDABLE)) {
      sheddable++;
    }
    assertThat(sheddable).isEqualTo(15);
    int sheddablePlus = 0;
    while (budget.trySpend(Criticality.SHEDDABLE_PLUS)) {
      sheddablePlus++;
    }
    assertThat(sheddablePlus).isEqualTo(15 - 8); // stops at a quarter (7.5 tokens) left
    int critical = 0;
    while (budget.trySpend(Criticality.CRITICAL)) {
      critical++;
    }
    assertThat(critical).isEqualTo(8);
    assertThat(budget.tokens()).isZero();
  }

  @Test
  void healthyBudgetRefusesNobodyWhateverTheCriticality() {
    RetryBudget budget = RetryBudget.of(0.1, 3, clock);
    for (Criticality c : Criticality.values()) {
      assertThat(budget.trySpend(c)).as("%s", c).isTrue();
    }
  }

  @Test
  void validationNamesTheParameterAndValueAndPointsAtNone() {
    assertThatThrownBy(() -> RetryBudget.of(0, 3))
        .isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("fraction")
        .hasMessageContaining("0.0")
        .hasMessageContaining("RetryBudget.NONE");
    assertThatThrownBy(() -> RetryBudget.of(1.5, 3)).hasMessageContaining("1.5");
    assertThatThrownBy(() -> RetryBudget.of(Double.NaN, 3)).hasMessageContaining("NaN");
    assertThatThrownBy(() -> RetryBudget.of(0.1, Double.POSITIVE_INFINITY)).hasMessageContaining("minimumPerSecond");
    ResilienceConfigurationException both = (ResilienceConfigurationException)
        org.assertj.core.api.Assertions.catchThrowable(() -> RetryBudget.of(-1, -1));
    assertThat(both.problems()).hasSize(2);
    assertThat(both.problems().get(1)).contains("minimumPerSecond was -1.0");
  }

  @Test
  void fractionOfOneIsAllowed() {
    RetryBudget budget = drained(RetryBudget.of(1.0, 3, clock));
    budget.deposit();
    assertThat(budget.tokens()).isEqualTo(1.0);
  }

  @Test
  void sharedBudgetsAreLookedUpByNameAndTheFirstParametersWin() {
    RetryBudget a = RetryBudget.shared("token-bucket-test-shared", 0.2, 5);
    RetryBudget b = RetryBudget.shared("token-bucket-test-shared", 0.1, 3);
    assertThat(b).isSameAs(a);
    assertThat(b.capacity()).isEqualTo(50.0);
    assertThat(a.name()).isEqualTo("token-bucket-test-shared");
    assertThat(RetryBudget.shared("token-bucket-test-other")).isNotSameAs(a);
    assertThatThrownBy(() -> RetryBudget.shared(" ")).isInstanceOf(ResilienceConfigurationException.class);
  }

  @Test
  void noneFundsEverythingAndReadsZeroUtilization() {
    assertThat(RetryBudget.NONE.trySpend()).isTrue();
    assertThat(RetryBudget.NONE.utilization()).isZero();
    assertThat(RetryBudget.AUTOMATIC.utilization()).isZero();
    assertThatThrownBy(RetryBudget.AUTOMATIC::trySpend)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("Resilience.budget()");
  }

  static RetryBudget drained(RetryBudget budget) {
    while (budget.trySpend()) {
      // empty it
    }
    return budget;
  }
  @Test
  void everyReadingCreditsTheFloorsRefillFirst() {
    // each of these is asked first after the clock moved: each must credit the refill itself
    TokenBucket spend = (TokenBucket) RetryBudget.of(0.1, 2, clock); // capacity 20, 2 a second
    TokenBucket fund = (TokenBucket) RetryBudget.of(0.1, 2, clock);
    TokenBucket used = (TokenBucket) RetryBudget.of(0.1, 2, clock);
    for (TokenBucket b : new TokenBucket[] {spend, fund, used}) {
      while (b.trySpend()) {
        // empty it
      }
    }
    clock.advance(Duration.ofSeconds(1)); // two tokens back in each
    assertThat(spend.trySpend()).isTrue();
    assertThat(fund.wouldFund(Criticality.CRITICAL)).isTrue();
    assertThat(used.utilization()).isCloseTo(0.9, within(1e-9));
  }

  @Test
  void theFloorsLimitIsInclusiveAndItsParametersAreKept() {
    TokenBucket b = (TokenBucket) RetryBudget.of(0.25, 1e9, clock);
    assertThat(b.fraction()).isEqualTo(0.25);
    assertThat(b.minimumPerSecond()).isEqualTo(1e9);
    assertThat(b.hasParameters(0.25, 1e9)).isTrue();
    assertThat(b.hasParameters(0.5, 1e9)).isFalse();
    assertThat(b.hasParameters(0.25, 3)).isFalse();
    assertThatThrownBy(() -> RetryBudget.of(0.25, Math.nextUp(1e9), clock)).hasMessageContaining("minimumPerSecond");
    assertThat(RetryBudget.of(1.0, 0, clock).capacity()).as("fraction 1 and no floor are allowed").isEqualTo(1.0);
    assertThat(b.toString()).contains(b.name()).contains("fraction=0.25");
  }

  @Test
  void aPolicysReadingOfTheBucketsOwnClockIsUsedAndAnotherClocksIsNot() {
    TokenBucket bucket = (TokenBucket) drained(RetryBudget.of(0.1, 10, clock)); // 10 a second, none now
    assertThat(bucket.wouldFund(Criticality.CRITICAL)).as("empty, and no time has passed").isFalse();
    ManualClock other = new ManualClock();
    long inOneSecond = clock.nanoTime() + Duration.ofSeconds(1).toNanos();
    // a reading of another clock says nothing about this bucket's time: it reads its own (no time passed)
    assertThat(bucket.wouldFundAt(Criticality.CRITICAL, inOneSecond, other)).isFalse();
    assertThat(bucket.trySpendAt(Criticality.CRITICAL, inOneSecond, other)).isFalse();
    assertThat(bucket.retryAfterNanosAt(Criticality.CRITICAL, inOneSecond, other)).isEqualTo(100_000_000L);
    // a reading of its own clock is taken as it is: a second's refill, ten tokens
    assertThat(bucket.wouldFundAt(Criticality.CRITICAL, inOneSecond, clock)).isTrue();
    assertThat(bucket.trySpendAt(Criticality.CRITICAL, inOneSecond, clock)).isTrue();
    assertThat(bucket.retryAfterNanosAt(Criticality.CRITICAL, inOneSecond, clock)).isZero();
    // and an older reading than one already credited credits nothing more
    assertThat(bucket.trySpendAt(Criticality.CRITICAL, clock.nanoTime(), clock)).isTrue();
    assertThat(bucket.tokens()).isCloseTo(8.0, within(1e-9));
  }
}
