package dev.quell.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/**
 * Quell's {@code quell.*} properties.
 *
 * <p>A policy is named: {@code quell.policies.inventory.attempts=4}. Every setting a policy leaves out
 * is taken from {@code quell.defaults.*}, and whatever neither sets comes from the policy's
 * {@link Preset} ({@code Resilience.DEFAULT} unless said otherwise). Nothing else needs to be named
 * for the defaults to apply: there is no base configuration to refer to. Durations take Spring's
 * forms ({@code 250ms}, {@code 2s}, {@code PT1M}); names bind relaxed ({@code attempt-timeout},
 * {@code attemptTimeout}, {@code QUELL_DEFAULTS_ATTEMPTTIMEOUT}).
 *
 * <p>Values are checked when the application starts: a value out of range stops it with a message
 * naming the property, the value given, where it came from and what is allowed. A refresh with bad
 * values keeps the policies it had and logs the same message.
 *
 * <p>A mutable holder, bound by Spring; read it, do not share it between threads while it is bound.
 */
@ConfigurationProperties("quell")
public class QuellProperties {

  /** Settings every policy inherits unless it sets its own. */
  private final Policy defaults = new Policy();

  /** The policies, by name. Each is also a Resilience bean qualified by its name. */
  private Map<String, Policy> policies = new LinkedHashMap<>();

  /**
   * Named templates of policy settings (Resilience4j's configs.NAME): a policy that names one as its
   * base-config inherits its settings, setting by setting, before quell.defaults.
   */
  private Map<String, Policy> configs = new LinkedHashMap<>();

  /**
   * Retry budgets shared by name among the policies that name them (budget.shared=NAME). A name
   * policies use without declaring it here is a token bucket with the default parameters.
   */
  private Map<String, SharedBudget> budgets = new LinkedHashMap<>();

  /** Draining on shutdown. */
  private final Draining draining = new Draining();

  /** RestClient, WebClient and the servlet filter. */
  private final Http http = new Http();

  /** Methods annotated with @Resilient. */
  private final Methods methods = new Methods();

  /** The health indicator (turn it on with management.health.quell.enabled=true). */
  private final Health health = new Health();

  /** The recent events the quellevents actuator endpoint shows. */
  private final Events events = new Events();

  public Policy getDefaults() {
    return defaults;
  }

  public Map<String, Policy> getPolicies() {
    return policies;
  }

  public void setPolicies(Map<String, Policy> policies) {
    this.policies = policies;
  }

  public Map<String, Policy> getConfigs() {
    return configs;
  }

  public void setConfigs(Map<String, Policy> configs) {
    this.configs = configs;
  }

  public Map<String, SharedBudget> getBudgets() {
    return budgets;
  }

  public void setBudgets(Map<String, SharedBudget> budgets) {
    this.budgets = budgets;
  }

  public Draining getDraining() {
    return draining;
  }

  public Http getHttp() {
    return http;
  }

  public Methods getMethods() {
    return methods;
  }

  public Health getHealth() {
    return health;
  }

  public Events getEvents() {
    return events;
  }

  /** The preset a policy starts from. */
  public enum Preset {
    /** {@code Resilience.DEFAULT}: 3 attempts, 30 s deadline, 10 s attempt timeout, exponential backoff, automatic budget. */
    DEFAULT,
    /** {@code Resilience.HTTP}: DEFAULT with HTTP status classification (408 and 5xx retried, 429 and Retry-After honoured). */
    HTTP,
    /** {@code Resilience.NONE}: one attempt, no deadline, no budget. */
    NONE
  }

  /** One policy's settings; every one left unset is inherited. */
  public static class Policy {
    /**
     * A template under quell.configs whose settings this policy inherits, setting by setting, before
     * quell.defaults (Resilience4j's base-config). A template may name a base-config of its own.
     */
    private @Nullable String baseConfig;

    /** The preset this policy starts from: default, http or none. Default: default (http for the HTTP clients' policy). */
    private @Nullable Preset preset;

    /** Attempts in total, including the first (Resilience4j's maxAttempts). At least 1. Default: 3. */
    private @Nullable Integer attempts;

