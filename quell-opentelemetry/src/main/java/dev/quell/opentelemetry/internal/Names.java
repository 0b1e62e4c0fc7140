package dev.quell.opentelemetry.internal;

import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.internal.Internal;
import io.opentelemetry.api.common.AttributeKey;
import org.jspecify.annotations.Nullable;

/** Instrument, attribute and event names: the same as the Micrometer module's, listed in docs/telemetry.md. */
@Internal
public final class Names {
  private Names() {}

  public static final String CALLS = "quell.calls";
  public static final String ATTEMPTS = "quell.attempts";
  public static final String REJECTIONS = "quell.rejections";
  public static final String CALL_DURATION = "quell.call.duration";
  public static final String ATTEMPT_DURATION = "quell.attempt.duration";
  public static final String BUDGET_UTILIZATION = "quell.budget.utilization";
  public static final String BUDGET_TOKENS = "quell.budget.tokens";

  public static final AttributeKey<String> POLICY = AttributeKey.stringKey("quell.policy");
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("quell.outcome");
  public static final AttributeKey<String> VERDICT = AttributeKey.stringKey("quell.verdict");
  public static final AttributeKey<String> KIND = AttributeKey.stringKey("kind");
  public static final AttributeKey<String> BUDGET = AttributeKey.stringKey("quell.budget");

  // span event names and their extra attributes
  public static final String EVENT_ATTEMPT = "quell.attempt";
  public static final String EVENT_RETRY = "quell.retry";
  public static final String EVENT_REJECTED = "quell.rejected";
  public static final String EVENT_CALL = "quell.call";
  public static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("quell.attempt");
  public static final AttributeKey<Long> ATTEMPTS_MADE = AttributeKey.longKey("quell.attempts");
  public static final AttributeKey<Double> DURATION = AttributeKey.doubleKey("quell.duration");
  public static final AttributeKey<Double> DELAY = AttributeKey.doubleKey("quell.retry.delay");
  public static final AttributeKey<Double> UTILIZATION = AttributeKey.doubleKey("quell.budget.utilization");
  public static final AttributeKey<String> EXCEPTION_TYPE = AttributeKey.stringKey("exception.type");

  static final String[] KINDS = {"first", "retry", "hedge"};
  static final String[] VERDICTS = {"OK", "TRANSIENT", "THROTTLED", "PERMANENT", "CANCELLED"};

  static int kind(int attempt, boolean hedge) {
    return hedge ? 2 : attempt <= 1 ? 0 : 1;
  }

  static int verdict(@Nullable Verdict verdict) {
    return verdict == null ? 4 : verdict.kind().ordinal();
  }

  /** Stop reasons counted as {@code quell.rejections}: Quell refused work the call wanted to do. */
  static boolean isRejection(StopReason reason) {
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

  /** The {@code quell.policy} of a budget: its policy's name when it is that policy's own, else empty. */
  public static String budgetPolicyTag(String policy, String budgetName) {
    return budgetName.equals(policy) ? policy : "";
  }
}
