package dev.quell.slf4j.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker;
import dev.quell.Resilience;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/** What the core's direct observer calls give the listener: the breaker that moved, named in its lines. */
class CoreSeamTest {
  private final VirtualTime time = VirtualTime.create();

  @Test
  void aRealBreakerThatOpensIsNamedWithWhatOpenedIt() {
    RecordingLogger log = new RecordingLogger(Level.INFO);
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withBreaker(CircuitBreaker.Config.DEFAULT.withMinimumCalls(4).withRamp(Duration.ZERO))
        .withListener(new LoggingListener(log, Duration.ofMinutes(1), time));
    for (int i = 0; i < 4; i++) {
      inventory.run(() -> {
        throw new IOException("down");
      });
    }
    assertThat(log.messages()).singleElement().asString()
        .startsWith("quell.breaker.opened policy=inventory breaker=inventory attempt=1 failureRate=1.00 calls=4"
            + " retryAfter=")
        .endsWith(" opened=1: the circuit breaker opened; attempts are refused until the break is over");
    time.advance(Duration.ofSeconds(5));
    inventory.run(() -> "ok");
    assertThat(log.messages()).hasSize(3);
    assertThat(log.messages().get(2)).isEqualTo("quell.breaker.closed policy=inventory breaker=inventory attempt=1"
        + " ramp=0ms: the probes succeeded; traffic comes back");
  }
}