    /** The whole call gives up after this, however many attempts remain; 0 for none. Default: 30s. */
    private @Nullable Duration deadline;

    /** The longest one attempt may run (tightened to the time left); 0 for none. Default: 10s. */
    private @Nullable Duration attemptTimeout;

    /** Honour the deadline of the current request (X-Deadline-Ms read by the servlet filter). Default: true. */
    private @Nullable Boolean ambientDeadline;

    /** Spend from the budget at the current request's criticality (X-Criticality). Default: false. */
    private @Nullable Boolean ambientCriticality;

    /** Exceptions that are transient (retried), checked before the preset's classifier, with their subclasses. */
    private @Nullable List<Class<? extends Throwable>> transientExceptions;

    /** Exceptions that are permanent (never retried), checked before the preset's classifier, with their subclasses. */
    private @Nullable List<Class<? extends Throwable>> permanentExceptions;

    /** The wait before each retry. */
    private final Backoff backoff = new Backoff();

    /** The retry budget. */
    private final Budget budget = new Budget();

    /** The circuit breaker (off unless one of its settings is given). */
    private final Breaker breaker = new Breaker();

    /** A rate limit on attempts (off unless per-second is given). */
    private final RateLimit rateLimit = new RateLimit();

    /** A fixed concurrency limit, a bulkhead (off unless limit is given). */
    private final ConcurrencyLimit concurrencyLimit = new ConcurrencyLimit();

    /** An adaptive concurrency limit (off unless enabled or one of its settings is given). */
    private final AdaptiveLimit adaptiveLimit = new AdaptiveLimit();

    /** Client-side adaptive throttling, the SRE book's (off unless enabled or one of its settings is given). */
    private final Throttle throttle = new Throttle();

    /** Hedging (off unless delay or max-extra-load is given). */
    private final Hedge hedge = new Hedge();

    /** Attempt timeouts tightened to a multiple of the live p95 (off unless multiple is given). */
    private final MeasuredTiming measuredTiming = new MeasuredTiming();

    public @Nullable String getBaseConfig() {
      return baseConfig;
    }

    public void setBaseConfig(@Nullable String baseConfig) {
      this.baseConfig = baseConfig;
    }

    public @Nullable Preset getPreset() {
      return preset;
    }

    public void setPreset(@Nullable Preset preset) {
      this.preset = preset;
    }

    public @Nullable Integer getAttempts() {
      return attempts;
    }

    public void setAttempts(@Nullable Integer attempts) {
      this.attempts = attempts;
    }

    public @Nullable Duration getDeadline() {
      return deadline;
    }

    public void setDeadline(@Nullable Duration deadline) {
      this.deadline = deadline;
    }

    public @Nullable Duration getAttemptTimeout() {
      return attemptTimeout;
    }

    public void setAttemptTimeout(@Nullable Duration attemptTimeout) {
      this.attemptTimeout = attemptTimeout;
    }

    public @Nullable Boolean getAmbientDeadline() {
      return ambientDeadline;
    }

    public void setAmbientDeadline(@Nullable Boolean ambientDeadline) {
      this.ambientDeadline = ambientDeadline;
    }

    public @Nullable Boolean getAmbientCriticality() {
      return ambientCriticality;
    }

    public void setAmbientCriticality(@Nullable Boolean ambientCriticality) {
      this.ambientCriticality = ambientCriticality;
    }

    public @Nullable List<Class<? extends Throwable>> getTransientExceptions() {
      return transientExceptions;
    }

    public void setTransientExceptions(@Nullable List<Class<? extends Throwable>> transientExceptions) {
      this.transientExceptions = transientExceptions;
    }

    public @Nullable List<Class<? extends Throwable>> getPermanentExceptions() {
      return permanentExceptions;
    }

    public void setPermanentExceptions(@Nullable List<Class<? extends Throwable>> permanentExceptions) {
      this.permanentExceptions = permanentExceptions;
    }

    public Backoff getBackoff() {
      return backoff;
    }

