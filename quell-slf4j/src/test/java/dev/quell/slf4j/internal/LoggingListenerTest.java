package dev.quell.slf4j.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

class LoggingListenerTest {
  private final VirtualTime time = VirtualTime.create();

  private Resilience policy(RecordingLogger log) {
    return Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withBackoff(Backoff.constant(Duration.ofMillis(100)))
        .withListener(new LoggingListener(log, Duration.ofMinutes(1), time));
  }

  private static String failOnce(dev.quell.Attempt attempt) throws IOException {
    if (attempt.number() == 1) {
      throw new IOException("flaky");
    }
    return "ok";
  }

  @Test
  void aRetryAndARecoveryAreDebugLinesWithStableEventNames() throws Exception {
    RecordingLogger log = new RecordingLogger(Level.DEBUG);
    policy(log).execute(LoggingListenerTest::failOnce);
    assertThat(log.lines).extracting(RecordingLogger.Line::level).containsOnly(Level.DEBUG);
    assertThat(log.lines).extracting(RecordingLogger.Line::event).containsExactly("quell.retry", "quell.recovered");
    assertThat(log.messages()).containsExactly(
        "quell.retry policy=inventory attempt=2 delay=100ms verdict=TRANSIENT failure=java.io.IOException: flaky",
        "quell.recovered policy=inventory attempts=2 elapsed=100ms");
  }

  @Test
  void traceAddsOneLinePerAttempt() throws Exception {
    RecordingLogger log = new RecordingLogger(Level.TRACE);
    policy(log).execute(LoggingListenerTest::failOnce);
    assertThat(log.lines).extracting(RecordingLogger.Line::event)
        .containsExactly("quell.attempt", "quell.retry", "quell.attempt", "quell.recovered");
    assertThat(log.messages().get(0))
        .isEqualTo("quell.attempt policy=inventory attempt=1 verdict=TRANSIENT duration=0ms failure=java.io.IOException: flaky");
    assertThat(log.messages().get(2)).isEqualTo("quell.attempt policy=inventory attempt=2 verdict=OK duration=0ms failure=none");
  }

  @Test
  void givingUpIsDebugBecauseTheCallerGetsTheException() {
    RecordingLogger log = new RecordingLogger(Level.DEBUG);
    Outcome<String> o = policy(log).withAttempts(2).run(() -> {
      throw new IOException("down");
    });
    assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(log.messages()).last().isEqualTo(
        "quell.gave_up policy=inventory reason=ATTEMPTS_EXHAUSTED attempts=2 elapsed=100ms failure=java.io.IOException: down");
    RecordingLogger quiet = new RecordingLogger(Level.INFO);
    policy(quiet).run(() -> {
      throw new IllegalStateException("bad request");
    });
    assertThat(quiet.lines).isEmpty();
  }

  @Test
  void budgetRefusalsWarnOncePerIntervalWithTheCountSuppressedInBetween() {
    RecordingLogger log = new RecordingLogger(Level.WARN);
    Resilience tight = policy(log).withBudget(RetryBudget.of(0.1, 0, time)); // one token, no floor
    for (int i = 0; i < 10; i++) {
      assertThat(tight.run(() -> {
        throw new IOException("down");
      }).stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    }
    assertThat(log.lines).singleElement().satisfies(line -> {
      assertThat(line.level()).isEqualTo(Level.WARN);
      assertThat(line.event()).isEqualTo("quell.rejected.budget");
      assertThat(line.message()).startsWith("quell.rejected.budget policy=inventory budget=" + tight.budget().name()
          + " utilization=1.00 retryAfter=none attempts=2 failure=java.io.IOException: down suppressed=0: ");
    });
    time.advance(Duration.ofMinutes(1));
    for (int i = 0; i < 3; i++) {
      tight.run(() -> {
        throw new IOException("still down");
      });
    }
    assertThat(log.lines).hasSize(2);
    assertThat(log.messages().get(1)).contains("attempts=1 failure=java.io.IOException: still down suppressed=9:");
    time.advance(Duration.ofSeconds(59));
    tight.run(() -> {
      throw new IOException("still down");
    });
    assertThat(log.lines).hasSize(2); // 59.3 s after the last line: still inside the interval
  }

  @Test
  void eachPolicyHasItsOwnFloodGate() {
    RecordingLogger log = new RecordingLogger(Level.WARN);
    LoggingListener listener = new LoggingListener(log, Duration.ofMinutes(1), time);
    for (String name : new String[] {"a", "b", "a", "b"}) {
      Resilience.DEFAULT.withName(name).withTimeSource(time).withBudget(RetryBudget.of(0.1, 0, time))
          .withListener(listener).run(() -> {
            throw new IOException("down");
          });
    }
    assertThat(log.messages()).hasSize(2).anySatisfy(m -> assertThat(m).contains("policy=a"))
        .anySatisfy(m -> assertThat(m).contains("policy=b"));
  }

  @Test
  void theFloodGateLetsTheFirstLineThroughAndThenOnePerInterval() {
    FloodGate gate = new FloodGate(Duration.ofSeconds(60).toNanos());
    long base = -5_000_000_000L; // nanoTime may be negative: only differences count
    assertThat(gate.admit(base)).isZero();
    assertThat(gate.admit(base + 1)).isEqualTo(-1);
    assertThat(gate.admit(base + 59_999_999_999L)).isEqualTo(-1);
    assertThat(gate.admit(base + 60_000_000_000L)).isEqualTo(2);
    assertThat(gate.admit(base + 60_000_000_001L)).isEqualTo(-1);
    assertThat(gate.admit(base + 200_000_000_000L)).isEqualTo(1);
  }

  @Test
  void nothingIsLoggedWhenTheLevelsAreOff() throws Exception {
    RecordingLogger log = new RecordingLogger(Level.ERROR);
    Resilience tight = policy(log).withBudget(RetryBudget.of(0.1, 0, time));
    tight.execute(LoggingListenerTest::failOnce);
    tight.run(() -> {
      throw new IOException("down");
    });
    assertThat(log.lines).isEmpty();
  }
}
