package dev.quell.slf4j.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * Breaker transitions (warn on open, info on half-open and close) and suppressed hedges (info,
 * flood-controlled) under stable event names.
 */
class BreakerAndHedgeLoggingTest {
  private final VirtualTime time = VirtualTime.create();

  private static final CircuitBreaker.Config TRIPS_AFTER_FOUR = CircuitBreaker.Config.DEFAULT
      .withMinimumCalls(4).withFailureRate(0.5).withWindow(Duration.ofSeconds(10))
      .withBreakDuration(Duration.ofSeconds(4)).withRamp(Duration.ofSeconds(10));

  private LoggingListener listener(RecordingLogger log) {
    return new LoggingListener(log, Duration.ofMinutes(1), time);
  }

  @Test
  void aBreakerThatOpensWarnsWithWhatOpenedItAndItsRecoveryIsInfo() {
    RecordingLogger log = new RecordingLogger(Level.INFO);
    LoggingListener listener = listener(log);
    CircuitBreaker breaker = CircuitBreaker.of("inventory-api", TRIPS_AFTER_FOUR, time);
    for (int i = 0; i < 4; i++) {
      Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time).withBreaker(breaker).run(() -> {
        throw new IOException("down");
      });
    }
    // the core's direct call, with the breaker that moved
    listener.breakerMoved("inventory", breaker, CircuitBreaker.State.OPEN, 4);
    assertThat(log.lines).singleElement().satisfies(line -> {
      assertThat(line.level()).isEqualTo(Level.WARN);
      assertThat(line.event()).isEqualTo("quell.breaker.opened");
    });
    String opened = log.messages().get(0);
    long retryAfterNanos = breaker.retryAfter().orElseThrow().toNanos();
    assertThat(opened).startsWith("quell.breaker.opened policy=inventory breaker=inventory-api attempt=4"
        + " failureRate=1.00 calls=4 retryAfter=")
        .contains(" opened=1: the circuit breaker opened; attempts are refused until the break is over");
    assertThat(retryAfterNanos).isBetween(Duration.ofSeconds(2).toNanos(), Duration.ofSeconds(4).toNanos());

