package dev.quell.micrometer.internal;

import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.internal.Internal;
import org.jspecify.annotations.Nullable;

/** Instrument and tag names: the same in the Micrometer and OpenTelemetry modules, listed in docs/telemetry.md. */
@Internal
public final class MeterNames {
  private MeterNames() {}

  public static final String CALLS = "quell.calls";
  public static final String ATTEMPTS = "quell.attempts";
  public static final String REJECTIONS = "quell.rejections";
  public static final String CALL_DURATION = "quell.call.duration";
  public static final String ATTEMPT_DURATION = "quell.attempt.duration";
  public static final String BUDGET_UTILIZATION = "quell.budget.utilization";
  public static final String BUDGET_TOKENS = "quell.budget.tokens";

  public static final String TAG_POLICY = "quell.policy";
  public static final String TAG_OUTCOME = "quell.outcome";
  public static final String TAG_VERDICT = "quell.verdict";
  public static final String TAG_KIND = "kind";
  public static final String TAG_BUDGET = "quell.budget";

  /** Attempt kinds, indexed as {@link #kind}. */
  static final String[] KINDS = {"first", "retry", "hedge"};
  /** Verdict tag values, indexed as {@link #verdict}: the verdict kinds, then CANCELLED for a cancelled attempt. */
  static final String[] VERDICTS = {"OK", "TRANSIENT", "THROTTLED", "PERMANENT", "CANCELLED"};

  static int kind(int attempt, boolean hedge) {
    return hedge ? 2 : attempt <= 1 ? 0 : 1;
  }

  static int verdict(@Nullable Verdict verdict) {
    return verdict == null ? 4 : verdict.kind().ordinal();
  }

  /** The stop reasons counted as {@code quell.rejections}: Quell refused work the call wanted to do. */
  public static boolean isRejection(StopReason reason) {
    switch (reason) {
      case BUDGET_EXHAUSTED:
      case DEPENDENCY_UNAVAILABLE:
      case LIMITED:
      case DRAINING:
        return true;
      default:
        return false;
    }
  }

  /**
   * The {@code quell.policy} tag of a budget's gauges: the policy's name when the budget is that
   * policy's own (automatic budgets carry their policy's name), empty for a budget that may serve
   * several policies.
   */
  public static String budgetPolicyTag(String policy, String budgetName) {
    return budgetName.equals(policy) ? policy : "";
  }
}