    public Budget getBudget() {
      return budget;
    }

    public Breaker getBreaker() {
      return breaker;
    }

    public RateLimit getRateLimit() {
      return rateLimit;
    }

    public ConcurrencyLimit getConcurrencyLimit() {
      return concurrencyLimit;
    }

    public AdaptiveLimit getAdaptiveLimit() {
      return adaptiveLimit;
    }

    public Throttle getThrottle() {
      return throttle;
    }

    public Hedge getHedge() {
      return hedge;
    }

    public MeasuredTiming getMeasuredTiming() {
      return measuredTiming;
    }
  }

  /** The kinds of backoff. */
  public enum BackoffKind {
    /** base × factor^(retry-1), capped at max, jittered. */
    EXPONENTIAL,
    /** The same delay before every retry. */
    CONSTANT,
    /** Retry at once. */
    NONE
  }

  /** The jitter of an exponential backoff. */
  public enum Jitter {
    /** A random delay between zero and the computed one. */
    FULL,
    /** At least half of the computed delay. */
    EQUAL,
    /** The computed delay as it is. */
    NONE
  }

  /** The wait before each retry. A server's Retry-After wins, capped by max. */
  public static class Backoff {
    /** exponential, constant or none. Default: exponential (constant when only delay is given). */
    private @Nullable BackoffKind kind;

    /** Exponential: the first delay after a transient failure (and after a throttled one, unless throttled-base is given). Default: 100ms. */
    private @Nullable Duration base;

    /** Exponential: the first delay after a throttled answer without Retry-After. Default: 1s (or base, when base is given). */
    private @Nullable Duration throttledBase;

    /** Exponential: each retry's delay is this many times the last. At least 1. Default: 2. */
    private @Nullable Double factor;

    /** Exponential: the longest delay, and the cap on a server's Retry-After. Default: 30s. */
    private @Nullable Duration max;

    /** Exponential: full, equal or none. Default: full. */
    private @Nullable Jitter jitter;

    /** Constant: the delay before every retry. */
    private @Nullable Duration delay;

    public @Nullable BackoffKind getKind() {
      return kind;
    }

    public void setKind(@Nullable BackoffKind kind) {
      this.kind = kind;
    }

    public @Nullable Duration getBase() {
      return base;
    }

    public void setBase(@Nullable Duration base) {
      this.base = base;
    }

    public @Nullable Duration getThrottledBase() {
      return throttledBase;
    }

    public void setThrottledBase(@Nullable Duration throttledBase) {
      this.throttledBase = throttledBase;
    }

    public @Nullable Double getFactor() {
      return factor;
    }

    public void setFactor(@Nullable Double factor) {
      this.factor = factor;
    }

    public @Nullable Duration getMax() {
      return max;
    }

    public void setMax(@Nullable Duration max) {
      this.max = max;
    }

    public @Nullable Jitter getJitter() {
      return jitter;
    }

    public void setJitter(@Nullable Jitter jitter) {
      this.jitter = jitter;
    }

    public @Nullable Duration getDelay() {
      return delay;
    }

    public void setDelay(@Nullable Duration delay) {
      this.delay = delay;
    }
  }

  /** The kinds of retry budget. */
  public enum BudgetKind {
    /** A token bucket private to the policy, with the defaults (10% of successes, 3 a second). */
    AUTOMATIC,
    /** No budget: only attempts and the deadline bound retries. */
    NONE,
    /** The budget named by budget.shared, shared with every policy that names it. */
    SHARED,
    /** A token bucket private to the policy, with fraction and minimum-per-second. */
    TOKEN_BUCKET,
    /** gRPC's retry throttling: max-tokens and token-ratio. */
    FEEDBACK,
    /** max-tokens retries per period. */
    REPLENISHING,
    /** Envoy's: retries in flight at most percent of calls in flight, at least minimum. */
    CONCURRENT
  }

  /** Budget parameters common to a policy's own budget and a shared one. */
  public static class BudgetParameters {
    /** Token bucket: the share of a token each successful attempt deposits, in (0, 1]. Default: 0.1. */
    private @Nullable Double fraction;

