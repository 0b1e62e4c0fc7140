package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Driver.Result;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The edges left open by the last round (issue 19, item 6), each a regression test, and on every
 * way a call runs where the edge is a call's.
 */
class EdgeRegressionTest {
  private final VirtualTime time = VirtualTime.create();

  @AfterEach
  void clear() {
    Thread.interrupted();
  }

  static Stream<Arguments> hugeDurations() {
    return Stream.of(Way.values()).flatMap(way -> Stream.of(
        Arguments.of(way, Duration.ofSeconds(Long.MAX_VALUE)),
        Arguments.of(way, ChronoUnit.FOREVER.getDuration()),
        Arguments.of(way, Duration.ofNanos(Long.MAX_VALUE))));
  }

  @ParameterizedTest(name = "{0}, {1}")
  @MethodSource("hugeDurations")
  void aHugeDeadlineOrAttemptTimeoutIsAcceptedPrintedAndRunsAsNoLimit(Way way, Duration huge) {
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withDeadline(huge).withAttemptTimeout(huge);
    assertThat(p.toString()).contains("deadline=").doesNotContain("PT");
    assertThat(p.explain()).isNotBlank();
    Result r = way.run(p, time, fail(new IOException("once")), ok("v"));
    assertThat(r.value).isEqualTo("v");
    assertThat(r.attempts).isEqualTo(2);
  }

  @Test
  void everyDurationQuellPrintsIsReadableAndNeverThrows() {
    Duration forever = ChronoUnit.FOREVER.getDuration();
    assertThat(Resilience.DEFAULT.withDeadline(forever).toString()).contains("deadline=forever");
    assertThat(Backoff.constant(forever).toString()).isEqualTo("constant(forever)");
    assertThat(Hedge.after(forever).toString()).contains("after forever");
    assertThat(Hedge.after(Duration.ofMillis(20)).toString()).isEqualTo("Hedge[after 20 ms, up to 1 hedge]");
    assertThat(Verdict.throttled(forever).toString()).contains("forever");
    assertThat(ResilienceContext.EMPTY.withDeadline(Duration.ofSeconds(Long.MAX_VALUE), time).toString())
        .doesNotContain("PT");
  }

