package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Every Java example in docs/retry-budget.md, compiled and run. */
class BudgetDocsExamplesTest {

  interface Client {
    String call() throws IOException;
  }

  @Test
  void kinds() {
    // --- kinds ---
    RetryBudget automatic = RetryBudget.AUTOMATIC;                 // the default: one bucket per policy
    RetryBudget own = RetryBudget.of(0.2, 5);                      // 20% of successes, 5 a second floor
    RetryBudget shared = RetryBudget.shared("payments-api");       // one bucket for every caller of this name
    RetryBudget grpcStyle = RetryBudget.feedback(100, 0.1);        // gRPC's retry throttling
    RetryBudget allowance = RetryBudget.replenishing(50, Duration.ofMinutes(1)); // 50 retries a minute
    RetryBudget off = RetryBudget.NONE;                            // no bound but attempts and deadline
    // --- end ---
    assertThat(own.capacity()).isEqualTo(50.0);
    assertThat(shared.name()).isEqualTo("payments-api");
    assertThat(grpcStyle.capacity()).isEqualTo(100.0);
    assertThat(allowance.capacity()).isEqualTo(50.0);
    assertThat(off.trySpend()).isTrue();
    assertThat(automatic.utilization()).isZero();
  }

  @Test
  void sharingAndWatching() {
    // --- sharing ---
    Resilience reads = Resilience.DEFAULT.withName("payments-read")
        .withBudget(RetryBudget.shared("payments-api"));
    Resilience writes = Resilience.DEFAULT.withName("payments-write").withAttempts(2)
        .withBudget(RetryBudget.shared("payments-api"));
    // --- end ---
    // --- watching ---
    RetryBudget live = reads.budget();
    double spent = live.utilization();   // 0 = untouched, 1 = refusing retries now
    double left = live.tokens();         // retries it could fund right now
    // --- end ---
    assertThat(writes.budget()).isSameAs(live);
    assertThat(spent).isBetween(0.0, 1.0);
    assertThat(left).isLessThanOrEqualTo(live.capacity());
  }

  @Test
  void ownLoop() throws Exception {
    VirtualTime time = VirtualTime.create();
    int[] calls = {0};
    Client client = () -> {
      if (++calls[0] == 1) {
        throw new IOException("flaky");
      }
      return "reply";
    };
    RetryBudget budget = RetryBudget.of(0.1, 3, time);
    // --- own loop ---
    String reply = null;
    for (int attempt = 1; reply == null; attempt++) {
      try {
        reply = client.call();
        budget.deposit();                       // every success funds a tenth of a retry
      } catch (IOException e) {
        budget.recordFailure();                 // only the feedback kind counts failures
        if (attempt == 3 || !budget.trySpend()) {
          throw e;                              // out of attempts, or the budget says no
        }
      }
    }
    // --- end ---
    assertThat(reply).isEqualTo("reply");
    assertThat(budget.tokens()).isEqualTo(29.1);
  }

  @Test
  void refusal() {
    VirtualTime time = VirtualTime.create();
    Resilience policy = Resilience.DEFAULT.withTimeSource(time).withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.of(0.1, 0, time));
    policy.budget().trySpend();
    // --- refusal ---
    Outcome<String> outcome = policy.run(() -> { throw new IOException("down"); });
    if (outcome.stopReason() == StopReason.BUDGET_EXHAUSTED) {
      // the dependency is struggling and this process has spent its share of retries:
      // fail fast, serve a fallback, and let the dependency recover
    }
    // --- end ---
    assertThat(outcome.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(outcome.failure()).get().isInstanceOf(CallRejectedException.class);
  }
}