    /** Token bucket: tokens added each second whatever the traffic, 0 or more. Default: 3. */
    private @Nullable Double minimumPerSecond;

    /** Feedback: the tokens it starts with and holds at most (default 100); replenishing: retries per period. */
    private @Nullable Integer maxTokens;

    /** Feedback: the share of a token each success adds, at least 0.001. Default: 0.1. */
    private @Nullable Double tokenRatio;

    /** Replenishing: the window the allowance refills in. */
    private @Nullable Duration period;

    /** Concurrent: retries in flight at most this share of calls in flight, in (0, 1]. Default: 0.2. */
    private @Nullable Double percent;

    /** Concurrent: retries always allowed in flight. Default: 3. */
    private @Nullable Integer minimum;

    public @Nullable Double getFraction() {
      return fraction;
    }

    public void setFraction(@Nullable Double fraction) {
      this.fraction = fraction;
    }

    public @Nullable Double getMinimumPerSecond() {
      return minimumPerSecond;
    }

    public void setMinimumPerSecond(@Nullable Double minimumPerSecond) {
      this.minimumPerSecond = minimumPerSecond;
    }

    public @Nullable Integer getMaxTokens() {
      return maxTokens;
    }

    public void setMaxTokens(@Nullable Integer maxTokens) {
      this.maxTokens = maxTokens;
    }

    public @Nullable Double getTokenRatio() {
      return tokenRatio;
    }

    public void setTokenRatio(@Nullable Double tokenRatio) {
      this.tokenRatio = tokenRatio;
    }

    public @Nullable Duration getPeriod() {
      return period;
    }

    public void setPeriod(@Nullable Duration period) {
      this.period = period;
    }

    public @Nullable Double getPercent() {
      return percent;
    }

    public void setPercent(@Nullable Double percent) {
      this.percent = percent;
    }

    public @Nullable Integer getMinimum() {
      return minimum;
    }

    public void setMinimum(@Nullable Integer minimum) {
      this.minimum = minimum;
    }
  }

  /** A policy's retry budget. */
  public static class Budget extends BudgetParameters {
    /**
     * automatic, none, shared, token-bucket, feedback, replenishing or concurrent. Default: automatic;
     * when unset, giving shared, fraction or minimum-per-second, max-tokens with token-ratio or period,
     * or percent or minimum chooses the kind.
     */
    private @Nullable BudgetKind kind;

    /** The name of a shared budget (quell.budgets.NAME, or a token bucket with the defaults). */
    private @Nullable String shared;

    public @Nullable BudgetKind getKind() {
      return kind;
    }

    public void setKind(@Nullable BudgetKind kind) {
      this.kind = kind;
    }

    public @Nullable String getShared() {
      return shared;
    }

    public void setShared(@Nullable String shared) {
      this.shared = shared;
    }
  }

  /** A shared budget: quell.budgets.NAME.*. */
  public static class SharedBudget extends BudgetParameters {
    /** token-bucket, feedback, replenishing or concurrent. Default: token-bucket (or as chosen by the parameters given). */
    private @Nullable BudgetKind kind;

    public @Nullable BudgetKind getKind() {
      return kind;
    }

    public void setKind(@Nullable BudgetKind kind) {
      this.kind = kind;
    }
  }

  /** The circuit breaker; it counts attempts (what the dependency saw). */
  public static class Breaker {
    /** true for a breaker with the defaults, false for none whatever else is set. Default: on when any breaker setting is given. */
    private @Nullable Boolean enabled;

    /** The share of failed attempts in the window that opens it, in (0, 1]. Default: 0.5. */
    private @Nullable Double failureRate;

    /** Attempts the window must hold before its rates are judged. Default: 20. */
    private @Nullable Integer minimumCalls;

    /** How far back it looks. Default: 30s. */
    private @Nullable Duration window;

    /** Failures in a row that open it whatever the window says; 0 for off. Default: 0. */
    private @Nullable Integer consecutiveFailures;

    /** An attempt longer than this is slow (give slow-call-rate too). Default: off. */
    private @Nullable Duration slowCallDuration;

