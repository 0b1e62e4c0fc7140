package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Classifier;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceEvent.Type;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TestPolicyTest {

  @Test
  void instantIsTheDefaultPolicyOnAFreshVirtualClock() {
    Resilience policy = TestPolicy.instant();

    assertThat(policy.timeSource()).isInstanceOf(VirtualTime.class);
    assertThat(TestPolicy.timeOf(policy).elapsed()).isZero();
    assertThat(policy.name()).isEqualTo("test");
    assertThat(policy.attempts()).isEqualTo(Resilience.DEFAULT.attempts());
    assertThat(policy.deadline()).isEqualTo(Resilience.DEFAULT.deadline());
    assertThat(policy.attemptTimeout()).isEqualTo(Resilience.DEFAULT.attemptTimeout());
    assertThat(policy.backoff()).isEqualTo(Resilience.DEFAULT.backoff());
    assertThat(TestPolicy.timeOf(TestPolicy.instant())).isNotSameAs(TestPolicy.timeOf(policy));
  }

  @Test
  void backoffIsServedOnVirtualTime() throws Exception {
    Resilience policy = TestPolicy.instant().with(s -> s.attempts(5).deadline(Duration.ofMinutes(10))
        .backoff(Backoff.constant(Duration.ofSeconds(20))));
    VirtualTime time = TestPolicy.timeOf(policy);
    Sequence<String> work = Sequence.<String>script(time).thenThrow(() -> new IOException("down")).times(4).thenReturn("up");

    assertThat(policy.execute(work)).isEqualTo("up");

    // four backoffs of 20 s: a minute and twenty seconds passed, none of them for real
    assertThat(time.elapsed()).isEqualTo(Duration.ofSeconds(80));
    assertThat(work.callTimes()).containsExactly(
        Duration.ZERO, Duration.ofSeconds(20), Duration.ofSeconds(40), Duration.ofSeconds(60), Duration.ofSeconds(80));
  }

  @Test
  void instantOfABaseKeepsItsSettingsAndMovesItToVirtualTime() {
    Resilience base = Resilience.HTTP.with(s -> s.name("inventory").attempts(4).deadline(Duration.ofSeconds(2)));

    TestPolicy test = TestPolicy.instant(base);

    Resilience policy = test.policy();
    assertThat(policy.timeSource()).isSameAs(test.time());
    assertThat(policy.name()).isEqualTo("inventory");
    assertThat(policy.attempts()).isEqualTo(4);
    assertThat(policy.deadline()).contains(Duration.ofSeconds(2));
    assertThat(policy.classifier()).isSameAs(Classifier.HTTP);
    assertThat(policy.listeners()).containsExactly(test.events());
    assertThat(policy.budget()).as("a fresh automatic budget, on the virtual clock").isNotSameAs(base.budget());
    assertThat(test.toString()).contains("inventory");
  }

  @Test
  void theAutomaticBudgetRefillsOnVirtualTime() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    RetryBudget budget = test.policy().budget();
    double capacity = budget.capacity();
    for (int i = 0; i < 9; i++) {
      assertThat(budget.trySpend()).isTrue();
    }
    assertThat(budget.tokens()).isCloseTo(capacity - 9, within(1e-9));

    test.time().advance(Duration.ofSeconds(3)); // the floor: 3 tokens a virtual second

    assertThat(budget.tokens()).isCloseTo(capacity, within(1e-9));
  }

  @Test
  void instantWithAGivenClockSharesIt() {
    VirtualTime time = VirtualTime.create(99);
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT, time);

    assertThat(test.time()).isSameAs(time);
    assertThat(TestPolicy.timeOf(test.policy())).isSameAs(time);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theGuardedRejectionPauseIsServedOnVirtualTime(Driver driver) {
    VirtualTime time = VirtualTime.create();
    // one token, no floor: the first retry is funded, the second refused
    RetryBudget oneRetry = RetryBudget.of(0.1, 0, time);
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withAttempts(5).withBackoff(Backoff.NONE).withBudget(oneRetry), time);
    Sequence<String> work = Sequence.<String>script(time).thenThrow(() -> new IOException("down")).times(2);

    Outcome<String> outcome = driver.run(test.policy(), time, work);

    assertThat(outcome.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(outcome.failure()).containsInstanceOf(CallRejectedException.class);
    assertThat(outcome.attempts()).isEqualTo(2);
    ResilienceEvent rejected = test.events().terminal();
    assertThat(rejected.type()).isEqualTo(Type.REJECTED_BY_BUDGET);
    assertThat(rejected.delay()).contains(Duration.ofMillis(100));
    assertThat(outcome.elapsed()).isEqualTo(Duration.ofMillis(100));
    assertThat(time.elapsed()).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void anAsyncCallWaitsForTheClock() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withBackoff(Backoff.constant(Duration.ofSeconds(5))));
    Sequence<String> work = Sequence.<String>script(test.time()).thenThrow(new IOException("x")).thenReturn("ok");

    CompletableFuture<String> result = test.policy().executeAsync(work);
    assertThat(result).as("the retry is a timer on the virtual clock").isNotDone();
    test.time().advance(Duration.ofMillis(4999));
    assertThat(result).isNotDone();
    test.time().advance(Duration.ofMillis(1));

    assertThat(result).isCompletedWithValue("ok");
  }

  @Test
  void timeOfRefusesAPolicyOnTheRealClock() {
    assertThatThrownBy(() -> TestPolicy.timeOf(Resilience.DEFAULT))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'default'")
        .hasMessageContaining("TestPolicy.instant()");
  }
}
