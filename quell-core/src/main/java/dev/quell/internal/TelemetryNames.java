package dev.quell.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.ResilienceEvent;
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
  public static final String HEDGES = "quell.hedges";
  public static final String BREAKER_STATE = "quell.breaker.state";
  public static final String BREAKER_TRANSITIONS = "quell.breaker.transitions";
  public static final String BREAKER_REFUSALS = "quell.breaker.refusals";
  public static final String BREAKER_FAILURE_RATE = "quell.breaker.failure.rate";
  public static final String LIMITER_LIMIT = "quell.limiter.limit";
  public static final String LIMITER_IN_FLIGHT = "quell.limiter.in_flight";
  public static final String LIMITER_AVAILABLE = "quell.limiter.available";
  public static final String LIMITER_QUEUED = "quell.limiter.queued";
  /** The share of first attempts an adaptive throttle refuses now (0 for every other limiter). */
  public static final String LIMITER_REJECTION_PROBABILITY = "quell.limiter.rejection_probability";
  public static final String ATTEMPT_P95 = "quell.attempt.p95";
  public static final String ATTEMPT_CEILING = "quell.attempt.ceiling";
  public static final String HEDGE_DELAY = "quell.hedge.delay";

  public static final String TAG_POLICY = "quell.policy";
  public static final String TAG_OUTCOME = "quell.outcome";
  public static final String TAG_VERDICT = "quell.verdict";
  public static final String TAG_KIND = "kind";
  public static final String TAG_BUDGET = "quell.budget";
  public static final String TAG_HEDGE = "quell.hedge";
  public static final String TAG_BREAKER = "quell.breaker";
  public static final String TAG_STATE = "state";
  public static final String TAG_LIMITER = "quell.limiter";

  /** Number of hedge tag values: indexes of {@link #hedgeName}. */
  public static final int HEDGE_EVENTS = 4;
  /**
   * The breaker counters a tracker keeps per breaker: one per state (transitions into it), then
   * refusals at {@link #BREAKER_REFUSALS_SLOT}.
   */
  public static final int BREAKER_COUNTERS = CircuitBreaker.State.values().length + 1;
  private static final CircuitBreaker.State[] STATES = CircuitBreaker.State.values();
  /** The slot of the refusals among {@link #BREAKER_COUNTERS}. */
  public static final int BREAKER_REFUSALS_SLOT = CircuitBreaker.State.values().length;

  /** Number of attempt kinds: indexes of {@link #kindName}. */
  public static final int KINDS = 3;
  /** Number of verdict tag values: indexes of {@link #verdictName}. */
  public static final int VERDICTS = 5;

  private static final String[] KIND_NAMES = {"first", "retry", "hedge"};
  private static final String[] HEDGE_NAMES = {"started", "won", "discarded", "suppressed"};
  /** The verdict kinds, then CANCELLED for a cancelled attempt. */
  private static final String[] VERDICT_NAMES = {"OK", "TRANSIENT", "THROTTLED", "PERMANENT", "CANCELLED"};

  /** The breaker state of counter {@code slot} (below {@link #BREAKER_REFUSALS_SLOT}) and of the state gauges. */
  public static CircuitBreaker.State breakerState(int slot) {
    return STATES[slot];
  }

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

  /** The {@code quell.hedge} index of a hedge event: 0 started, 1 won, 2 discarded, 3 suppressed; -1 otherwise. */
  public static int hedge(ResilienceEvent.Type type) {
    switch (type) {
      case HEDGE_STARTED:
        return 0;
      case HEDGE_WON:
        return 1;
      case HEDGE_DISCARDED:
        return 2;
      case HEDGE_SUPPRESSED:
        return 3;
      default:
        return -1;
    }
  }

  /** The {@code quell.hedge} tag value of index {@code hedge}. */
  public static String hedgeName(int hedge) {
    return HEDGE_NAMES[hedge];
  }

  /**
   * The {@code kind} tag of a limiter: {@code rate}, {@code concurrency} or {@code adaptive} (read once,
   * when its gauges are set up: the kinds are not public types).
   */
  public static String limiterKind(Limiter limiter) {
    switch (limiter.getClass().getSimpleName()) {
      case "RateLimiter":
        return "rate";
      case "ConcurrencyLimiter":
        return "concurrency";
      case "AdaptiveLimiter":
        return "adaptive";
      case "AdaptiveThrottle":
        return "throttle";
      default:
        return "other";
    }
  }

  /** The breaker's reading for counter {@code slot} of {@link #BREAKER_COUNTERS}, from a snapshot. */
  public static long breakerCount(CircuitBreaker.Metrics metrics, int slot) {
    return slot == BREAKER_REFUSALS_SLOT ? metrics.refusals()
        : metrics.transitionsTo(STATES[slot]);
  }
}