    /** The share of slow attempts that opens it, in (0, 1]. */
    private @Nullable Double slowCallRate;

    /** Probes out at once when half-open, 1 to 1000. Default: 1. */
    private @Nullable Integer probes;

    /** Successful probes that close it. Default: 1. */
    private @Nullable Integer probeSuccesses;

    /** The first break. Default: 5s. */
    private @Nullable Duration breakDuration;

    /** The longest break (it doubles, with jitter, up to this). Default: 5m. */
    private @Nullable Duration maxBreakDuration;

    /** How long traffic takes to come back after an outage; 0 for at once. Default: 10s. */
    private @Nullable Duration ramp;

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Double getFailureRate() {
      return failureRate;
    }

    public void setFailureRate(@Nullable Double failureRate) {
      this.failureRate = failureRate;
    }

    public @Nullable Integer getMinimumCalls() {
      return minimumCalls;
    }

    public void setMinimumCalls(@Nullable Integer minimumCalls) {
      this.minimumCalls = minimumCalls;
    }

    public @Nullable Duration getWindow() {
      return window;
    }

    public void setWindow(@Nullable Duration window) {
      this.window = window;
    }

    public @Nullable Integer getConsecutiveFailures() {
      return consecutiveFailures;
    }

    public void setConsecutiveFailures(@Nullable Integer consecutiveFailures) {
      this.consecutiveFailures = consecutiveFailures;
    }

    public @Nullable Duration getSlowCallDuration() {
      return slowCallDuration;
    }

    public void setSlowCallDuration(@Nullable Duration slowCallDuration) {
      this.slowCallDuration = slowCallDuration;
    }

    public @Nullable Double getSlowCallRate() {
      return slowCallRate;
    }

    public void setSlowCallRate(@Nullable Double slowCallRate) {
      this.slowCallRate = slowCallRate;
    }

    public @Nullable Integer getProbes() {
      return probes;
    }

    public void setProbes(@Nullable Integer probes) {
      this.probes = probes;
    }

    public @Nullable Integer getProbeSuccesses() {
      return probeSuccesses;
    }

    public void setProbeSuccesses(@Nullable Integer probeSuccesses) {
      this.probeSuccesses = probeSuccesses;
    }

    public @Nullable Duration getBreakDuration() {
      return breakDuration;
    }

    public void setBreakDuration(@Nullable Duration breakDuration) {
      this.breakDuration = breakDuration;
    }

    public @Nullable Duration getMaxBreakDuration() {
      return maxBreakDuration;
    }

    public void setMaxBreakDuration(@Nullable Duration maxBreakDuration) {
      this.maxBreakDuration = maxBreakDuration;
    }

    public @Nullable Duration getRamp() {
      return ramp;
    }

    public void setRamp(@Nullable Duration ramp) {
      this.ramp = ramp;
    }
  }

  /** A token-bucket rate limit on attempts. */
  public static class RateLimit {
    /** false for none whatever else is set. Default: on when per-second is given. */
    private @Nullable Boolean enabled;

    /** Attempts a second, greater than 0 and at most 1e9. */
    private @Nullable Double perSecond;

    /** Attempts admitted at once after a quiet spell, at least 1. Default: 1. */
    private @Nullable Integer burst;

    /** How long an attempt may wait for a permit (never past the deadline); 0 never waits. Default: 0. */
    private @Nullable Duration maxWait;

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Double getPerSecond() {
      return perSecond;
    }

    public void setPerSecond(@Nullable Double perSecond) {
      this.perSecond = perSecond;
    }

    public @Nullable Integer getBurst() {
      return burst;
    }

    public void setBurst(@Nullable Integer burst) {
      this.burst = burst;
    }

    public @Nullable Duration getMaxWait() {
      return maxWait;
    }

    public void setMaxWait(@Nullable Duration maxWait) {
      this.maxWait = maxWait;
    }
  }

  /** A fixed concurrency limit (a bulkhead). */
  public static class ConcurrencyLimit {
    /** false for none whatever else is set. Default: on when limit is given. */
    private @Nullable Boolean enabled;

