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
  static final class Log implements CallObserver {
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
}
