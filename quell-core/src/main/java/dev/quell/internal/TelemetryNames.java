package dev.quell.internal;

import dev.quell.StopReason;
import dev.quell.Verdict;
import org.jspecify.annotations.Nullable;

/**
 * Instrument and tag names shared by the Micrometer and OpenTelemetry modules (listed in
 * docs/telemetry.md), and the small mappings from a call's facts to tag values, so both modules
 * report the same series.
 */
@Internal
public final class TelemetryNames {
  private TelemetryNames() {}

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

  /** Number of attempt kinds: indexes of {@link #kindName}. */
  public static final int KINDS = 3;
  /** Number of verdict tag values: indexes of {@link #verdictName}. */
  public static final int VERDICTS = 5;

  private static final String[] KIND_NAMES = {"first", "retry", "hedge"};
  /** The verdict kinds, then CANCELLED for a cancelled attempt. */
  private static final String[] VERDICT_NAMES = {"OK", "TRANSIENT", "THROTTLED", "PERMANENT", "CANCELLED"};

  /** The {@code kind} index of an attempt: 0 first, 1 retry, 2 hedge. */
  public static int kind(int attempt, boolean hedge) {
    return hedge ? 2 : attempt <= 1 ? 0 : 1;
  }

  /** The {@code kind} tag value of index {@code kind}. */
  public static String kindName(int kind) {
    return KIND_NAMES[kind];
  }

  /** The {@code quell.verdict} index of an attempt's verdict; a cancelled attempt (null) is CANCELLED. */
  public static int verdict(@Nullable Verdict verdict) {
    return verdict == null ? 4 : verdict.kind().ordinal();
  }

  /** The {@code quell.verdict} tag value of index {@code verdict}. */
  public static String verdictName(int verdict) {
    return VERDICT_NAMES[verdict];
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
}
