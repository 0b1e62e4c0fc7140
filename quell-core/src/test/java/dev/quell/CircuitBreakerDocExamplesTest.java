package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The examples of docs/breaker.md, verbatim, compiled and run. */
class CircuitBreakerDocExamplesTest {

  @Test
  void buildingOne() {
    CircuitBreaker inventory = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT
        .withFailureRate(0.5)
        .withMinimumCalls(20)
        .withWindow(Duration.ofSeconds(30)));

    assertThat(inventory.config()).isEqualTo(CircuitBreaker.Config.DEFAULT);
    assertThat(inventory.state()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void severalSettingsAtOnce() {
    CircuitBreaker.Config quietService = CircuitBreaker.Config.DEFAULT.with(s -> s
        .minimumCalls(5)
        .consecutiveFailures(5)                      // low traffic: five failures in a row open it
        .slowCalls(Duration.ofSeconds(2), 0.5)       // half the attempts slower than 2 s open it too
        .breakDuration(Duration.ofSeconds(10))
        .maxBreakDuration(Duration.ofMinutes(2))
        .ramp(Duration.ofSeconds(30)));

    assertThat(quietService.consecutiveFailures()).isEqualTo(5);
    assertThat(quietService.slowCallDuration()).contains(Duration.ofSeconds(2));
    assertThat(quietService.maxBreakDuration()).isEqualTo(Duration.ofMinutes(2));
  }

  @Test
  void theErrorMessageInTheDocIsTheRealOne() {
    assertThatThrownBy(() -> CircuitBreaker.Config.DEFAULT.with(s -> s.failureRate(50).probes(0)))
        .hasMessage("2 configuration problems:\n"
            + " - breaker failureRate was 50.0: must be in (0, 1]\n"
            + " - breaker probes was 0: must be between 1 and 1000");
  }

  @Test
  void byHand() {
    CircuitBreaker inventory = CircuitBreaker.of("inventory");

    inventory.isolate();                 // e.g. while failing over: refuse every attempt until told
    // ...
    inventory.reset();                   // closed again, with an empty window and no ramp

    assertThat(inventory.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(inventory.metrics().transitionsTo(CircuitBreaker.State.ISOLATED)).isEqualTo(1);
  }

  @Test
  void metricsForADashboard() {
    CircuitBreaker inventory = CircuitBreaker.of("inventory");

    CircuitBreaker.Metrics m = inventory.metrics();
    String line = m.state() + " failureRate=" + m.failureRate() + " calls=" + m.calls()
        + " opened=" + m.transitionsTo(CircuitBreaker.State.OPEN) + " refused=" + m.refusals();
    Optional<Duration> wait = inventory.retryAfter();   // empty only while isolated

    assertThat(line).isEqualTo("CLOSED failureRate=0.0 calls=0 opened=0 refused=0");
    assertThat(wait).contains(Duration.ZERO);
  }

  @Test
  void onAnyClock() {
    TimeSource timeSource = new SeededClock();

    CircuitBreaker onMyClock = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT, timeSource);

    assertThat(onMyClock.timeSource()).isSameAs(timeSource);
  }

  /** The doc's story of an outage, on a clock that moves only when told. */
  @Test
  void theOutageTheDocDescribes() {
    BreakerHarness h = new BreakerHarness(CircuitBreaker.Config.DEFAULT);
    h.clock.useRandom(CircuitBreakerTest.highest());
    h.calls(10, Gate.SUCCEEDED);
    h.calls(9, Gate.FAILED);
    assertThat(h.breaker.state()).as("19 attempts: below the minimum of 20").isEqualTo(CircuitBreaker.State.CLOSED);
    h.call(Gate.FAILED);
    assertThat(h.breaker.state()).as("10 of 20 failed").isEqualTo(CircuitBreaker.State.OPEN);
    h.refused();
    assertThat(h.breaker.gate().refusal()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    assertThat(h.lastRetryAfter()).isEqualTo(Duration.ofSeconds(5).toNanos());
    h.clock.advance(Duration.ofSeconds(5));
    h.call(Gate.FAILED); // the probe fails: the next break is 10 s
    h.refused();
    assertThat(h.lastRetryAfter()).isEqualTo(Duration.ofSeconds(10).toNanos());
    h.clock.advance(Duration.ofSeconds(10));
    h.call(Gate.SUCCEEDED);
    assertThat(h.breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    h.admitted(); // a tenth of the traffic, growing to all of it over 10 s
    h.refused();
  }
}
