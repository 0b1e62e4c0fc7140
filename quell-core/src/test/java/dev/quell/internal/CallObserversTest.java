package dev.quell.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** An event passed through {@link CallObservers#dispatch} reaches an observer as the core's direct calls do. */
class CallObserversTest {

  /** Writes each call down; {@code budget} by name since the live budget is the same object either way. */
  static class Log implements CallObserver {
    final List<String> lines = new ArrayList<>();

    @Override
    public void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge) {
      lines.add("started " + policy + " " + budget.name() + " " + criticality + " " + attempt + " " + hedge);
    }

    @Override
    public void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
        @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
      lines.add("ended " + policy + " " + budget.name() + " " + attempt + " " + hedge + " " + verdict + " "
          + failure + " " + durationNanos);
    }

    @Override
    public void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos) {
      lines.add("retrying " + policy + " " + attempt + " " + delayNanos);
    }

    @Override
    public void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
        @Nullable Verdict verdict, long elapsedNanos) {
      lines.add("call " + policy + " " + budget.name() + " " + reason + " " + attempts + " " + verdict + " "
          + elapsedNanos);
    }
  }

  /** Called both ways: the core prefers the CallObserver methods. */
  static final class Direct implements ResilienceListener, CallObserver {
    final Log log = new Log();

    @Override
    public void onEvent(ResilienceEvent event) {
      throw new AssertionError("the core calls an observer directly");
    }

    @Override
    public void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge) {
      log.attemptStarted(policy, budget, criticality, attempt, hedge);
    }

    @Override
    public void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
        @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
      log.attemptEnded(policy, budget, criticality, attempt, hedge, verdict, failure, durationNanos);
    }

    @Override
    public void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos) {
      log.retrying(policy, budget, criticality, attempt, delayNanos);
    }

    @Override
    public void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
        @Nullable Verdict verdict, long elapsedNanos) {
      log.callEnded(policy, budget, criticality, reason, attempts, verdict, elapsedNanos);
    }
  }

  /** A still clock with seeded jitter, so both runs see the same delays. */
  private static Resilience policy() {
    return Resilience.DEFAULT.withName("inventory").withAttempts(3).withTimeSource(new StillTime());
  }

  private static void calls(Resilience policy, IOException failure) {
    AtomicInteger n = new AtomicInteger();
    policy.run(() -> {
      if (n.incrementAndGet() < 3) {
        throw failure;
      }
      return "ok";
    });
    policy.run(() -> {
      throw new IllegalArgumentException("permanent");
    });
  }

  @Test
  void dispatchedEventsMatchTheDirectCalls() {
    IOException failure = new IOException("flaky");
    Direct direct = new Direct();
    calls(policy().withListener(direct), failure);

    Log dispatched = new Log();
    calls(policy().withListener(event -> CallObservers.dispatch(event, dispatched)), failure);

    assertThat(direct.log.lines).hasSizeGreaterThan(8);
    assertThat(direct.log.lines).anyMatch(l -> l.startsWith("retrying"));
    assertThat(direct.log.lines.get(direct.log.lines.size() - 1)).startsWith("call inventory inventory PERMANENT 1");
    assertThat(dispatched.lines).isEqualTo(direct.log.lines);
  }

  /** Writes down the hedge and breaker calls, which carry no budget or breaker through an event. */
  static final class HedgesAndBreakers extends Log {
    @Override
    public void hedged(String policy, RetryBudget budget, Criticality criticality, ResilienceEvent.Type type,
        int attempt) {
      lines.add("hedged " + policy + " " + type + " " + attempt);
    }

    @Override
    public void breakerMoved(String policy, dev.quell.@Nullable CircuitBreaker breaker,
        dev.quell.CircuitBreaker.State state, int attempt) {
      lines.add("breaker " + policy + " " + breaker + " " + state + " " + attempt);
    }
  }

  @Test
  void hedgeEventsAndBreakerTransitionsAreDispatchedToTheirMethods() {
    HedgesAndBreakers dispatched = new HedgesAndBreakers();
    Resilience tripping = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(new StillTime())
        .withBreaker(dev.quell.CircuitBreaker.Config.DEFAULT.withMinimumCalls(2))
        .withListener(event -> CallObservers.dispatch(event, dispatched));
    for (int i = 0; i < 2; i++) {
      tripping.run(() -> {
        throw new IOException("down");
      });
    }
    assertThat(dispatched.lines).filteredOn(l -> l.startsWith("breaker"))
        .containsExactly("breaker inventory null OPEN 1");
    assertThat(dispatched.lines).noneMatch(l -> l.startsWith("hedged"));

    // an event of each hedge type, as a listener receives them
    Resilience hedging = Resilience.DEFAULT.withName("search").withAttempts(2).withTimeSource(new StillTime())
        .withHedge(dev.quell.Hedge.after(java.time.Duration.ofMillis(10)))
        .withBudget(RetryBudget.of(0.1, 0, new StillTime()));
    assertThat(hedging.budget().trySpend()).isTrue(); // dry: the hedge will be suppressed
    List<ResilienceEvent> events = new ArrayList<>();
    java.util.concurrent.atomic.AtomicReference<Runnable> due = new java.util.concurrent.atomic.AtomicReference<>();
    dev.quell.TimeSource manual = new dev.quell.TimeSource() {
      @Override
      public long nanoTime() {
        return 0;
      }

      @Override
      public void sleep(long nanos) {}

      @Override
      public Scheduled schedule(Runnable task, long delayNanos) {
        due.set(task);
        return () -> true;
      }

      @Override
      public java.util.random.RandomGenerator random() {
        return new java.util.Random(1);
      }
    };
    java.util.concurrent.CompletableFuture<String> open = new java.util.concurrent.CompletableFuture<>();
    hedging.withTimeSource(manual).withBudget(RetryBudget.of(0.1, 0, manual)).withListener(events::add)
        .executeAsync(() -> open);
    Runnable hedgeDue = due.get();
    assertThat(hedgeDue).as("the hedge timer").isNotNull();
    hedgeDue.run();
    open.complete("ok");
    HedgesAndBreakers fromEvents = new HedgesAndBreakers();
    events.forEach(e -> CallObservers.dispatch(e, fromEvents));
    assertThat(fromEvents.lines).filteredOn(l -> l.startsWith("hedged")).isNotEmpty()
        .allMatch(l -> l.startsWith("hedged search HEDGE_"));
    assertThat(fromEvents.lines.stream().filter(l -> l.startsWith("hedged")).count())
        .isEqualTo(events.stream().filter(e -> e.type().name().startsWith("HEDGE_")).count());
  }
}
