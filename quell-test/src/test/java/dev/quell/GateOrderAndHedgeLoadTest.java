package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Driver.Result;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 19, items 3 and 4: the first gate in the documented order that refuses decides, for
 * retries too; and {@link Hedge#maxExtraLoad} is a maximum over any run.
 */
class GateOrderAndHedgeLoadTest {
  private final VirtualTime time = VirtualTime.create();

  /** A budget of one token, spent: it funds nothing until a success refills it. */
  private RetryBudget emptyBudget() {
    RetryBudget b = RetryBudget.of(0.1, 0, time);
    assertThat(b.trySpend(Criticality.CRITICAL_PLUS)).isTrue();
    assertThat(b.trySpend(Criticality.CRITICAL_PLUS)).isFalse();
    return b;
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void withAnEmptyBudgetAndAnOpenBreakerARetryIsRefusedByTheBreakerWithTheTimeToTheProbe(Way way) {
    CircuitBreaker breaker = CircuitBreaker.of("orders",
        CircuitBreaker.Config.DEFAULT.withConsecutiveFailures(1), time);
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBudget(emptyBudget()).withBreaker(breaker);
    Result r = way.run(p, time, fail(new IOException("down")), ok("never"));
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.reason).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
    ResilienceEvent terminal = r.terminal();
    assertThat(terminal.type()).isEqualTo(ResilienceEvent.Type.REJECTED_BY_BREAKER);
  }

  @ParameterizedTest
  @EnumSource(value = Way.class, names = {"EXECUTE", "RUN", "ASYNC"})
  void withAnEmptyBudgetAndAClosedBreakerTheBudgetRefusesBeforeTheBackoffIsSlept(Way way) {
    CircuitBreaker breaker = CircuitBreaker.of("closed", CircuitBreaker.Config.DEFAULT, time);
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBudget(emptyBudget()).withBreaker(breaker);
    Result r = way.run(p, time, fail(new IOException("down")), ok("never"));
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.reason).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    // no backoff slept: only the guarded pause
    assertThat(r.elapsed).isLessThanOrEqualTo(Duration.ofNanos(Decide.REJECTION_PAUSE_NANOS));
    // the retry that was asked about and refused holds nothing
    assertThat(breaker.metrics().calls()).isEqualTo(1);
  }

  @ParameterizedTest(name = "tail share {0}")
  @ValueSource(doubles = {0.0, 0.02, 0.10, 0.5})
  void maxExtraLoadIsAMaximumOverALongRunWhateverTheTail(double tail) {
    // an open-loop stream of calls, each answered after a latency drawn with a heavy tail; the retry
    // budget is off, so only the hedge's own allowance can hold hedges to the load asked for
    double load = 0.05;
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withTimeSource(time)
        .withHedge(Hedge.maxExtraLoad(load));
    java.util.SplittableRandom random = new java.util.SplittableRandom(7);
    AtomicInteger attempts = new AtomicInteger();
    int calls = 20_000;
    AtomicLong done = new AtomicLong();
    for (int i = 0; i < calls; i++) {
      p.runAsync(a -> {
        attempts.incrementAndGet();
        long millis = random.nextDouble() < tail ? 200 + random.nextInt(800) : 5 + random.nextInt(10);
        CompletableFuture<String> f = new CompletableFuture<>();
        time.schedule(() -> f.complete("v"), Duration.ofMillis(millis).toNanos());
        return f;
      }).thenRun(done::incrementAndGet);
      time.advance(Duration.ofMillis(2)); // 500 calls a second
    }
    time.runUntilIdle(Duration.ofHours(1));
    assertThat(done.get()).isEqualTo(calls);
    int hedges = attempts.get() - calls;
    assertThat(hedges).as("hedges sent for %d calls at maxExtraLoad %s", calls, load)
        .isLessThanOrEqualTo((int) Math.floor(load * calls + Hedge.ALLOWANCE_BURST));
    if (tail >= 0.10) {
      // the allowance caps hedging; it does not starve it: a tail beyond the load still gets most of it
      assertThat(hedges).as("a tail beyond the load spends the allowance").isGreaterThan((int) (0.5 * load * calls));
    }
  }
}