    listener.breakerMoved("inventory", breaker, CircuitBreaker.State.HALF_OPEN, 5);
    listener.breakerMoved("inventory", breaker, CircuitBreaker.State.CLOSED, 5);
    assertThat(log.lines).extracting(RecordingLogger.Line::level).containsExactly(Level.WARN, Level.INFO, Level.INFO);
    assertThat(log.messages().subList(1, 3)).containsExactly(
        "quell.breaker.half_open policy=inventory breaker=inventory-api attempt=5: the break is over; probing the"
            + " dependency",
        "quell.breaker.closed policy=inventory breaker=inventory-api attempt=5 ramp=10000ms: the probes succeeded;"
            + " traffic comes back");
  }

  @Test
  void transitionsOfARealBreakerAreLoggedFromItsEvents() {
    RecordingLogger log = new RecordingLogger(Level.INFO);
    LoggingListener listener = listener(log);
    // as a plain listener the policy hands it events, which carry the new state but not the breaker;
    // "attempt" is the attempt of the call whose admission or end moved the breaker
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withBreaker(TRIPS_AFTER_FOUR).withListener(listener::onEvent);
    for (int i = 0; i < 4; i++) {
      inventory.run(() -> {
        throw new IOException("down");
      });
    }
    time.advance(Duration.ofSeconds(4));
    assertThat(inventory.run(() -> "ok").stopReason()).isEqualTo(StopReason.SUCCEEDED);
    assertThat(log.lines).extracting(RecordingLogger.Line::event)
        .containsExactly("quell.breaker.opened", "quell.breaker.half_open", "quell.breaker.closed");
    assertThat(log.messages().get(0)).isEqualTo("quell.breaker.opened policy=inventory breaker=? attempt=1: the"
        + " circuit breaker opened; attempts are refused until the break is over");
    assertThat(log.messages().get(2)).isEqualTo("quell.breaker.closed policy=inventory breaker=? attempt=1 ramp=?:"
        + " the probes succeeded; traffic comes back");
  }

  @Test
  void breakerLinesAreNotFormattedWhenTheirLevelIsOff() {
    RecordingLogger log = new RecordingLogger(Level.ERROR);
    CircuitBreaker breaker = CircuitBreaker.of("inventory-api", TRIPS_AFTER_FOUR, time);
    LoggingListener listener = listener(log);
    for (CircuitBreaker.State state : CircuitBreaker.State.values()) {
      listener.breakerMoved("inventory", breaker, state, 1);
    }
    assertThat(log.lines).isEmpty();
    RecordingLogger warnOnly = new RecordingLogger(Level.WARN);
    LoggingListener warns = listener(warnOnly);
    for (CircuitBreaker.State state : CircuitBreaker.State.values()) {
      warns.breakerMoved("inventory", breaker, state, 1);
    }
    assertThat(warnOnly.lines).extracting(RecordingLogger.Line::event)
        .containsExactly("quell.breaker.opened", "quell.breaker.isolated");
  }

  @Test
  void aBreakWithoutEndIsWrittenAsForever() {
    RecordingLogger log = new RecordingLogger(Level.INFO);
    CircuitBreaker breaker = CircuitBreaker.of("inventory-api",
        TRIPS_AFTER_FOUR.withRamp(Duration.ofSeconds(Long.MAX_VALUE)), time);
    listener(log).breakerMoved("inventory", breaker, CircuitBreaker.State.CLOSED, 1);
    assertThat(log.messages()).singleElement().asString().contains(" ramp=forever:");
  }

  private Supplier<CompletionStage<String>> answersAfter(Duration latency) {
    return () -> {
      CompletableFuture<String> f = new CompletableFuture<>();
      time.schedule(() -> f.complete("ok"), latency.toNanos());
      return f;
    };
  }

  @Test
  void suppressedHedgesAreInfoOncePerIntervalWithTheCountSuppressedInBetween() {
    RecordingLogger log = new RecordingLogger(Level.INFO);
    LoggingListener listener = listener(log);
    RetryBudget dry = RetryBudget.of(0.1, 0, time);
    assertThat(dry.trySpend()).isTrue(); // its one token
    Resilience search = Resilience.DEFAULT.withName("search").withTimeSource(time).withBackoff(Backoff.NONE)
        .withBudget(dry).withHedge(Hedge.after(Duration.ofMillis(100))).withListener(listener::onEvent);
    for (int i = 0; i < 5; i++) {
      CompletableFuture<String> call = search.executeAsync(answersAfter(Duration.ofSeconds(1)));
      time.runUntilIdle(Duration.ofMinutes(1));
      assertThat(call).isCompletedWithValue("ok");
    }
    assertThat(log.lines).singleElement().satisfies(line -> {
      assertThat(line.level()).isEqualTo(Level.INFO);
      assertThat(line.event()).isEqualTo("quell.hedge.suppressed");
    });
    assertThat(log.messages().get(0)).startsWith("quell.hedge.suppressed policy=search budget=" + dry.name()
        + " utilization=").endsWith(" attempts=1 suppressed=0: a hedge was due but the retry budget or a limit"
        + " refused it; the call goes on without it");

    time.advance(Duration.ofMinutes(1));
    CompletableFuture<String> call = search.executeAsync(answersAfter(Duration.ofSeconds(1)));
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(call).isCompletedWithValue("ok");
    assertThat(log.messages()).hasSize(2);
    assertThat(log.messages().get(1)).contains(" suppressed=4: ");
  }

  @Test
  void aWonHedgeIsDebugAndStartedAndDiscardedAreTrace() {
    RecordingLogger log = new RecordingLogger(Level.TRACE);
    LoggingListener listener = listener(log);
    listener.hedged("search", RetryBudget.NONE, Criticality.CRITICAL, ResilienceEvent.Type.HEDGE_STARTED, 2);
    listener.hedged("search", RetryBudget.NONE, Criticality.CRITICAL, ResilienceEvent.Type.HEDGE_WON, 2);
    listener.hedged("search", RetryBudget.NONE, Criticality.CRITICAL, ResilienceEvent.Type.HEDGE_DISCARDED, 1);
    listener.hedged("search", RetryBudget.NONE, Criticality.CRITICAL, ResilienceEvent.Type.RETRYING, 1);
    assertThat(log.lines).extracting(RecordingLogger.Line::level).containsExactly(Level.TRACE, Level.DEBUG, Level.TRACE);
    assertThat(log.messages()).containsExactly("quell.hedge.started policy=search attempt=2",
        "quell.hedge.won policy=search attempt=2", "quell.hedge.discarded policy=search attempt=1");
  }
}