    /** Attempts in flight at most, at least 1. */
    private @Nullable Integer limit;

    /** How long an attempt may queue for a permit, in arrival order; 0 never queues. Default: 0. */
    private @Nullable Duration maxWait;

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Integer getLimit() {
      return limit;
    }

    public void setLimit(@Nullable Integer limit) {
      this.limit = limit;
    }

    public @Nullable Duration getMaxWait() {
      return maxWait;
    }

    public void setMaxWait(@Nullable Duration maxWait) {
      this.maxWait = maxWait;
    }
  }

  /** The modes of an adaptive limit. */
  public enum AdaptiveMode {
    /** AIMD on losses (failures, timeouts, throttling), with Netflix's defaults (20 to 200). */
    LOSS,
    /** A latency gradient against a long-run average, with Netflix's Gradient2 limits (20 to 200). */
    GRADIENT,
    /** Finds the dependency's knee (the default when no mode is given): 5 to 1000, starting at 20. */
    KNEE
  }

  /** An adaptive concurrency limit. */
  public static class AdaptiveLimit {
    /** true for one with the defaults, false for none. Default: on when any adaptive setting is given. */
    private @Nullable Boolean enabled;

    /** loss or gradient. Default: loss. */
    private @Nullable AdaptiveMode mode;

    /** The limit it starts at. Default: 20. */
    private @Nullable Integer initialLimit;

    /** The lowest it goes. Default: 20. */
    private @Nullable Integer minLimit;

    /** The highest it goes, at most 1000000. Default: 200. */
    private @Nullable Integer maxLimit;

    /** The factor a loss multiplies it by, in [0.5, 1). Default: 0.9. */
    private @Nullable Double backoffRatio;

    /** Gradient: latency within this multiple of the average counts as normal. Default: 1.5. */
    private @Nullable Double tolerance;

    /** Gradient: how much of each change is applied. Default: 0.2. */
    private @Nullable Double smoothing;

    /** Gradient: the samples in the long-run latency average. Default: 600. */
    private @Nullable Integer longWindow;

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable AdaptiveMode getMode() {
      return mode;
    }

    public void setMode(@Nullable AdaptiveMode mode) {
      this.mode = mode;
    }

    public @Nullable Integer getInitialLimit() {
      return initialLimit;
    }

    public void setInitialLimit(@Nullable Integer initialLimit) {
      this.initialLimit = initialLimit;
    }

    public @Nullable Integer getMinLimit() {
      return minLimit;
    }

    public void setMinLimit(@Nullable Integer minLimit) {
      this.minLimit = minLimit;
    }

    public @Nullable Integer getMaxLimit() {
      return maxLimit;
    }

    public void setMaxLimit(@Nullable Integer maxLimit) {
      this.maxLimit = maxLimit;
    }

    public @Nullable Double getBackoffRatio() {
      return backoffRatio;
    }

    public void setBackoffRatio(@Nullable Double backoffRatio) {
      this.backoffRatio = backoffRatio;
    }

    public @Nullable Double getTolerance() {
      return tolerance;
    }

    public void setTolerance(@Nullable Double tolerance) {
      this.tolerance = tolerance;
    }

    public @Nullable Double getSmoothing() {
      return smoothing;
    }

    public void setSmoothing(@Nullable Double smoothing) {
      this.smoothing = smoothing;
    }

    public @Nullable Integer getLongWindow() {
      return longWindow;
    }

    public void setLongWindow(@Nullable Integer longWindow) {
      this.longWindow = longWindow;
    }
  }

  /**
   * Client-side adaptive throttling (the Google SRE book's): while the dependency rejects, a share of first
   * attempts is refused locally, with probability max(0, (requests - k × accepts) / (requests + 1)) over the
   * window; sheddable work first.
   */
  public static class Throttle {
    /** true for one with the defaults, false for none. Default: on when k or window is given. */
    private @Nullable Boolean enabled;

    /**
     * It refuses once first attempts pass k × those the dependency accepted (2 × k for CRITICAL calls), in
     * [1, 10]; lower sheds harder. Default: 2.
     */
    private @Nullable Double k;

