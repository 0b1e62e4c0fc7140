package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A bound on what one process sends to a dependency: how fast ({@link #rate}), how many at once
 * ({@link #concurrency}), or how many at once as the dependency's health allows ({@link #adaptive}).
 *
 * <p>A limiter is a live, thread-safe object, like a {@link RetryBudget}: build it once per
 * dependency and share it among the policies that call that dependency. A policy asks its limiters
 * before every attempt — first attempts, retries and hedges alike — after the circuit breaker and
 * before the retry budget. A limiter that refuses ends the call with {@link StopReason#LIMITED} (and,
 * where it can tell, a Retry-After: the time until it expects to admit again). Its refusals are never
 * charged to the retry budget and never counted by the breaker as the dependency's failures.
 *
 * <p>The kinds:
 * <ul>
 *   <li>{@link #rate(double, int)}: a token bucket of {@code burst} permits refilled at
 *       {@code perSecond}, lazily, from the clock. No fixed windows, so never twice the rate across a
 *       window boundary; no pre-payment, so a caller is only admitted at once when a permit is there.
 *       With a bounded wait, an attempt may reserve a future permit and start when it comes, never
 *       later than its deadline allows.
 *   <li>{@link #concurrency(int)}: a bulkhead of {@code n} attempts in flight. With a bounded wait,
 *       attempts queue in arrival order and each ending attempt hands its permit straight to the
 *       oldest one waiting.
 *   <li>{@link #adaptive()}: a concurrency limit that finds its own level: by default the knee of the
 *       dependency, the concurrency past which its latency rises (see {@link AdaptiveConfig.Mode#KNEE});
 *       Netflix's loss-based AIMD and latency gradient remain as modes.
 * </ul>
 *
 * <p>Every kind admits and releases in one atomic step and never loses or duplicates a permit under
 * any number of threads. The read-only accessors ({@link #limit()}, {@link #inFlight()},
 * {@link #available()}) are for dashboards: each is a consistent reading of one moment, which may be
 * stale by the time it is used.
 *
 * <p>Bad parameters throw {@link ResilienceConfigurationException} when the limiter is built, naming
 * each parameter and value.
 */
public abstract sealed class Limiter permits RateLimiter, ConcurrencyLimiter, AdaptiveLimiter, AdaptiveThrottle {
  /** The longest {@link Duration} that converts to nanoseconds; anything longer saturates. */
  private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

  private static final AtomicInteger ANONYMOUS = new AtomicInteger();

  Limiter() {}

  // Rate ----------------------------------------------------------------------------------------

  /**
   * A rate limiter on the real clock that never waits: {@code perSecond} permits a second, up to
   * {@code burst} at once after a quiet spell.
   *
   * @param perSecond the sustained rate, greater than 0 and at most one permit a nanosecond (1e9)
   * @param burst how many permits the bucket holds, at least 1; it starts full
   * @throws ResilienceConfigurationException naming each parameter that is out of range
   */
  public static Limiter rate(double perSecond, int burst) {
    return rate(perSecond, burst, Duration.ZERO, TimeSource.system());
  }

  /**
   * A rate limiter on the real clock whose attempts may wait up to {@code maxWait} for a permit.
   *
   * @param maxWait the longest an attempt may wait for its permit; zero never waits. A wait is also
   *     never longer than the call's deadline allows: an attempt that would start after its
   *     deadline is refused at once. Durations too long to count in nanoseconds mean "as long as
   *     the deadline allows".
   */
  public static Limiter rate(double perSecond, int burst, Duration maxWait) {
    return rate(perSecond, burst, maxWait, TimeSource.system());
  }

  /** A rate limiter that never waits and refills from {@code timeSource}. */
  public static Limiter rate(double perSecond, int burst, TimeSource timeSource) {
    return rate(perSecond, burst, Duration.ZERO, timeSource);
  }

  /**
   * A rate limiter refilled from {@code timeSource} whose attempts may wait up to {@code maxWait}.
   * See {@link #rate(double, int)} and {@link #rate(double, int, Duration)}.
   */
  public static Limiter rate(double perSecond, int burst, Duration maxWait, TimeSource timeSource) {
    new Problems()
        .require(Double.isFinite(perSecond) && perSecond > 0 && perSecond <= RateLimiter.MAX_PER_SECOND,
            "rate limiter perSecond", perSecond, "must be a finite number greater than 0 and at most 1e9")
        .require(burst >= 1, "rate limiter burst", burst, "must be at least 1")
        .require(!(Double.isFinite(perSecond) && perSecond > 0 && burst >= 1)
                || RateLimiter.refillNanos(perSecond, burst) <= RateLimiter.MAX_REFILL_NANOS,
            "rate limiter burst / perSecond", burst + " / " + perSecond,
            "refilling a full bucket must take at most 100 years")
        .notNegative("rate limiter maxWait", maxWait)
        .require(timeSource != null, "rate limiter timeSource", null, "must not be null; use TimeSource.system()")
        .throwIfAny();
    return new RateLimiter("rate-" + ANONYMOUS.incrementAndGet(), perSecond, burst, saturatedNanos(maxWait),
        timeSource);
  }

  // Concurrency ---------------------------------------------------------------------------------

  /**
   * A bulkhead: at most {@code n} attempts in flight at once; any more are refused at once.
   *
   * @param n at least 1
   * @throws ResilienceConfigurationException if {@code n} is out of range
   */
  public static Limiter concurrency(int n) {
    return concurrency(n, Duration.ZERO);
  }

  /**
   * A bulkhead whose refused attempts may wait up to {@code maxWait} for a permit. Waiting attempts
   * queue in arrival order; an attempt that ends hands its permit straight to the oldest one, so a
   * newcomer never overtakes the queue. The wait also ends at the call's deadline and when the
   * caller cancels.
   *
   * @param maxWait zero never waits; durations too long to count in nanoseconds mean "as long as
   *     the deadline allows"
   */
  public static Limiter concurrency(int n, Duration maxWait) {
    new Problems()
        .require(n >= 1 && n < ConcurrencyLimiter.MAX_LIMIT, "concurrency limit n", n,
            "must be at least 1 and less than " + ConcurrencyLimiter.MAX_LIMIT)
        .notNegative("concurrency limit maxWait", maxWait)
        .throwIfAny();
    return new ConcurrencyLimiter("concurrency-" + ANONYMOUS.incrementAndGet(), n, saturatedNanos(maxWait));
  }

  // Adaptive ------------------------------------------------------------------------------------

  /** An adaptive concurrency limit with {@link AdaptiveConfig#DEFAULT}: finds the knee, 5 to 1000, starting at 20. */
  public static Limiter adaptive() {
    return adaptive(AdaptiveConfig.DEFAULT);
  }

  /**
   * An adaptive concurrency limit with the given configuration.
   *
   * @throws ResilienceConfigurationException if the limits are inconsistent (min ≤ initial ≤ max)
   */
  public static Limiter adaptive(AdaptiveConfig config) {
    new Problems()
        .require(config != null, "adaptive limiter config", null, "must not be null; use AdaptiveConfig.DEFAULT")
        .throwIfAny();
    config.validate();
    return new AdaptiveLimiter("adaptive-" + ANONYMOUS.incrementAndGet(), config);
  }

  // Adaptive throttling ---------------------------------------------------------------------------

  /**
   * Client-side adaptive throttling as the Google SRE book describes it, with its defaults: K = 2 over
   * a two-minute window, on the real clock. See {@link #throttle(double, Duration, TimeSource)}.
   */
  public static Limiter throttle() {
    return throttle(2, Duration.ofMinutes(2), TimeSource.system());
  }

  /** Client-side adaptive throttling with {@code k} over {@code window}, on the real clock. */
  public static Limiter throttle(double k, Duration window) {
    return throttle(k, window, TimeSource.system());
  }

  /**
   * Client-side adaptive throttling (the Google SRE book's, "Handling Overload"): over the last
   * {@code window} it counts the first attempts asked for ({@code requests}, its own refusals
   * included) and the attempts the dependency accepted ({@code accepts}: it answered, well or with
   * a permanent error), and refuses a first attempt locally, with {@link StopReason#LIMITED} and a
   * Retry-After, with probability {@code max(0, (requests − K × accepts) / (requests + 1))}. While
   * the dependency accepts what it is sent, it refuses nothing. K = 2 sends about one attempt the
   * dependency rejects per one it accepts, so a recovery is seen quickly; K = 1.1 sheds harder.
   *
   * <p>Criticality-aware: {@code SHEDDABLE} uses K, {@code SHEDDABLE_PLUS} 1.5 K, {@code CRITICAL}
   * 2 K and {@code CRITICAL_PLUS} 3 K, so sheddable work is refused first. Retries and hedges are
   * never refused by it (the retry budget bounds them). Cancelled attempts and attempts that never
   * started count for nothing; its own refusals are never counted as the dependency's rejections. A
   * policy asks it after its concurrency limits and before the retry budget.
   *
   * @param k in [1, 10]
   * @param window from 1 s to 1 h
   * @throws ResilienceConfigurationException naming each parameter that is out of range
   */
  public static Limiter throttle(double k, Duration window, TimeSource timeSource) {
    new Problems()
        .require(Double.isFinite(k) && k >= 1 && k <= 10, "throttle k", k, "must be a number in [1, 10]")
        .require(window != null && window.compareTo(Duration.ofSeconds(1)) >= 0
            && window.compareTo(Duration.ofHours(1)) <= 0, "throttle window", window, "must be from 1 s to 1 h")
        .require(timeSource != null, "throttle timeSource", null, "must not be null; use TimeSource.system()")
        .throwIfAny();
    return new AdaptiveThrottle("throttle-" + ANONYMOUS.incrementAndGet(), k, window.toNanos(), timeSource);
  }

  // Reading -------------------------------------------------------------------------------------

  /**
   * The share of first attempts an {@link #throttle adaptive throttle} refuses now, at
   * {@link Criticality#CRITICAL}; 0 for every other kind.
   */
  public double rejectionProbability() {
    return 0;
  }

  /** A name for dashboards: {@code rate-1}, {@code concurrency-2}, {@code adaptive-3}, … */
  public abstract String name();

  /**
   * The most attempts it can admit at once: the burst of a rate limiter, {@code n} for a bulkhead,
   * the current limit of an adaptive one.
   */
  public abstract int limit();

  /**
   * Attempts it admitted that have not ended yet, including those still waiting for a reserved
   * permit. A rate limiter counts them but does not bound them.
   */
  public abstract int inFlight();

  /**
   * How many attempts it would admit right now without waiting: whole tokens in a rate limiter's
   * bucket, free permits in a concurrency limit (0 while attempts queue for one).
   */
  public abstract int available();

  /** Attempts queued for a permit: only a concurrency limit with a wait queues; 0 for the others. */
  public int queued() {
    return 0;
  }

  /** The gate the core asks before every attempt. */
  abstract Gate gate();

  /**
   * A new limiter of the same kind and configuration, on the same clock, with fresh state (full
   * bucket, nothing in flight, the initial limit) — for a scope that keeps one limiter per key.
   */
  abstract Limiter copy(String name);

  /**
   * A new limiter of the same kind and configuration, on the same clock, called {@code name}, with
   * fresh state (a full bucket, nothing in flight, the initial limit). Telemetry reports limiters by
   * name; a framework that builds limiters from configuration names them after their policy.
   *
   * @throws ResilienceConfigurationException if {@code name} is blank
   */
  @SuppressWarnings("ConstantConditions") // callers without nullness checking may still pass null
  public Limiter withName(String name) {
    new Problems().require(name != null && !name.isBlank(), "limiter name", name == null ? null : '"' + name + '"',
        "must not be blank").throwIfAny();
    return copy(name);
  }

  /** {@code d} in nanoseconds, saturating at {@code Long.MAX_VALUE}; {@code d} is not negative. */
  static long saturatedNanos(Duration d) {
    return d.compareTo(MAX_NANOS) >= 0 ? Long.MAX_VALUE : d.toNanos();
  }

  // Configuration of the adaptive kind ----------------------------------------------------------

  /**
   * The configuration of an {@link #adaptive(AdaptiveConfig) adaptive concurrency limit}: an
   * immutable value; each {@code with…} returns a new one and checks its own argument at once.
   * Whether minimum ≤ initial ≤ maximum is checked when the limiter is built, so the order of the
   * {@code with…} calls does not matter.
   *
   * <p>Three modes:
   * <ul>
   *   <li>{@link Mode#KNEE} (the default): finds the concurrency past which the dependency's latency
   *       rises and holds the limit near it. It compares the 10th percentile of latency over windows
   *       of ended attempts with a baseline that a quiet spell of health checks cannot lower and a
   *       limit sitting at the knee cannot raise; grows while latency is flat and the limit in use,
   *       shrinks in proportion when it rises; timeouts and failures count as too slow, and a window
   *       losing more of them than usual shrinks it even while the answered attempts are fast; throttling
   *       shrinks it by {@link #backoffRatio()}; cancellations are neutral; a burst of timeouts costs
   *       one decrease. Only the limits and {@link #backoffRatio()} apply to it.
   *   <li>{@link Mode#LOSS} ({@link #loss()}): Netflix's AIMD. An attempt that failed, timed out or
   *       was throttled multiplies the limit by {@link #backoffRatio()}; one that succeeded (or was
   *       answered with a permanent error) adds one, but only while at least half the limit is in
   *       flight. Cancelled attempts, and attempts that never started, change nothing.
   *   <li>{@link Mode#GRADIENT} ({@link #gradient()}): compares each successful attempt's latency to
   *       a long-run average and shrinks the limit in proportion when latency rises above
   *       {@link #tolerance()} times that average; grows it by a small headroom while latency stays
   *       near the average. Failures, timeouts and throttling still shrink it by
   *       {@link #backoffRatio()}.
   * </ul>
   */
  @dev.quell.internal.CheckReturnValue
  public static final class AdaptiveConfig {
    /** How the limit responds to outcomes. */
    public enum Mode {
      /**
       * Loss-based AIMD, as Netflix's concurrency-limits: kept for compatibility; {@link #KNEE} finds
       * the knee where this swings between its minimum and maximum.
       */
      LOSS,
      /** Latency gradient against a long-run average, as Netflix's Gradient2: kept for compatibility. */
      GRADIENT,
      /**
       * The default: finds the concurrency past which latency rises (the knee) and holds the limit
       * near it. Watches the 10th percentile of latency over windows of attempts against a
       * baseline that a burst of cheap calls or a slower dependency cannot keep wrong; timeouts,
       * failures and throttling count as too slow; cancellations are neutral.
       */
      KNEE
    }

    /** The largest limit accepted. */
    public static final int MAX_LIMIT = 1_000_000;

    /**
     * {@link Mode#KNEE}, starting at 20, never below 5 nor above 1000, shrinking by at least 0.9 per
     * decrease: no tuning needed for a client calling one dependency.
     */
    public static final AdaptiveConfig DEFAULT = new AdaptiveConfig(Mode.KNEE, 20, 5, 1000, 0.9, 1.5, 0.2, 600);

    /** Netflix's AIMD defaults: {@link Mode#LOSS} starting at 20, never below 20 nor above 200, backing off by 0.9. */
    private static final AdaptiveConfig AIMD = new AdaptiveConfig(Mode.LOSS, 20, 20, 200, 0.9, 1.5, 0.2, 600);

    private final Mode mode;
    private final int initialLimit;
    private final int minLimit;
    private final int maxLimit;
    private final double backoffRatio;
    private final double tolerance;
    private final double smoothing;
    private final int longWindow;

    private AdaptiveConfig(Mode mode, int initialLimit, int minLimit, int maxLimit, double backoffRatio,
        double tolerance, double smoothing, int longWindow) {
      this.mode = mode;
      this.initialLimit = initialLimit;
      this.minLimit = minLimit;
      this.maxLimit = maxLimit;
      this.backoffRatio = backoffRatio;
      this.tolerance = tolerance;
      this.smoothing = smoothing;
      this.longWindow = longWindow;
    }

    /** {@link Mode#GRADIENT} with Netflix's Gradient2 limits: starting at 20, never below 20 nor above 200. */
    public static AdaptiveConfig gradient() {
      return AIMD.withMode(Mode.GRADIENT);
    }

    /**
     * {@link Mode#LOSS} with Netflix's AIMD defaults (starting at 20, never below 20 nor above 200,
     * backing off by 0.9): what {@link #DEFAULT} was before {@link Mode#KNEE}.
     */
    public static AdaptiveConfig loss() {
      return AIMD;
    }

    /** {@link Mode#LOSS} or {@link Mode#GRADIENT}. */
    public AdaptiveConfig withMode(Mode mode) {
      new Problems().require(mode != null, "adaptive mode", null, "must be KNEE, LOSS or GRADIENT").throwIfAny();
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    /** The limit it starts at, default 20; must lie in [minimum, maximum] when the limiter is built. */
    public AdaptiveConfig withInitialLimit(int initialLimit) {
      checkLimit("adaptive initialLimit", initialLimit);
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    /** The limit never falls below this, default 5; at least 1. */
    public AdaptiveConfig withMinLimit(int minLimit) {
      checkLimit("adaptive minLimit", minLimit);
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    /** The limit never rises above this, default 1000; at most {@link #MAX_LIMIT}. */
    public AdaptiveConfig withMaxLimit(int maxLimit) {
      checkLimit("adaptive maxLimit", maxLimit);
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    /** What a loss multiplies the limit by, default 0.9; in [0.5, 1). */
    public AdaptiveConfig withBackoffRatio(double backoffRatio) {
      new Problems()
          .require(backoffRatio >= 0.5 && backoffRatio < 1, "adaptive backoffRatio", backoffRatio,
              "must be at least 0.5 and less than 1")
          .throwIfAny();
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    /**
     * Gradient mode: how far above the long-run average latency may rise before the limit shrinks,
     * default 1.5 (50% above); in [1, 100].
     */
    public AdaptiveConfig withTolerance(double tolerance) {
      new Problems()
          .require(tolerance >= 1 && tolerance <= 100, "adaptive tolerance", tolerance, "must be in [1, 100]")
          .throwIfAny();
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    /** Gradient mode: how much of each new estimate the limit takes, default 0.2; in (0, 1]. */
    public AdaptiveConfig withSmoothing(double smoothing) {
      new Problems()
          .require(smoothing > 0 && smoothing <= 1, "adaptive smoothing", smoothing, "must be in (0, 1]")
          .throwIfAny();
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    /**
     * Gradient mode: how many samples the long-run average latency spans (an exponential moving
     * average), default 600; in [10, 1000000].
     */
    public AdaptiveConfig withLongWindow(int samples) {
      new Problems()
          .require(samples >= 10 && samples <= 1_000_000, "adaptive longWindow", samples, "must be in [10, 1000000]")
          .throwIfAny();
      return new AdaptiveConfig(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, samples);
    }

    /** KNEE (the default), LOSS or GRADIENT. */
    public Mode mode() {
      return mode;
    }

    /** The limit a new limiter starts at; default 20. */
    public int initialLimit() {
      return initialLimit;
    }

    /** The limit never falls below this; default 5. */
    public int minLimit() {
      return minLimit;
    }

    /** The limit never rises above this; default 1000. */
    public int maxLimit() {
      return maxLimit;
    }

    /** What a loss multiplies the limit by; default 0.9. */
    public double backoffRatio() {
      return backoffRatio;
    }

    /** Gradient mode: how far latency may rise above its long-run average before the limit shrinks; default 1.5. */
    public double tolerance() {
      return tolerance;
    }

    /** Gradient mode: the share of each new estimate the limit takes; default 0.2. */
    public double smoothing() {
      return smoothing;
    }

    /** Gradient mode: the samples the long-run average latency spans; default 600. */
    public int longWindow() {
      return longWindow;
    }

    private static void checkLimit(String parameter, int value) {
      new Problems()
          .require(value >= 1 && value <= MAX_LIMIT, parameter, value, "must be in [1, " + MAX_LIMIT + "]")
          .throwIfAny();
    }

    void validate() {
      new Problems()
          .require(minLimit <= maxLimit, "adaptive minLimit", minLimit, "must not be above maxLimit (" + maxLimit + ")")
          .require(initialLimit >= minLimit && initialLimit <= maxLimit, "adaptive initialLimit", initialLimit,
              "must be in [minLimit, maxLimit] = [" + minLimit + ", " + maxLimit + "]")
          .throwIfAny();
    }

    @Override
    public boolean equals(@Nullable Object o) {
      if (this == o) {
        return true;
      }
      if (!(o instanceof AdaptiveConfig)) {
        return false;
      }
      AdaptiveConfig c = (AdaptiveConfig) o;
      return mode == c.mode && initialLimit == c.initialLimit && minLimit == c.minLimit && maxLimit == c.maxLimit
          && Double.compare(backoffRatio, c.backoffRatio) == 0 && Double.compare(tolerance, c.tolerance) == 0
          && Double.compare(smoothing, c.smoothing) == 0 && longWindow == c.longWindow;
    }

    @Override
    public int hashCode() {
      return Objects.hash(mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance, smoothing, longWindow);
    }

    @Override
    public String toString() {
      String base = "AdaptiveConfig[" + mode + ", initial=" + initialLimit + ", min=" + minLimit + ", max=" + maxLimit
          + ", backoffRatio=" + backoffRatio;
      return mode == Mode.GRADIENT
          ? base + ", tolerance=" + tolerance + ", smoothing=" + smoothing + ", longWindow=" + longWindow + "]"
          : base + "]";
    }
  }
}
