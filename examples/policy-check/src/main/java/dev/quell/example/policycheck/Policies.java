package dev.quell.example.policycheck;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;

/** The shop's production policies: one per dependency, shared by every call to it. */
public final class Policies {
  private Policies() {}

  /**
   * Calls to the inventory service: three attempts, each cut off at 160 ms, full-jitter backoff from
   * 50 ms, a second in all, and retries funded by the automatic budget. The build keeps this policy
   * honest: {@code InventoryPolicyTest} runs it against a model of inventory in a brownout.
   */
  public static final Resilience INVENTORY = Resilience.DEFAULT.with(s -> s
      .name("inventory")
      .attempts(3)
      .attemptTimeout(Duration.ofMillis(160))
      .backoff(Backoff.exponential(Duration.ofMillis(50)))
      .deadline(Duration.ofSeconds(1))
      .budget(RetryBudget.AUTOMATIC));
}
