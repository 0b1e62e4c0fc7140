package dev.quell;

import static dev.quell.Gate.FAILED;
import static dev.quell.Gate.SUCCEEDED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.CircuitBreaker.Config;
import dev.quell.CircuitBreaker.State;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The configuration: defaults, one validation for every path, hostile and extreme values. */
class CircuitBreakerConfigTest {
  static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);

  @Test
  void defaults() {
    Config c = Config.DEFAULT;
    assertThat(c.failureRate()).isEqualTo(0.5);
    assertThat(c.minimumCalls()).isEqualTo(20);
    assertThat(c.window()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.consecutiveFailures()).isZero();
    assertThat(c.slowCallDuration()).isEmpty();
    assertThat(c.slowCallRate()).isEqualTo(0.5);
    assertThat(c.probes()).isEqualTo(1);
    assertThat(c.probeSuccesses()).isEqualTo(1);
    assertThat(c.breakDuration()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.maxBreakDuration()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.ramp()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void withMethodsAndSettingsMakeEqualValuesAndLeaveTheOriginalAlone() {
    Config a = Config.DEFAULT.withFailureRate(0.25).withMinimumCalls(5).withWindow(Duration.ofSeconds(10))
        .withConsecutiveFailures(4).withSlowCalls(Duration.ofSeconds(2), 0.8).withProbes(3).withProbeSuccesses(2)
        .withBreakDuration(Duration.ofSeconds(1)).withMaxBreakDuration(Duration.ofMinutes(1))
        .withRamp(Duration.ofSeconds(20));
    Config b = Config.DEFAULT.with(s -> s.failureRate(0.25).minimumCalls(5).window(Duration.ofSeconds(10))
        .consecutiveFailures(4).slowCalls(Duration.ofSeconds(2), 0.8).probes(3).probeSuccesses(2)
        .breakDuration(Duration.ofSeconds(1)).maxBreakDuration(Duration.ofMinutes(1)).ramp(Duration.ofSeconds(20)));
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b).isNotEqualTo(Config.DEFAULT);
    assertThat(a.slowCallDuration()).contains(Duration.ofSeconds(2));
    assertThat(a.slowCallRate()).isEqualTo(0.8);
    assertThat(a.withoutSlowCalls().slowCallDuration()).isEmpty();
    assertThat(Config.DEFAULT.failureRate()).isEqualTo(0.5);
    assertThat(a.toString()).contains("failureRate=0.25", "probes=3", "slowCalls=PT2S at 0.8");
  }

  @Test
  void everyProblemIsReportedAtOnceNamingTheParameterAndTheValue() {
    assertThatThrownBy(() -> Config.DEFAULT.with(s -> s
        .failureRate(0)
        .minimumCalls(0)
        .window(Duration.ofNanos(999_999))
        .consecutiveFailures(-1)
        .slowCalls(Duration.ZERO, 1.5)
        .probes(0)
        .probeSuccesses(0)
        .breakDuration(Duration.ofSeconds(-1))
        .maxBreakDuration(Duration.ZERO)
        .ramp(Duration.ofMillis(-5))))
        .isInstanceOfSatisfying(ResilienceConfigurationException.class, e -> assertThat(e.problems()).containsExactly(
            "breaker failureRate was 0.0: must be in (0, 1]",
            "breaker minimumCalls was 0: must be at least 1",
            "breaker window was PT0.000999999S: must be at least 1 ms",
            "breaker consecutiveFailures was -1: must be at least 0 (0 turns this trip off)",
            "breaker slowCallDuration was 0 ms: must be a positive duration (use noSlowCalls() to turn slow-call"
                + " detection off)",
            "breaker slowCallRate was 1.5: must be in (0, 1]",
            "breaker probes was 0: must be between 1 and 1000",
            "breaker probeSuccesses was 0: must be at least 1",
            "breaker breakDuration was PT-1S: must be a positive duration",
            "breaker maxBreakDuration was 0 ms: must be a positive duration",
            "breaker ramp was PT-0.005S: must be zero (no ramp) or positive"));
  }

  @Test
  void withMethodsShareTheSameValidation() {
    assertThatThrownBy(() -> Config.DEFAULT.withProbes(1001))
        .isInstanceOf(ResilienceConfigurationException.class)
        .hasMessage("breaker probes was 1001: must be between 1 and 1000");
    assertThatThrownBy(() -> Config.DEFAULT.withFailureRate(Double.NaN))
        .hasMessage("breaker failureRate was NaN: must be in (0, 1]");
    // how settings fit together is checked when a breaker is built, so they can come in any order
    Config longer = Config.DEFAULT.withBreakDuration(Duration.ofMinutes(6));
    assertThatThrownBy(() -> CircuitBreaker.of("b", longer))
        .hasMessage("breaker maxBreakDuration was 300000 ms: must be at least breakDuration (360000 ms)");
    assertThat(CircuitBreaker.of("b", longer.withMaxBreakDuration(Duration.ofMinutes(6))).config().breakDuration())
        .isEqualTo(Duration.ofMinutes(6));
  }

  @Test
  void nullsAreRefusedByNameAndNeverTurnAnythingOff() {
    assertThatThrownBy(() -> Config.DEFAULT.withWindow(null))
        .hasMessage("breaker window was null: must be at least 1 ms");
    assertThatThrownBy(() -> Config.DEFAULT.withSlowCalls(null, 0.5))
        .hasMessage("breaker slowCallDuration was null: must be a positive duration (use noSlowCalls() to turn"
            + " slow-call detection off)");
    assertThatThrownBy(() -> Config.DEFAULT.withBreakDuration(null))
        .hasMessage("breaker breakDuration was null: must be a positive duration");
    assertThatThrownBy(() -> Config.DEFAULT.withMaxBreakDuration(null))
        .hasMessage("breaker maxBreakDuration was null: must be a positive duration");
    assertThatThrownBy(() -> Config.DEFAULT.withRamp(null))
        .hasMessage("breaker ramp was null: must be zero (no ramp) or positive");
    assertThatThrownBy(() -> Config.DEFAULT.with(null)).isInstanceOf(NullPointerException.class).hasMessage("change");
  }

  @Test
  void factoriesRefuseMissingArgumentsByName() {
    assertThatThrownBy(() -> CircuitBreaker.of(null, null, null))
        .isInstanceOfSatisfying(ResilienceConfigurationException.class, e -> assertThat(e.problems()).containsExactly(
            "breaker name was null: must not be blank",
            "breaker config was null: must not be null (use CircuitBreaker.Config.DEFAULT)",
            "breaker timeSource was null: must not be null (use TimeSource.system())"));
    assertThatThrownBy(() -> CircuitBreaker.of(" "))
        .hasMessage("breaker name was \" \": must not be blank");
    assertThat(CircuitBreaker.of("ünïcödé-服务").name()).isEqualTo("ünïcödé-服务");
  }

  @Test
  void settingsCannotBeChangedAfterWithReturns() {
    AtomicReference<Config.Settings> escaped = new AtomicReference<>();
    Config.DEFAULT.with(escaped::set);
    assertThatThrownBy(() -> escaped.get().probes(5)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("only be changed inside Config.with");
  }

  @Test
  void hugeDurationsAreAcceptedAndMeanForEverWithoutOverflow() {
    Config forever = Config.DEFAULT.with(s -> s
        .window(HUGE)
        .breakDuration(HUGE)
        .maxBreakDuration(HUGE)
        .ramp(ChronoUnit.FOREVER.getDuration())
        .slowCalls(HUGE, 0.5)
        .minimumCalls(1));
    SeededClock clock = new SeededClock(Long.MAX_VALUE - 1, 1);
    BreakerHarness h = new BreakerHarness(forever, clock);
    h.call(SUCCEEDED, Duration.ofDays(365 * 100)); // never slow
    clock.advance(Duration.ofDays(365 * 100)); // still inside the window
    assertThat(h.breaker.metrics().calls()).isEqualTo(1);
    assertThat(h.breaker.metrics().slowCalls()).isZero();
    h.call(FAILED); // 1 of 2 failed
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    h.refused();
    assertThat(h.lastRetryAfter()).isGreaterThan(Long.MAX_VALUE / 2 - 1);
    assertThat(h.breaker.retryAfter()).isPresent();
    clock.advance(Duration.ofDays(365 * 100));
    h.refused();
    h.breaker.reset();
    h.call(SUCCEEDED);
  }

  @Test
  void aHugeMaximumWithAShortFirstBreakDoublesWithoutOverflow() {
    BreakerHarness h = new BreakerHarness(CircuitBreakerTest.TEN.withMaxBreakDuration(HUGE));
    h.clock.useRandom(CircuitBreakerTest.highest());
    CircuitBreakerTest.trip(h);
    long previous = 0;
    for (int i = 0; i < 70; i++) {
      h.refused();
      long brk = h.lastRetryAfter();
      assertThat(brk).as("break %d", i).isPositive().isGreaterThanOrEqualTo(previous);
      previous = brk;
      h.clock.advanceNanos(brk);
      h.call(FAILED);
    }
    assertThat(previous).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void theSmallestSettingsWork() {
    Config tiny = Config.DEFAULT.with(s -> s
        .failureRate(Double.MIN_VALUE)
        .minimumCalls(1)
        .window(Duration.ofMillis(1))
        .breakDuration(Duration.ofNanos(1))
        .maxBreakDuration(Duration.ofNanos(1))
        .ramp(Duration.ofNanos(1)));
    BreakerHarness h = new BreakerHarness(tiny);
    h.call(FAILED);
    assertThat(h.breaker.state()).isEqualTo(State.OPEN);
    h.clock.advanceNanos(1);
    h.call(SUCCEEDED);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    h.clock.advanceNanos(1);
    h.calls(10, SUCCEEDED);
    h.call(FAILED);
    assertThat(h.breaker.state()).as("any failure at all reaches a rate of 4.9e-324").isEqualTo(State.OPEN);
  }

  @Test
  void theLargestCountsWork() {
    Config strict = Config.DEFAULT.with(s -> s
        .failureRate(1.0)
        .minimumCalls(Integer.MAX_VALUE)
        .consecutiveFailures(Integer.MAX_VALUE)
        .probes(1000)
        .probeSuccesses(Integer.MAX_VALUE));
    BreakerHarness h = new BreakerHarness(strict);
    h.calls(10_000, FAILED);
    assertThat(h.breaker.state()).isEqualTo(State.CLOSED);
    assertThat(h.breaker.metrics().consecutiveFailures()).isEqualTo(10_000);
  }
}
