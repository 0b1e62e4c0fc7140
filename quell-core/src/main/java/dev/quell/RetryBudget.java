package dev.quell;

import dev.quell.internal.Problems;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A bound on retries as a fraction of traffic: the thing that stops a fleet of clients, each
 * retrying "a reasonable few times", from multiplying the load on a struggling dependency.
 *
 * <p>A budget is a live, thread-safe object, like a circuit breaker. Policies ({@link Resilience})
 * spend from it before every retry or hedge and credit it after every successful attempt; first
 * attempts are never charged and never refused. You can also call the primitives yourself to
 * budget your own retry loop:
 *
 * <pre>{@code
 * RetryBudget budget = RetryBudget.of();           // 10% of successes, plus 3 retries a second
 * for (int attempt = 1; ; attempt++) {
 *   try {
 *     var reply = client.call();
 *     budget.deposit();
 *     return reply;
 *   } catch (IOException e) {
 *     budget.recordFailure();
 *     if (attempt == 3 || !budget.trySpend()) throw e;
 *   }
 * }
 * }</pre>
 *
 * <p>The kinds:
 * <ul>
 *   <li>{@link #of()} / {@link #shared(String)}: a token bucket. Each successful attempt deposits
 *       {@code fraction} of a token, each retry spends one; a floor of {@code minimumPerSecond}
 *       tokens a second keeps low-traffic clients able to retry. Capacity is ten seconds of the
 *       floor (never less than one token); it starts full and refills lazily from the clock.
 *   <li>{@link #feedback()}: gRPC's retry throttling (gRFC A6): failures take a token, successes
 *       add {@code tokenRatio}, retries are allowed while more than half the tokens remain.
 *   <li>{@link #replenishing(int, Duration)}: a fixed allowance of retries per time window.
 *   <li>{@link #concurrent()}: Envoy's model: retries and hedges in flight at most a share of the
 *       calls in flight, never below a minimum.
 *   <li>{@link #NONE}: no bound beyond the policy's attempts and deadline.
 *   <li>{@link #AUTOMATIC}: the default on every policy, a token bucket private to the policy instance.
 * </ul>
 *
 * <p>For every kind, checking and charging is one atomic step, the balance never leaves
 * {@code [0, capacity]}, and no deposit is lost under any number of threads.
 */
public abstract sealed class RetryBudget
    permits TokenBucket, FeedbackThrottle, ReplenishingAllowance, ConcurrentAllowance, RetryBudget.Unbounded,
        RetryBudget.Automatic {

  /** The default share of successful traffic that funds retries: 10%. */
  public static final double DEFAULT_FRACTION = 0.1;
  /** The default floor: 3 retries a second, whatever the traffic. */
  public static final double DEFAULT_MINIMUM_PER_SECOND = 3.0;

  /** No budget: every retry the policy's other bounds allow is funded. */
  public static final RetryBudget NONE = new Unbounded();

  /**
   * The default on every policy: a token bucket with the default parameters, private to the policy
   * instance (or, in a {@link PolicyScope}, to each key). A policy with a single attempt gets no
   * budget at all. This constant is only a marker: it cannot be spent from directly.
   */
  public static final RetryBudget AUTOMATIC = new Automatic();

  private static final ConcurrentMap<String, TokenBucket> SHARED = new ConcurrentHashMap<>();
  private static final AtomicInteger ANONYMOUS = new AtomicInteger();
  private static final System.Logger LOG = System.getLogger("dev.quell.RetryBudget");

  RetryBudget() {}

  /** A private token bucket with the defaults: 10% of successes, a floor of 3 per second, capacity 30. */
  public static RetryBudget of() {
    return of(DEFAULT_FRACTION, DEFAULT_MINIMUM_PER_SECOND);
  }

  /**
   * A private token bucket on the real clock.
   *
   * @param fraction the share of a token each successful attempt deposits, in (0, 1]
   * @param minimumPerSecond tokens added each second whatever the traffic, at least 0; zero means
   *     only successes fund retries
   * @throws ResilienceConfigurationException naming each parameter that is out of range
   */
  public static RetryBudget of(double fraction, double minimumPerSecond) {
    return of(fraction, minimumPerSecond, TimeSource.system());
  }

  /** A private token bucket whose floor refills from {@code timeSource}. */
  public static RetryBudget of(double fraction, double minimumPerSecond, TimeSource timeSource) {
    requireTimeSource(timeSource);
    return new TokenBucket("budget-" + ANONYMOUS.incrementAndGet(), fraction, minimumPerSecond, timeSource);
  }

  @SuppressWarnings("ConstantConditions") // callers without nullness checking may still pass null
  private static void requireTimeSource(@Nullable TimeSource timeSource) {
    new Problems().require(timeSource != null, "budget timeSource", null, "must not be null (use TimeSource.system())")
        .throwIfAny();
  }

  /** The process-wide token bucket called {@code name}, created with the defaults on first use. */
  public static RetryBudget shared(String name) {
    return shared(name, DEFAULT_FRACTION, DEFAULT_MINIMUM_PER_SECOND);
  }

  /**
   * The process-wide token bucket called {@code name}. The first caller's parameters win; a later
   * caller asking for different ones gets the existing bucket and a warning in the log (once per
   * name). Share a budget only among calls to the same dependency: one bucket for everything lets a
   * storm against one dependency throttle retries to a healthy other one.
   */
  public static RetryBudget shared(String name, double fraction, double minimumPerSecond) {
    new Problems().require(name != null && !name.isBlank(), "shared budget name",
        name == null ? null : '"' + name + '"', "must not be blank").throwIfAny();
    TokenBucket.validate(fraction, minimumPerSecond);
    TokenBucket bucket = SHARED.computeIfAbsent(
        name, n -> new TokenBucket(n, fraction, minimumPerSecond, TimeSource.system()));
    if (!bucket.hasParameters(fraction, minimumPerSecond) && bucket.warnedAboutParameters.compareAndSet(false, true)) {
      LOG.log(Level.WARNING,
          "quell.budget.shared.conflict: shared budget \"{0}\" already exists with fraction={1}, minimumPerSecond={2};"
              + " ignoring fraction={3}, minimumPerSecond={4}",
          name, bucket.fraction(), bucket.minimumPerSecond(), fraction, minimumPerSecond);
    }
    return bucket;
  }

  /** gRPC-style retry throttling with gRPC's defaults: 100 tokens, 0.1 per success. */
  public static RetryBudget feedback() {
    return feedback(100, 0.1);
  }

  /**
   * gRPC-style retry throttling (gRFC A6). Starts with {@code maxTokens}. Each transient or
   * throttled failure takes one token, each successful attempt adds {@code tokenRatio} (to three
   * decimals), never above {@code maxTokens}. Retries and hedges are allowed only while the balance
   * is strictly above half of {@code maxTokens}. The balance is not spent by retries themselves.
   *
   * @param maxTokens greater than 0
   * @param tokenRatio finite and at least 0.001; digits past the third decimal are dropped
   */
  public static RetryBudget feedback(int maxTokens, double tokenRatio) {
    return new FeedbackThrottle("feedback-" + ANONYMOUS.incrementAndGet(), maxTokens, tokenRatio);
  }

  /** {@code maxTokens} retries per {@code period} on the real clock. */
  public static RetryBudget replenishing(int maxTokens, Duration period) {
    return replenishing(maxTokens, period, TimeSource.system());
  }

  /**
   * A fixed allowance: {@code maxTokens} retries or hedges per fixed window of {@code period},
   * windows anchored at creation on the monotonic clock. The allowance refills to full at each
   * window (unused tokens do not carry over). Each admitted retry takes a token before it starts;
   * outcomes never change the balance.
   */
  public static RetryBudget replenishing(int maxTokens, Duration period, TimeSource timeSource) {
    requireTimeSource(timeSource);
    return new ReplenishingAllowance("allowance-" + ANONYMOUS.incrementAndGet(), maxTokens, period, timeSource);
  }

  /** Envoy's defaults: retries and hedges in flight at most 20% of the calls in flight, never fewer than 3. */
  public static RetryBudget concurrent() {
    return concurrent(0.2, 3);
  }

  /**
   * A budget on what is in flight rather than on a rate (Envoy's retry budget): retries and hedges
   * in flight at most {@code percent} of the calls in flight, never fewer than {@code minimum}.
   * A retry or hedge takes room when it is funded and gives it back when it ends, however it ends;
   * calls count while they run. Nothing refills with time, and successes deposit nothing: the
   * allowance moves with the traffic in flight, so it reacts at once to a burst of calls, and a
   * slow dependency (long calls, many in flight) gets no more retries per call than a fast one.
   * As with every kind, a budget with nothing in flight funds every level, and as it fills,
   * {@link Criticality#SHEDDABLE} work stops first, then {@link Criticality#SHEDDABLE_PLUS}. {@link #retryAfter()} is zero while there is room and empty otherwise: only calls
   * ending (or more calls starting) make room. Policies call it for you; counting calls in flight
   * is done by the policy, so this kind bounds only retries made through a {@link Resilience}.
   *
   * @param percent the share of calls in flight, as a fraction in (0, 1]: 0.2 means 20%
   * @param minimum retries and hedges always allowed in flight, in [0, 1000000]; it keeps a
   *     low-traffic client able to retry
   * @throws ResilienceConfigurationException naming each parameter that is out of range
   */
  public static RetryBudget concurrent(double percent, int minimum) {
    return new ConcurrentAllowance("concurrent-" + ANONYMOUS.incrementAndGet(), percent, minimum);
  }

  /** Asks to fund one retry or hedge of a {@link Criticality#CRITICAL} call; if granted, it is charged. */
  public final boolean trySpend() {
    return trySpend(Criticality.CRITICAL);
  }

  /**
   * Asks to fund one retry or hedge at the given criticality; if granted, it is charged in the same
   * atomic step. Lower criticalities must leave {@link Criticality#reserve()} of the capacity unspent.
   */
  public abstract boolean trySpend(Criticality criticality);

  /** Records one successful attempt (first or not). Cheap and lock-free: it sits on every call's success path. */
  public abstract void deposit();

  /** Records one transient or throttled failure. Only the feedback kind uses it; the others ignore it. */
  public abstract void recordFailure();

  /**
   * How long until this budget expects to fund the next retry: zero when it would fund one now,
   * empty when only traffic can refill it (a token bucket with no floor, the feedback throttle).
   */
  public abstract Optional<Duration> retryAfter();

  /** A name for dashboards: the shared name, the policy name for an automatic budget, or a generated one. */
  public abstract String name();

  /** How much of the budget is spent, 0 (untouched) to 1 (refusing retries). 0 for {@link #NONE}. */
  public abstract double utilization();

  /** The current balance in tokens (retries it could fund now at {@link Criticality#CRITICAL}). */
  public abstract double tokens();

  /** The most tokens the budget can hold. */
  public abstract double capacity();

  /**
   * A new budget of the same kind and parameters, on the same clock, called {@code name}, with fresh
   * state (as {@link #of} and the other factories make one). Telemetry reports budgets by name; a
   * framework that builds budgets from configuration names them after their policy. {@link #NONE},
   * {@link #AUTOMATIC} and a {@link #shared} budget (whose name is its identity) are returned as they
   * are.
   *
   * @throws ResilienceConfigurationException if {@code name} is blank
   */
  @SuppressWarnings("ConstantConditions") // callers without nullness checking may still pass null
  public RetryBudget withName(String name) {
    new Problems().require(name != null && !name.isBlank(), "budget name", name == null ? null : '"' + name + '"',
        "must not be blank").throwIfAny();
    return named(name);
  }

  /** True for a bucket {@link #shared} handed out under its name. */
  static boolean isShared(TokenBucket bucket) {
    return SHARED.get(bucket.name()) == bucket;
  }

  /** See {@link #withName}: the fresh copy, or this budget when it has no state of its own to copy. */
  RetryBudget named(String name) {
    return this;
  }

  /** True for {@link #NONE}: no bound at all. */
  public boolean isUnbounded() {
    return false;
  }

  // Hooks for kinds that count what is in flight (the concurrent kind). The core calls them; the
  // other kinds ignore them. They never throw and never allocate.

  /** A call that spends from this budget started (once per call, before its first attempt). */
  void callStarted() {}

  /** That call ended (exactly once per {@link #callStarted()}). */
  void callEnded() {}

  /** A retry or hedge this budget funded with {@link #trySpend(Criticality)} ended, however it ended. */
  void additionalEnded() {}

  /**
   * Whether {@link #trySpend(Criticality)} would fund a retry now, without charging anything. The
   * core asks before it sleeps a backoff, so a caller is not made to wait only to be refused; the
   * charge itself happens at admission, in one atomic step.
   */
  boolean wouldFund(Criticality criticality) {
    return true;
  }

  /**
   * How long until a retry at {@code criticality} could be funded, in nanoseconds: 0 when it would
   * be now, -1 when only traffic can refill the budget. Accounts for the criticality's reserve.
   */
  long retryAfterNanos(Criticality criticality) {
    return retryAfter().map(Durations::toNanosSaturated).orElse(-1L);
  }

  /**
   * {@link #trySpend(Criticality)} by a policy that has just read {@code clock} ({@code now}): a budget
   * that refills from that same clock uses the reading instead of taking another (a clock read costs
   * more than the rest of a spend). Any other budget ignores it.
   */
  boolean trySpendAt(Criticality criticality, long now, TimeSource clock) {
    return trySpend(criticality);
  }

  /** {@link #wouldFund(Criticality)}, with the policy's reading of {@code clock} as {@link #trySpendAt}. */
  boolean wouldFundAt(Criticality criticality, long now, TimeSource clock) {
    return wouldFund(criticality);
  }

  /** {@link #retryAfterNanos(Criticality)}, with the policy's reading of {@code clock} as {@link #trySpendAt}. */
  long retryAfterNanosAt(Criticality criticality, long now, TimeSource clock) {
    return retryAfterNanos(criticality);
  }

  /** Creates the automatic budget a policy (or a scope key) owns. */
  static RetryBudget automatic(String name, TimeSource timeSource) {
    return new TokenBucket(name, DEFAULT_FRACTION, DEFAULT_MINIMUM_PER_SECOND, timeSource);
  }

  /** {@link RetryBudget#NONE}. */
  static final class Unbounded extends RetryBudget {
    @Override public boolean trySpend(Criticality criticality) { return true; }
    @Override public void deposit() {}
    @Override public void recordFailure() {}
    @Override public Optional<Duration> retryAfter() { return Optional.of(Duration.ZERO); }
    @Override public String name() { return "none"; }
    @Override public double utilization() { return 0; }
    @Override public double tokens() { return Double.POSITIVE_INFINITY; }
    @Override public double capacity() { return Double.POSITIVE_INFINITY; }
    @Override public boolean isUnbounded() { return true; }
    @Override public String toString() { return "RetryBudget.NONE"; }
  }

  /** {@link RetryBudget#AUTOMATIC}: a marker that each policy resolves to a bucket of its own. */
  static final class Automatic extends RetryBudget {
    private static UnsupportedOperationException marker() {
      return new UnsupportedOperationException(
          "RetryBudget.AUTOMATIC is a marker that each policy replaces with a budget of its own;"
              + " spend from Resilience.budget() or from a budget made with RetryBudget.of()");
    }

    @Override public boolean trySpend(Criticality criticality) { throw marker(); }
    @Override public void deposit() { throw marker(); }
    @Override public void recordFailure() { throw marker(); }
    @Override public Optional<Duration> retryAfter() { return Optional.empty(); }
    @Override public String name() { return "automatic"; }
    @Override public double utilization() { return 0; }
    @Override public double tokens() { return 0; }
    @Override public double capacity() { return 0; }
    @Override public String toString() { return "RetryBudget.AUTOMATIC"; }
  }
}