    /** How far back it counts requests and accepts, from 1s to 1h. Default: 2m. */
    private @Nullable Duration window;

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Double getK() {
      return k;
    }

    public void setK(@Nullable Double k) {
      this.k = k;
    }

    public @Nullable Duration getWindow() {
      return window;
    }

    public void setWindow(@Nullable Duration window) {
      this.window = window;
    }
  }

  /** Hedging: another attempt beside a slow one, funded by the same budget as retries. */
  public static class Hedge {
    /** false for none whatever else is set. Default: on when delay or max-extra-load is given. */
    private @Nullable Boolean enabled;

    /** A fixed delay before each hedge; 0 sends them at once. */
    private @Nullable Duration delay;

    /** The extra load accepted, in (0, 1): hedge at the live (1 - load) quantile of latency. */
    private @Nullable Double maxExtraLoad;

    /** Hedges at most, 1 to 10. Default: 1. */
    private @Nullable Integer maxHedges;

    /** max-extra-load: the shortest delay. Default: 1ms. */
    private @Nullable Duration floor;

    /** Retry after every attempt failed. Default: false. */
    private @Nullable Boolean retries;

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Duration getDelay() {
      return delay;
    }

    public void setDelay(@Nullable Duration delay) {
      this.delay = delay;
    }

    public @Nullable Double getMaxExtraLoad() {
      return maxExtraLoad;
    }

    public void setMaxExtraLoad(@Nullable Double maxExtraLoad) {
      this.maxExtraLoad = maxExtraLoad;
    }

    public @Nullable Integer getMaxHedges() {
      return maxHedges;
    }

    public void setMaxHedges(@Nullable Integer maxHedges) {
      this.maxHedges = maxHedges;
    }

    public @Nullable Duration getFloor() {
      return floor;
    }

    public void setFloor(@Nullable Duration floor) {
      this.floor = floor;
    }

    public @Nullable Boolean getRetries() {
      return retries;
    }

    public void setRetries(@Nullable Boolean retries) {
      this.retries = retries;
    }
  }

  /** Measured timing: attempt timeouts tightened to a multiple of the live p95. */
  public static class MeasuredTiming {
    /** false for none whatever else is set. Default: on when multiple is given. */
    private @Nullable Boolean enabled;

    /** The attempt timeout is at most this many times the live p95, 1 to 1000. */
    private @Nullable Double multiple;

    /** The shortest timeout it sets. Default: 1ms. */
    private @Nullable Duration floor;

    /** The window of latencies it measures, at least 1s. Default: 30s. */
    private @Nullable Duration window;

    /** Samples needed before it tightens anything. Default: 50. */
    private @Nullable Integer minSamples;

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Double getMultiple() {
      return multiple;
    }

    public void setMultiple(@Nullable Double multiple) {
      this.multiple = multiple;
    }

    public @Nullable Duration getFloor() {
      return floor;
    }

    public void setFloor(@Nullable Duration floor) {
      this.floor = floor;
    }

    public @Nullable Duration getWindow() {
      return window;
    }

    public void setWindow(@Nullable Duration window) {
      this.window = window;
    }

    public @Nullable Integer getMinSamples() {
      return minSamples;
    }

    public void setMinSamples(@Nullable Integer minSamples) {
      this.minSamples = minSamples;
    }
  }

  /** Draining on shutdown. */
  public static class Draining {
    /** Begin draining when the application shuts down. */
    private boolean enabled = true;

    /** How long calls in flight may go on once draining began; they end with DRAINING after it. */
    private Duration grace = Duration.ofSeconds(5);

    /**
     * After the grace, how long the requests still in flight get to write their answers (the calls the grace
     * ended answer 503 DRAINING) before the web server stops.
     */
    private Duration answerTime = Duration.ofSeconds(2);

    /**
     * Also drain when the context closes while the JVM goes on (the actuator's shutdown endpoint). Draining
     * is process-wide and cannot be undone, so by default only a JVM that is shutting down drains.
     */
    private boolean onContextClose = false;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getGrace() {
      return grace;
    }

