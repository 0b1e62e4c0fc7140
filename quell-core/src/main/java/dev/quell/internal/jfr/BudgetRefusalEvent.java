package dev.quell.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Percentage;
import jdk.jfr.StackTrace;
import org.jspecify.annotations.Nullable;

/** A retry budget refused a call's retry, and the call stopped with BUDGET_EXHAUSTED. */
@Name("dev.quell.BudgetRefusal")
@Label("Quell Budget Refusal")
@Category({"Quell", "Refusals"})
@Description("A retry budget refused a retry, so the call stopped with BUDGET_EXHAUSTED: the dependency is failing"
    + " faster than successful calls refill the budget.")
@Enabled(false)
@StackTrace(false)
final class BudgetRefusalEvent extends Event {
  @Label("Policy")
  @Nullable String policy;

  @Label("Key")
  @Description("The dependency key, when the policy is a PolicyScope key's; empty otherwise.")
  @Nullable String key;

  @Label("Budget")
  @Description("The budget's name.")
  @Nullable String budget;

  @Label("Attempts")
  @Description("Attempts the call had made when its retry was refused.")
  int attempts;

  @Label("Utilization")
  @Description("How much of the budget was spent when the event was recorded.")
  @Percentage
  double utilization;

  @Label("Tokens")
  @Description("Retries the budget could fund when the event was recorded.")
  double tokens;
}