  @Test
  void aBudgetWithoutATimeSourceNamesTheParameter() {
    assertThatThrownBy(() -> RetryBudget.of(0.1, 0, null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("budget timeSource");
    assertThatThrownBy(() -> RetryBudget.replenishing(5, Duration.ofSeconds(1), null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("budget timeSource");
    assertThatThrownBy(() -> RetryBudget.shared(null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("shared budget name");
  }

  @Test
  void aBackoffCappedAtTheLongestDurationStillComputesItsDelays() {
    Backoff b = Backoff.exponential().withMax(Duration.ofNanos(Long.MAX_VALUE));
    Random random = new Random(1);
    for (int retry = 1; retry < 200; retry++) {
      Duration d = b.delay(retry, Verdict.TRANSIENT, random);
      assertThat(d).isGreaterThanOrEqualTo(Duration.ZERO);
    }
    Backoff forever = Backoff.exponential().withMax(ChronoUnit.FOREVER.getDuration());
    assertThat(forever.delay(100, Verdict.THROTTLED, random)).isGreaterThanOrEqualTo(Duration.ZERO);
  }

  @Test
  void readingHeadersWithoutAnInboundPolicyNamesTheParameter() {
    assertThatThrownBy(() -> ResilienceContext.fromHeaders(name -> "5000", null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("fromHeaders inbound");
    assertThatThrownBy(() -> ResilienceContext.fromHeaders(null, ResilienceContext.Inbound.DEFAULT))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("fromHeaders header");
    assertThatThrownBy(() -> ResilienceContext.fromHeaders(name -> null, ResilienceContext.Inbound.DEFAULT, null))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("fromHeaders time");
  }

  @ParameterizedTest
  @EnumSource(Criticality.class)
  void aFullUntouchedBudgetFundsEveryCriticalityAndReadsUnused(Criticality criticality) {
    for (double floor : new double[] {0, 0.05, 1, 3}) {
      RetryBudget b = RetryBudget.of(0.1, floor, time);
      assertThat(b.utilization()).as("utilization of an untouched budget, floor %s", floor).isZero();
      assertThat(b.trySpend(criticality)).as("a full budget, floor %s, funds %s", floor, criticality).isTrue();
    }
  }

  @Test
  void reservesNeverRefuseALowerCriticalityWhatTheyFundAHigherOne() {
    // whatever the balance, what a lower criticality may spend a higher one may too
    Criticality[] order = {Criticality.SHEDDABLE, Criticality.SHEDDABLE_PLUS, Criticality.CRITICAL,
        Criticality.CRITICAL_PLUS};
    RetryBudget b = RetryBudget.of(0.1, 3, time);
    for (int step = 0; step < 60; step++) {
      boolean fundedBelow = false;
      for (Criticality c : order) {
        boolean funded = b.wouldFund(c);
        assertThat(!fundedBelow || funded).as("step %d: %s after a lower level was funded", step, c).isTrue();
        fundedBelow |= funded;
      }
      b.trySpend(Criticality.CRITICAL_PLUS);
    }
  }

  @Test
  @SuppressWarnings("QuellInvalidConfiguration") // it builds an inconsistent breaker on purpose
  void breakerSettingsCanBeGivenInAnyOrderAndAreCheckedWhole() {
    CircuitBreaker.Config longer = CircuitBreaker.Config.DEFAULT.withBreakDuration(Duration.ofMinutes(10))
        .withMaxBreakDuration(Duration.ofMinutes(30));
    assertThat(longer.breakDuration()).isEqualTo(Duration.ofMinutes(10));
    assertThat(CircuitBreaker.of("longer", longer, time).config()).isEqualTo(longer);
    // left inconsistent, the breaker built from it says so, naming both
    CircuitBreaker.Config inconsistent = CircuitBreaker.Config.DEFAULT.withBreakDuration(Duration.ofMinutes(10));
    assertThatThrownBy(() -> CircuitBreaker.of("inconsistent", inconsistent, time))
        .isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("breaker maxBreakDuration was 300000 ms")
        .hasMessageContaining("breakDuration (600000 ms)");
    assertThatThrownBy(() -> Resilience.DEFAULT.withBreaker(inconsistent))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("breaker maxBreakDuration");
    // FOREVER reads as forever in a message
    CircuitBreaker.Config forever = CircuitBreaker.Config.DEFAULT.withBreakDuration(ChronoUnit.FOREVER.getDuration());
    assertThatThrownBy(() -> CircuitBreaker.of("forever", forever, time))
        .hasMessageContaining("breakDuration (forever)").hasMessageNotContaining("PT");
  }

  @Test
  void aBudgetOrLimiterRenamedIsAFreshOneOfTheSameKindAndTheNameIsChecked() {
    RetryBudget spent = RetryBudget.of(0.2, 1, time);
    while (spent.trySpend(Criticality.CRITICAL_PLUS)) {
      // spend it down
    }
    RetryBudget named = spent.withName("inventory:host-1");
    assertThat(named.name()).isEqualTo("inventory:host-1");
    assertThat(named.capacity()).isEqualTo(spent.capacity());
    assertThat(named.tokens()).as("fresh state").isEqualTo(named.capacity());
    assertThat(RetryBudget.feedback(10, 0.5).withName("f").name()).isEqualTo("f");
    assertThat(RetryBudget.replenishing(5, Duration.ofSeconds(1), time).withName("r").capacity()).isEqualTo(5);
    assertThat(RetryBudget.concurrent(0.2, 3).withName("c").name()).isEqualTo("c");
    assertThat(RetryBudget.NONE.withName("x")).isSameAs(RetryBudget.NONE);
    RetryBudget shared = RetryBudget.shared("edge-shared-" + System.nanoTime());
    assertThat(shared.withName("other")).as("a shared budget's name is its identity").isSameAs(shared);
    assertThat(Limiter.concurrency(7).withName("inventory").name()).isEqualTo("inventory");
    assertThatThrownBy(() -> spent.withName(" ")).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("budget name");
    assertThatThrownBy(() -> Limiter.rate(5, 1).withName(null)).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("limiter name");
  }
}