    public void setGrace(Duration grace) {
      this.grace = grace;
    }

    public Duration getAnswerTime() {
      return answerTime;
    }

    public void setAnswerTime(Duration answerTime) {
      this.answerTime = answerTime;
    }

    public boolean isOnContextClose() {
      return onContextClose;
    }

    public void setOnContextClose(boolean onContextClose) {
      this.onContextClose = onContextClose;
    }
  }

  /** HTTP integrations. */
  public static class Http {
    /** RestClient and WebClient. */
    private final Client client = new Client();

    /** The servlet filter. */
    private final Server server = new Server();

    public Client getClient() {
      return client;
    }

    public Server getServer() {
      return server;
    }
  }

  /** RestClient and WebClient. */
  public static class Client {
    /** Add Quell to every RestClient.Builder and WebClient.Builder Spring Boot provides. */
    private boolean enabled = true;

    /** The policy requests run under, per host, unless the request's quell.policy attribute names another. */
    private String policy = "http";

    /** Hosts each policy keeps a budget, breaker, adaptive limit and throttle for; the least recently used is forgotten. */
    private int maxHosts = 1024;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getPolicy() {
      return policy;
    }

    public void setPolicy(String policy) {
      this.policy = policy;
    }

    public int getMaxHosts() {
      return maxHosts;
    }

    public void setMaxHosts(int maxHosts) {
      this.maxHosts = maxHosts;
    }
  }

  /** The servlet filter that reads inbound deadlines and criticality and maps refusals to 503/504. */
  public static class Server {
    /** Register the filter in servlet applications. */
    private boolean enabled = true;

    /** The longest inbound deadline (X-Deadline-Ms) honoured. */
    private Duration maxDeadline = Duration.ofMinutes(5);

    /** Accept CRITICAL_PLUS from callers (otherwise it is lowered to CRITICAL). */
    private boolean trustCriticalPlus = false;

    /** The filter's order: early, so the context covers the whole request. */
    private int order = Ordered.HIGHEST_PRECEDENCE + 100;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getMaxDeadline() {
      return maxDeadline;
    }

    public void setMaxDeadline(Duration maxDeadline) {
      this.maxDeadline = maxDeadline;
    }

    public boolean isTrustCriticalPlus() {
      return trustCriticalPlus;
    }

    public void setTrustCriticalPlus(boolean trustCriticalPlus) {
      this.trustCriticalPlus = trustCriticalPlus;
    }

    public int getOrder() {
      return order;
    }

    public void setOrder(int order) {
      this.order = order;
    }
  }

  /** Methods annotated with @Resilient. */
  public static class Methods {
    /** The advice's order: outside @Transactional (lowest precedence), so each attempt is its own transaction. */
    private int order = Ordered.LOWEST_PRECEDENCE - 1000;

    public int getOrder() {
      return order;
    }

    public void setOrder(int order) {
      this.order = order;
    }
  }

  /** The recent events kept for the quellevents actuator endpoint. */
  public static class Events {
    /**
     * Events kept per policy (and per host copy): how calls ended, retries, breaker transitions, hedges,
     * fallbacks; 0 keeps none. Read when the application starts.
     */
    private int size = 100;

    public int getSize() {
      return size;
    }

    public void setSize(int size) {
      this.size = size;
    }
  }

  /** The health indicator's thresholds. */
  public static class Health {
    /** A budget at or above this utilization is reported as near exhaustion, in (0, 1]. */
    private double budgetThreshold = 0.9;

    /** The status reported while a budget is near exhaustion or a breaker is open or isolated. */
    private String degradedStatus = "UP";

    public double getBudgetThreshold() {
      return budgetThreshold;
    }

    public void setBudgetThreshold(double budgetThreshold) {
      this.budgetThreshold = budgetThreshold;
    }

    public String getDegradedStatus() {
      return degradedStatus;
    }

    public void setDegradedStatus(String degradedStatus) {
      this.degradedStatus = degradedStatus;
    }
  }
}
