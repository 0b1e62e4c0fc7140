package lookalike;

import dev.quell.Backoff;
import dev.quell.Hedge;
import dev.quell.Jitter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;

/** Timing, budgets and hedges at the edge of what is allowed: all valid, all able to retry. */
public class Timing {
  static final Resilience SEARCH = Resilience.DEFAULT.withName("search")
      .withDeadline(Duration.ofSeconds(1))
      .withAttemptTimeout(Duration.ofMillis(300));
  static final Resilience JUST_UNDER = Resilience.DEFAULT.withDeadline(Duration.ofMillis(10_001));
  static final Resilience NO_TIMEOUT = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(2)).withoutAttemptTimeout();
  static final Resilience FITS = SEARCH.withBackoff(Backoff.constant(Duration.ofMillis(200)));
  static final Resilience JITTERED = SEARCH.withBackoff(Backoff.exponential(Duration.ofSeconds(5)));
  static final Resilience EQUAL = SEARCH.withBackoff(Backoff.exponential(Duration.ofMillis(1800)).withJitter(Jitter.EQUAL));
  static final Resilience ONE_ATTEMPT = SEARCH.withAttempts(1).withBackoff(Backoff.constant(Duration.ofSeconds(5)));
  static final Resilience HEDGED = Resilience.DEFAULT.withAttempts(2).withHedge(Hedge.after(Duration.ofMillis(20)));
  static final RetryBudget WHOLE = RetryBudget.of(1.0, 0);
  static final RetryBudget WRITES = RetryBudget.shared("payments-api", 0.2, 1);
  static final RetryBudget READS = RetryBudget.shared("payments-api", 0.2, 1);
  static final Resilience PAYMENTS = Resilience.DEFAULT.withName("payments").withBudget(WRITES).withAttempts(1);
}
