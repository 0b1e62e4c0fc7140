package dev.quell;

import dev.quell.internal.CallObserver;
import dev.quell.internal.Problems;
import dev.quell.internal.jfr.QuellJfr;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A resilience policy: how many attempts a call may make, within what deadline, how long each may
 * run, how long to wait between them, what counts as failure, and the {@link RetryBudget} that bounds
 * retries across all calls.
 *
 * <p>Policies are immutable values. Every {@code with…} method returns a new policy, validated at
 * once; {@link #with(Consumer)} changes several settings and reports every problem together.
 * {@link #equals} and {@link #hashCode} cover configuration only. Each policy instance owns its
 * automatic budget (unless you give it another), so build a policy once per dependency and keep it in
 * a field: a policy rebuilt for every call never sees enough traffic for its budget to bound anything.
 *
 * <pre>{@code
 * static final Resilience INVENTORY = Resilience.DEFAULT
 *     .withName("inventory")
 *     .withAttempts(4)
 *     .withDeadline(Duration.ofSeconds(2));
 *
 * Stock stock = INVENTORY.execute(() -> inventory.lookup(sku));
 * }</pre>
 *
 * <p>Three ways to run a call, all driving the same decision core:
 * <ul>
 *   <li>{@link #execute(Callable)}: returns the value or throws. Exceptions from your work are rethrown
 *       unchanged; Quell's own refusals throw {@link CallRejectedException} or
 *       {@link DeadlineExceededException}.
 *   <li>{@link #run(Callable)}: never throws; returns an {@link Outcome} with the stop reason.
 *   <li>{@link #executeAsync(Supplier)}: for work that returns a {@link CompletionStage}.
 * </ul>
 *
 * <p><b>Attempt timeouts in synchronous calls</b> end a blocked attempt by interrupting the calling
 * thread. Work that honours interrupts (sleeps, {@code java.net.http}, NIO channels, most JDBC
 * drivers' statement timeouts aside) stops at once; blocking {@code java.io} socket reads ignore
 * interrupts and run until their own socket timeout, so give such clients a read timeout too. The
 * interrupt is cleared before Quell returns or retries, so it never leaks into your later code.
 */
public final class Resilience {

  /** Pass-through: one attempt, no deadline, no attempt timeout, no budget. */
  public static final Resilience NONE = new Resilience(settingsOfNone());

  /**
   * 3 attempts in total, 30 s deadline, 10 s attempt timeout, exponential backoff with full jitter
   * (100 ms base, 1 s when throttled, doubling, at most 30 s), {@link Classifier#DEFAULT}, and an
   * automatic retry budget.
   */
  public static final Resilience DEFAULT = new Resilience(new Settings());

  /** {@link #DEFAULT} with {@link Classifier#HTTP}: 408 and 5xx are retried, 429 and Retry-After honoured. */
  public static final Resilience HTTP = new Resilience(new Settings().name("http").classifier(Classifier.HTTP));

  private final String name;
  private final int attempts;
  private final @Nullable Duration deadline;
  private final @Nullable Duration attemptTimeout;
  private final Backoff backoff;
  private final Classifier classifier;
  private final RetryBudget budget;
  private final List<ResilienceListener> listeners;
  private final TimeSource timeSource;
  private final boolean useAmbientDeadline;
  private final boolean useAmbientCriticality;
  private final @Nullable Consumer<Object> discard;
  private final @Nullable MeasuredTiming measuredTiming;
  /** The breaker as configured: a {@link CircuitBreaker.Config} (owned), a live {@link CircuitBreaker} (shared), or null. */
  private final @Nullable Object breakerSetting;
  /** The live breaker every call of this instance asks, or null. */
  private final @Nullable CircuitBreaker liveBreaker;
  /** The limiters, in the order given (the gates put rate limiters before concurrency limits). */
  private final List<Limiter> limiters;

  // derived, not configuration
  final long deadlineNanos;
  final long attemptTimeoutNanos;
  /** The first attempt's timeout: min(attempt timeout, deadline); Long.MAX_VALUE for none. */
  final long firstAttemptTimeoutNanos;
  /**
   * What the work of a first attempt started at the call's start is told, when no context sets its
   * criticality and the attempt ceiling is fixed (the asynchronous in-place lane): the same for
   * every call, and immutable, so one instance serves them all.
   */
  final Attempt firstAttempt;
  private final RetryBudget liveBudget;
  /** Listeners that take event objects. */
  final List<ResilienceListener> eventListeners;
  /** Listeners that observe through the allocation-free internal SPI. */
  final CallObserver[] observers;
  /** Nothing watches, the clock is real and no gate asks about first attempts: the plainest first-attempt fast path applies. */
  final boolean unobservedOnRealClock;
  /**
   * The clock is real and no plain listener watches, but gates, measured timing or allocation-free
   * observers ({@link #observers}) need the clock: the timed fast path applies (it tells observers of
   * a first attempt that succeeded through {@link Call#observe}, the one mapping every call uses).
   */
  final boolean timedFastPath;
  /** Whether the timed fast path must read the clock when an attempt ends (latency measured, or a gate needs it). */
  final boolean fastEndTime;
  /**
   * Whether the timed fast path may admit and release a successful first attempt at the watchdog's
   * last clock sighting instead of a reading: every gate says a coarse time decides alike
   * ({@link Gate#coarseTime}), and nothing measures the attempt.
   */
  final boolean fastCoarseTime;
  /** As the plainest fast path, with a hedge the watchdog times (fixed, or by maxExtraLoad): the hedged fast path applies. */
  final boolean hedgedFastPath;
  /** The gates every attempt passes, in order (breaker, limiters, budget); the core adds draining and the deadline. */
  final Gate[] gates;
  /** Where the budget's gate sits in {@link #gates}, or -1 without a budget. */
  final int budgetGateIndex;
  /** No gate asks about a first attempt: the fast path may skip them. */
  final boolean firstAttemptUngated;
  /** How many gates may keep a mark in an attempt's record (0 when only the budget guards it). */
  final int markSlots;
  /** The backoff's cap, read once (a custom backoff's {@code max()} that fails counts as the default). */
  final Duration backoffMax;
  final long backoffMaxNanos;
  /** Hedging, or null. */
  final @Nullable Hedge hedge;
  /** This instance's latencies, when measured timing or a measured hedge delay needs them; else null. */
  final @Nullable LatencyHistogram latencies;
  /**
   * The allowance that makes {@link Hedge#maxExtraLoad} a maximum, as Finagle's backup requests have
   * one beside their quantile: every call that may hedge deposits the load's share of a token, every
   * hedge spends one, and the bucket holds {@link Hedge#ALLOWANCE_BURST}. So over any run, hedges are
   * at most {@code load × calls + 10}, however the latency's tail moves the quantile. Null for a
   * fixed delay.
   */
  final @Nullable TokenBucket hedgeAllowance;
  private final int minSamples;
  private final AtomicBoolean warned = new AtomicBoolean();
  /** This instance for work that must not be repeated; made on first use. */
  private volatile @Nullable Resilience once;
  /** This instance with Flight Recorder's observer, for calls while a recording wants Quell's events; made on first use. */
  private volatile @Nullable Resilience recorded;

  private Resilience(Settings s) {
    s.validate();
    this.name = s.name;
    this.attempts = s.attempts;
    this.deadline = s.deadline;
    this.attemptTimeout = s.attemptTimeout;
    this.backoff = s.backoff;
    this.classifier = s.classifier;
    this.budget = s.budget;
    this.listeners = List.copyOf(s.listeners);
    this.timeSource = s.timeSource;
    this.useAmbientDeadline = s.useAmbientDeadline;
    this.useAmbientCriticality = s.useAmbientCriticality;
    this.hedge = s.hedge;
    this.discard = s.discard;
    this.measuredTiming = s.measuredTiming;
    this.limiters = List.copyOf(s.limiters);
    this.breakerSetting = s.breaker;
    this.liveBreaker = s.breaker instanceof CircuitBreaker ? (CircuitBreaker) s.breaker
        : s.breaker instanceof CircuitBreaker.Config ? CircuitBreaker.of(name, (CircuitBreaker.Config) s.breaker, timeSource)
        : null;
    this.deadlineNanos = limitNanos(deadline);
    this.attemptTimeoutNanos = limitNanos(attemptTimeout);
    this.firstAttemptTimeoutNanos = Math.min(deadlineNanos, attemptTimeoutNanos);
    this.firstAttempt = firstAttempt(deadlineNanos, attemptTimeoutNanos);
    this.liveBudget = resolveBudget(budget, attempts, name, timeSource);
    List<ResilienceListener> plain = new ArrayList<>();
    List<CallObserver> fast = new ArrayList<>();
    for (ResilienceListener l : listeners) {
      if (l instanceof CallObserver) {
        fast.add((CallObserver) l);
      } else {
        plain.add(l);
      }
    }
    this.eventListeners = List.copyOf(plain);
    this.observers = fast.toArray(new CallObserver[0]);
    List<Gate> g = new ArrayList<>();
    if (liveBreaker != null) {
      g.add(liveBreaker.gate()); // the order of SPEC §5: breaker, rate, concurrency, budget last
    }
    for (Limiter l : limiters) {
      if (l instanceof RateLimiter) {
        g.add(l.gate());
      }
    }
    for (Limiter l : limiters) {
      if (!(l instanceof RateLimiter) && !(l instanceof AdaptiveThrottle)) {
        g.add(l.gate());
      }
    }
    for (Limiter l : limiters) {
      if (l instanceof AdaptiveThrottle) {
        g.add(l.gate()); // then the adaptive throttle, before the budget
      }
    }
    int budgetIndex = -1;
    if (!liveBudget.isUnbounded()) {
      budgetIndex = g.size();
      g.add(new BudgetGate(liveBudget, timeSource));
    }
    this.gates = g.toArray(new Gate[0]);
    this.budgetGateIndex = budgetIndex;
    this.firstAttemptUngated = gates.length == (budgetIndex >= 0 ? 1 : 0);
    this.markSlots = firstAttemptUngated ? 0 : gates.length; // the budget's gate keeps no mark
    boolean fastEligible = plain.isEmpty() && fast.isEmpty() && timeSource == SystemTime.INSTANCE && hedge == null
        && !(liveBudget instanceof ConcurrentAllowance); // (that kind counts every call in flight)
    this.unobservedOnRealClock = fastEligible && firstAttemptUngated && measuredTiming == null;
    boolean observedOnly = plain.isEmpty() && !fast.isEmpty() && timeSource == SystemTime.INSTANCE && hedge == null
        && !(liveBudget instanceof ConcurrentAllowance);
    this.timedFastPath = (fastEligible && !unobservedOnRealClock || observedOnly) && noWaits(gates);
    this.hedgedFastPath = plain.isEmpty() && fast.isEmpty() && timeSource == SystemTime.INSTANCE
        && !(liveBudget instanceof ConcurrentAllowance) && firstAttemptUngated && measuredTiming == null
        && hedge != null;
    this.backoffMax = safeMax(backoff);
    this.backoffMaxNanos = Durations.toNanosSaturated(backoffMax);
    boolean measuredHedge = hedge != null && hedge.fixedDelayNanos() < 0;
    this.latencies = measuredTiming != null || measuredHedge
        ? new LatencyHistogram(timeSource, measuredTiming != null ? measuredTiming.windowNanos()
            : MeasuredTiming.DEFAULT_WINDOW.toNanos())
        : null;
    this.minSamples = measuredTiming != null ? measuredTiming.minSamples() : MeasuredTiming.DEFAULT_MIN_SAMPLES;
    this.hedgeAllowance = measuredHedge
        ? new TokenBucket("hedge allowance of " + name, Objects.requireNonNull(hedge).maxExtraLoad().orElseThrow(), 0,
            Hedge.ALLOWANCE_BURST, timeSource)
        : null;
    if (measuredHedge && latencies != null) {
      latencies.cacheQuantile(Objects.requireNonNull(hedge).quantile());
    }
    this.fastEndTime = latencies != null || needsEndTime(gates);
    this.fastCoarseTime = !fastEndTime && measuredTiming == null && coarseTime(gates, budgetIndex);
  }

  /** The {@link #firstAttempt}: number 1, the whole deadline left, a timeout from the fixed ceiling. */
  private static Attempt firstAttempt(long deadlineNanos, long attemptTimeoutNanos) {
    long left = Decide.remaining(deadlineNanos, 0, 0);
    return new Attempt(1, Decide.attemptTimeout(attemptTimeoutNanos, left), left, false, Criticality.CRITICAL);
  }

  /**
   * The timeout of an attempt starting at {@code now}: the configured one, tightened to the measured
   * ceiling once the window holds enough samples. Long.MAX_VALUE for none.
   */
  long attemptCeilingNanos(long now) {
    LatencyHistogram h = latencies;
    if (measuredTiming == null || h == null) {
      return attemptTimeoutNanos;
    }
    return ceilingFor(h.samples(now), h.p95(now));
  }

  /** The attempt ceiling for a window of {@code samples} whose p95 is {@code p95}. */
  private long ceilingFor(long samples, long p95) {
    MeasuredTiming m = measuredTiming;
    if (m == null || samples < minSamples) {
      return attemptTimeoutNanos;
    }
    double measured = m.multiple() * p95;
    long ceiling = measured >= Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(m.floorNanos(), (long) measured);
    return Math.min(attemptTimeoutNanos, ceiling); // tighten only
  }

  /** Records a successful attempt's latency, when this policy measures. */
  void recordLatency(long nanos, long now) {
    LatencyHistogram h = latencies;
    if (h != null) {
      h.record(nanos, now);
    }
  }

  /** True when no gate can make an attempt wait for a permit (those are left to the core). */
  private static boolean needsEndTime(Gate[] gates) {
    for (Gate g : gates) {
      if (g.needsEndTime()) {
        return true;
      }
    }
    return false;
  }

  /** True when every gate but the budget's (which first attempts skip) decides alike on a coarse time. */
  private static boolean coarseTime(Gate[] gates, int budgetIndex) {
    for (int i = 0; i < gates.length; i++) {
      if (i != budgetIndex && !gates[i].coarseTime()) {
        return false;
      }
    }
    return true;
  }

  private static boolean noWaits(Gate[] gates) {
    for (Gate g : gates) {
      if (g.maxWaitNanos() > 0) {
        return false;
      }
    }
    return true;
  }

  private static Duration safeMax(Backoff backoff) {
    try {
      Duration max = backoff.max();
      return max == null || max.isNegative() ? Backoff.Exponential.DEFAULT_MAX : max;
    } catch (RuntimeException e) {
      return Backoff.Exponential.DEFAULT_MAX;
    }
  }

  /** How long a call starting at {@code now} waits for an answer before it sends the next hedge. */
  long hedgeDelayNanos(long now) {
    Hedge h = hedge;
    if (h == null) {
      return Long.MAX_VALUE;
    }
    long fixed = h.fixedDelayNanos();
    if (fixed >= 0) {
      return fixed;
    }
    LatencyHistogram l = latencies;
    return l == null ? hedgeDelayFor(h, 0, 0) : hedgeDelayFor(h, l.samples(now), l.quantile(h.quantile(), now));
  }

  /** The measured hedge delay for a window of {@code samples} whose hedge quantile is {@code quantile}. */
  private long hedgeDelayFor(Hedge h, long samples, long quantile) {
    if (samples >= minSamples) {
      return Math.max(h.floorNanos(), quantile); // the live quantile, Finagle's model
    }
    // until this policy has seen enough attempts to know its latency: the attempt timeout, or 1 s
    return Math.max(h.floorNanos(), attemptTimeoutNanos == Long.MAX_VALUE ? 1_000_000_000L : attemptTimeoutNanos);
  }

  /**
   * Hands {@code value} to this policy's discard hook (by default, an {@link AutoCloseable} is
   * closed), as the core does with a value nobody will see. For integrations that receive a call's
   * value and then cannot deliver it, because their own caller went away in the same instant (a
   * coroutine cancelled as the value arrived). Never throws; null is ignored.
   */
  public void discard(@Nullable Object value) {
    discardUnseen(value);
  }

  /**
   * Hands a value nobody will see — superseded by a retry, a losing hedge's, one that arrived after
   * the call ended — to the discard hook; by default an {@link AutoCloseable} is closed. Never throws.
   */
  void discardUnseen(@Nullable Object value) {
    if (value == null) {
      return;
    }
    try {
      Consumer<Object> d = discard;
      if (d != null) {
        d.accept(value);
      } else if (value instanceof AutoCloseable) {
        ((AutoCloseable) value).close();
      }
    } catch (Exception | LinkageError | AssertionError e) {
      warnOnce("discarding an unseen value failed: " + e);
    }
  }

  /** Logs a problem with this policy's own configuration (a backoff that throws), once per policy instance. */
  void warnOnce(String problem) {
    if (warned.compareAndSet(false, true)) {
      System.getLogger("dev.quell.Resilience").log(System.Logger.Level.WARNING,
          "quell.policy.misbehaving: policy ''{0}'': {1}", name, problem);
    }
  }

  /** This policy, for work that must not be repeated: see {@link #once()}. */
  private Resilience(Resilience base) {
    this.name = base.name;
    this.attempts = 1;
    this.deadline = base.deadline;
    this.attemptTimeout = base.attemptTimeout;
    this.backoff = base.backoff;
    this.classifier = base.classifier;
    this.budget = base.budget;
    this.listeners = base.listeners;
    this.timeSource = base.timeSource;
    this.useAmbientDeadline = base.useAmbientDeadline;
    this.useAmbientCriticality = false; // criticality only chooses which retries a budget funds
    this.discard = base.discard;
    this.measuredTiming = base.measuredTiming;
    this.breakerSetting = base.breakerSetting;
    this.liveBreaker = base.liveBreaker;
    this.limiters = base.limiters;
    this.deadlineNanos = base.deadlineNanos;
    this.attemptTimeoutNanos = base.attemptTimeoutNanos;
    this.firstAttemptTimeoutNanos = base.firstAttemptTimeoutNanos;
    this.firstAttempt = base.firstAttempt;
    this.liveBudget = base.liveBudget; // a first attempt is never charged; its success still deposits
    this.eventListeners = base.eventListeners;
    this.observers = base.observers;
    this.gates = base.gates;
    this.budgetGateIndex = base.budgetGateIndex;
    this.firstAttemptUngated = base.firstAttemptUngated;
    this.markSlots = base.markSlots;
    this.backoffMax = base.backoffMax;
    this.backoffMaxNanos = base.backoffMaxNanos;
    this.hedge = null;
    this.latencies = base.latencies;
    this.hedgeAllowance = null; // (it never hedges)
    this.minSamples = base.minSamples;
    this.fastEndTime = base.fastEndTime;
    this.fastCoarseTime = base.fastCoarseTime;
    boolean fastEligible = eventListeners.isEmpty() && observers.length == 0 && timeSource == SystemTime.INSTANCE
        && !(liveBudget instanceof ConcurrentAllowance);
    // (a measured hedge's histogram stays: the timed fast path feeds it, the plainest would not)
    this.unobservedOnRealClock = fastEligible && firstAttemptUngated && latencies == null;
    boolean observedOnly = eventListeners.isEmpty() && observers.length > 0 && timeSource == SystemTime.INSTANCE
        && !(liveBudget instanceof ConcurrentAllowance);
    this.timedFastPath = (fastEligible && !unobservedOnRealClock || observedOnly) && noWaits(gates);
    this.hedgedFastPath = false; // (it never hedges)
    this.once = this;
  }

  /**
   * This policy instance for work that must not be repeated — a POST without an idempotency key, a
   * payment: one attempt, never hedged, asking the same breaker and limiters, depositing into the
   * same budget and measured by the same histogram as every other call of this instance. Unlike a
   * {@code withAttempts(1)} copy, which owns a fresh breaker and budget, it shares this instance's
   * live state, so a dependency's health is judged from all its calls.
   */
  public Resilience once() {
    Resilience o = once;
    if (o == null) {
      o = once = attempts == 1 && hedge == null ? this : new Resilience(this);
    }
    return o;
  }

  /** A limit in nanoseconds; Long.MAX_VALUE for none, and for durations so long they mean none. */
  private static long limitNanos(@Nullable Duration d) {
    if (d == null) {
      return Long.MAX_VALUE;
    }
    long nanos = Durations.toNanosSaturated(d);
    return nanos >= ResilienceContext.NO_LIMIT_NANOS ? Long.MAX_VALUE : nanos;
  }

  private static RetryBudget resolveBudget(RetryBudget configured, int attempts, String name, TimeSource time) {
    if (attempts <= 1) {
      return RetryBudget.NONE; // nothing to retry, nothing to bound
    }
    return configured == RetryBudget.AUTOMATIC ? RetryBudget.automatic(name, time) : configured;
  }

  private static Settings settingsOfNone() {
    Settings s = new Settings();
    s.name = "none";
    s.attempts = 1;
    s.deadline = null;
    s.attemptTimeout = null;
    s.backoff = Backoff.NONE;
    s.budget = RetryBudget.NONE;
    return s;
  }

  // ---------------------------------------------------------------- settings

  /**
   * A copy with several settings changed at once, validated together: every problem is reported in
   * one {@link ResilienceConfigurationException}. The {@link Settings} object is only valid inside
   * {@code change}.
   *
   * <pre>{@code
   * Resilience p = Resilience.DEFAULT.with(s -> s
   *     .name("payments")
   *     .attempts(2)
   *     .deadline(Duration.ofSeconds(1))
   *     .attemptTimeout(Duration.ofMillis(300)));
   * }</pre>
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience with(Consumer<Settings> change) {
    Settings s = new Settings(this);
    change.accept(s);
    s.closed = true;
    return new Resilience(s);
  }

  /** A copy with another name (used in events, metrics and the automatic budget's name). */
  @dev.quell.internal.CheckReturnValue
  public Resilience withName(String name) {
    return with(s -> s.name(name));
  }

  /** A copy that makes at most {@code attempts} attempts in total, the first included (at least 1). */
  @dev.quell.internal.CheckReturnValue
  public Resilience withAttempts(int attempts) {
    return with(s -> s.attempts(attempts));
  }

  /** A copy whose calls give up {@code deadline} after they start, however many attempts remain. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withDeadline(Duration deadline) {
    return with(s -> s.deadline(deadline));
  }

  /** A copy with no deadline of its own. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withoutDeadline() {
    return with(Settings::noDeadline);
  }

  /** A copy in which each attempt may run at most {@code timeout} (and never past the deadline). */
  @dev.quell.internal.CheckReturnValue
  public Resilience withAttemptTimeout(Duration timeout) {
    return with(s -> s.attemptTimeout(timeout));
  }

  /** A copy with no attempt timeout (attempts are still bounded by the deadline). */
  @dev.quell.internal.CheckReturnValue
  public Resilience withoutAttemptTimeout() {
    return with(Settings::noAttemptTimeout);
  }

  /** A copy with another backoff. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withBackoff(Backoff backoff) {
    return with(s -> s.backoff(backoff));
  }

  /** A copy with another classifier. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withClassifier(Classifier classifier) {
    return with(s -> s.classifier(classifier));
  }

  /**
   * A copy that spends from {@code budget}: {@link RetryBudget#AUTOMATIC} (a fresh private bucket),
   * {@link RetryBudget#NONE} or {@code null} (no budget), or a budget you made or share.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withBudget(@Nullable RetryBudget budget) {
    return with(s -> s.budget(budget));
  }

  /** A copy that also sends its events to {@code listener}. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withListener(ResilienceListener listener) {
    return with(s -> s.listener(listener));
  }

  /**
   * A copy that does (or does not) honour the ambient deadline of {@link ResilienceContext}: when on
   * (the default), a call's deadline is the earlier of the policy's and the ambient one.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withAmbientDeadline(boolean use) {
    return with(s -> s.useAmbientDeadline(use));
  }

  /**
   * A copy that does (or does not) spend from its budget at the ambient {@link Criticality} of
   * {@link ResilienceContext} (off by default). When on, a {@link Criticality#SHEDDABLE} call's
   * retry is refused once the budget is more than half spent, and {@link Criticality#SHEDDABLE_PLUS}
   * once it is more than three quarters spent; the refusal is the ordinary budget refusal. It needs
   * a bounded budget and more than one attempt, or it could have no effect, and validation says so.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withAmbientCriticality(boolean use) {
    return with(s -> s.useAmbientCriticality(use));
  }

  /**
   * A copy that hedges: after a delay without an answer it sends another attempt beside the first,
   * funded by the same budget as retries. See {@link Hedge}.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withHedge(Hedge hedge) {
    return with(s -> s.hedge(hedge));
  }

  /** A copy that does not hedge. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withoutHedge() {
    return with(Settings::noHedge);
  }

  /**
   * A copy that hands every value nobody will see — a result superseded by a retry, a losing
   * hedge's, one that arrived after the call was cancelled — to {@code discard}, instead of the
   * default, which closes {@link AutoCloseable}s (response bodies, streams) and ignores the rest.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withDiscard(Consumer<Object> discard) {
    return with(s -> s.discard(discard));
  }

  /**
   * A copy whose attempt timeout follows the dependency's measured latency: a multiple of the live
   * p95 of successful attempts, never looser than the configured attempt timeout. See
   * {@link MeasuredTiming}.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withMeasuredTiming(MeasuredTiming timing) {
    return with(s -> s.measuredTiming(timing));
  }

  /** A copy whose attempt timeout is the configured one only. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withoutMeasuredTiming() {
    return with(Settings::noMeasuredTiming);
  }

  /**
   * A copy with a circuit breaker of its own, built from {@code config} on this policy's clock and
   * named after the policy. Like the automatic budget, it belongs to the policy instance: each
   * {@code with…} copy, and each key of a {@link PolicyScope}, gets a fresh one. See
   * {@link CircuitBreaker}.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withBreaker(CircuitBreaker.Config config) {
    return with(s -> s.breaker(config));
  }

  /**
   * A copy that asks {@code breaker}, a live breaker you built and may share with other policies (and
   * every key of a scope). It must run on this policy's clock.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withBreaker(CircuitBreaker breaker) {
    return with(s -> s.breaker(breaker));
  }

  /** A copy without a circuit breaker. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withoutBreaker() {
    return with(Settings::noBreaker);
  }

  /**
   * A copy that also asks {@code limiter} before every attempt: a rate limiter, a bulkhead or an
   * adaptive concurrency limit (see {@link Limiter}). Limiters are live objects, shared by every
   * policy (and every {@link PolicyScope} key) you give them to — except an adaptive limit in a
   * scope, which each key learns for itself. Rate limiters are asked before concurrency limits,
   * whatever the order given; a refusal ends the call with {@link StopReason#LIMITED} after the
   * guarded pause, and is never charged to the budget.
   */
  @dev.quell.internal.CheckReturnValue
  public Resilience withLimiter(Limiter limiter) {
    return with(s -> s.limiter(limiter));
  }

  /** A copy without limiters. */
  @dev.quell.internal.CheckReturnValue
  public Resilience withoutLimiters() {
    return with(Settings::clearLimiters);
  }

  /** A copy that reads time, waits and draws jitter through {@code timeSource} (tests, simulation). */
  @dev.quell.internal.CheckReturnValue
  public Resilience withTimeSource(TimeSource timeSource) {
    return with(s -> s.timeSource(timeSource));
  }

  // ---------------------------------------------------------------- accessors

  /** The policy's name. */
  public String name() { return name; }

  /** Attempts in total, the first included. */
  public int attempts() { return attempts; }

  /** The deadline of each call, if any. */
  public Optional<Duration> deadline() { return Optional.ofNullable(deadline); }

  /** The attempt timeout, if any. */
  public Optional<Duration> attemptTimeout() { return Optional.ofNullable(attemptTimeout); }

  /** The backoff between attempts. */
  public Backoff backoff() { return backoff; }

  /** The classifier. */
  public Classifier classifier() { return classifier; }

  /**
   * The budget as configured: the {@link RetryBudget#AUTOMATIC} or {@link RetryBudget#NONE} marker, or
   * the budget you gave. A marker is not the live bucket (it reads 0); watch {@link #budget()}.
   */
  public RetryBudget configuredBudget() { return budget; }

  /**
   * The live budget this policy instance spends from: its own bucket when configured
   * {@link RetryBudget#AUTOMATIC}, {@link RetryBudget#NONE} when it makes only one attempt. Watch its
   * {@link RetryBudget#utilization()}.
   */
  public RetryBudget budget() { return liveBudget; }

  /** The listeners, in registration order. */
  public List<ResilienceListener> listeners() { return listeners; }

  /** The time source. */
  public TimeSource timeSource() { return timeSource; }

  /** Whether calls honour the ambient deadline (default true). */
  public boolean useAmbientDeadline() { return useAmbientDeadline; }

  /** Whether calls spend at the ambient criticality (default false). */
  public boolean useAmbientCriticality() { return useAmbientCriticality; }

  /** The live circuit breaker this policy instance asks before every attempt, if any. */
  public Optional<CircuitBreaker> breaker() { return Optional.ofNullable(liveBreaker); }

  /** The limiters this policy asks, in the order given. */
  public List<Limiter> limiters() { return limiters; }

  /** The breaker's configuration: this instance's own, or the shared breaker's. */
  public Optional<CircuitBreaker.Config> breakerConfig() {
    return liveBreaker == null ? Optional.empty() : Optional.of(liveBreaker.config());
  }

  /** True when the breaker was given as configuration (each instance and scope key owns one). */
  boolean ownsBreaker() {
    return breakerSetting instanceof CircuitBreaker.Config;
  }

  /** The hedging, if any. */
  public Optional<Hedge> hedge() { return Optional.ofNullable(hedge); }

  /** The measured timing, if configured. */
  public Optional<MeasuredTiming> measuredTiming() { return Optional.ofNullable(measuredTiming); }

  /**
   * This policy instance's live latency figures — p95, the attempt ceiling and hedge delay in
   * force — when it measures latency (measured timing, or a hedge by {@link Hedge#maxExtraLoad});
   * empty otherwise. Each call reads them afresh.
   */
  public Optional<MeasuredTiming.Stats> timing() {
    LatencyHistogram h = latencies;
    if (h == null) {
      return Optional.empty();
    }
    // computed afresh, not from the cache the calls read
    long[] samples = new long[1];
    long p95 = h.quantileNow(0.95, samples);
    Hedge hg = hedge;
    long hedgeDelay = Long.MAX_VALUE;
    if (hg != null) {
      long fixed = hg.fixedDelayNanos();
      hedgeDelay = fixed >= 0 ? fixed : hedgeDelayFor(hg, samples[0], h.quantileNow(hg.quantile(), null));
    }
    return Optional.of(new MeasuredTiming.Stats(samples[0], p95,
        measuredTiming == null ? attemptTimeoutNanos : ceilingFor(samples[0], p95), hedgeDelay,
        samples[0] >= minSamples));
  }

  // ---------------------------------------------------------------- execution

  /**
   * Runs {@code work} under this policy and returns its value, or throws.
   *
   * <p>Throws the last attempt's exception, unchanged, when the call stops because the failure was
   * permanent or the attempts ran out; {@link CallRejectedException} when the budget refused a
   * retry (after the guarded pause); {@link DeadlineExceededException} when the deadline passed; and
   * {@link InterruptedException}, with the thread's interrupt flag kept set, when the thread was
   * interrupted. When the last attempt returned a value the classifier did not accept (an HTTP 503,
   * say) and retrying is over, that value is returned.
   */
  public <T> @Nullable T execute(Callable<T> work) throws Exception {
    return SyncExecution.execute(now(), work, null);
  }

  /** As {@link #execute(Callable)}, for work that wants to know its {@link Attempt}. */
  public <T> @Nullable T execute(Work<T> work) throws Exception {
    return SyncExecution.execute(now(), null, work);
  }

  /** Runs {@code work} under this policy and reports how it ended. Never throws for the work's failures. */
  public <T> Outcome<T> run(Callable<T> work) {
    return SyncExecution.run(now(), work, null);
  }

  /** As {@link #run(Callable)}, for work that wants to know its {@link Attempt}. */
  public <T> Outcome<T> run(Work<T> work) {
    return SyncExecution.run(now(), null, work);
  }

  /**
   * Runs asynchronous work under this policy. {@code work} is called once per attempt and must
   * return promptly with a stage that completes later. Retries are started from the time source's
   * scheduler thread after their backoff. An attempt that outlives its timeout is abandoned: its
   * future is cancelled and the call moves on. Cancelling the returned future cancels the call,
   * including the attempt in flight.
   */
  public <T> CompletableFuture<T> executeAsync(Supplier<? extends CompletionStage<T>> work) {
    Objects.requireNonNull(work, "work");
    return AsyncExecution.<T>execute(now(), attempt -> work.get());
  }

  /** As {@link #executeAsync(Supplier)}, for work that wants to know its {@link Attempt}. */
  public <T> CompletableFuture<T> executeAsync(AsyncWork<T> work) {
    Objects.requireNonNull(work, "work");
    return AsyncExecution.execute(now(), work);
  }

  /** As {@link #executeAsync(AsyncWork)}, completing with an {@link Outcome} instead of failing. */
  public <T> CompletableFuture<Outcome<T>> runAsync(AsyncWork<T> work) {
    Objects.requireNonNull(work, "work");
    return AsyncExecution.run(now(), work);
  }

  /**
   * The instance a call starting now runs on: this one, or while a Flight Recorder recording wants
   * Quell's events its twin with the recorder's observer (docs/jfr.md). Read once per call, before
   * the call chooses its lane, so without such a recording every lane stays as it is.
   */
  Resilience now() {
    return QuellJfr.calls() ? recorded() : this;
  }

  private Resilience recorded() {
    Resilience r = recorded;
    if (r == null) {
      r = recorded = new Resilience(this, QuellJfr.observer(this));
    }
    return r;
  }

  /**
   * {@code base} with {@code recorder} among its observers, sharing every piece of its live state
   * (budget, breaker, limiters, latencies, hedge allowance), so that a recording changes what is
   * told, never what is decided. The lanes are chosen as for any observed policy.
   */
  private Resilience(Resilience base, CallObserver recorder) {
    this.name = base.name;
    this.attempts = base.attempts;
    this.deadline = base.deadline;
    this.attemptTimeout = base.attemptTimeout;
    this.backoff = base.backoff;
    this.classifier = base.classifier;
    this.budget = base.budget;
    this.listeners = base.listeners;
    this.timeSource = base.timeSource;
    this.useAmbientDeadline = base.useAmbientDeadline;
    this.useAmbientCriticality = base.useAmbientCriticality;
    this.discard = base.discard;
    this.measuredTiming = base.measuredTiming;
    this.breakerSetting = base.breakerSetting;
    this.liveBreaker = base.liveBreaker;
    this.limiters = base.limiters;
    this.deadlineNanos = base.deadlineNanos;
    this.attemptTimeoutNanos = base.attemptTimeoutNanos;
    this.firstAttemptTimeoutNanos = base.firstAttemptTimeoutNanos;
    this.firstAttempt = base.firstAttempt;
    this.liveBudget = base.liveBudget;
    this.eventListeners = base.eventListeners;
    CallObserver[] o = Arrays.copyOf(base.observers, base.observers.length + 1);
    o[base.observers.length] = recorder;
    this.observers = o;
    this.gates = base.gates;
    this.budgetGateIndex = base.budgetGateIndex;
    this.firstAttemptUngated = base.firstAttemptUngated;
    this.markSlots = base.markSlots;
    this.backoffMax = base.backoffMax;
    this.backoffMaxNanos = base.backoffMaxNanos;
    this.hedge = base.hedge;
    this.latencies = base.latencies;
    this.hedgeAllowance = base.hedgeAllowance;
    this.minSamples = base.minSamples;
    this.fastEndTime = base.fastEndTime;
    this.fastCoarseTime = base.fastCoarseTime;
    this.unobservedOnRealClock = false;
    this.timedFastPath = eventListeners.isEmpty() && timeSource == SystemTime.INSTANCE && hedge == null
        && !(liveBudget instanceof ConcurrentAllowance) && noWaits(gates); // as for any observed policy
    this.hedgedFastPath = false; // (the hedged lane tells no observer)
    this.once = base.once == base ? this : null;
    this.recorded = this;
  }

  /** Work that receives its {@link Attempt}. */
  @FunctionalInterface
  public interface Work<T> {
    /** Runs one attempt. */
    T call(Attempt attempt) throws Exception;
  }

  /** Asynchronous work that receives its {@link Attempt}. */
  @FunctionalInterface
  public interface AsyncWork<T> {
    /** Starts one attempt and returns a stage that completes with its result. */
    CompletionStage<T> start(Attempt attempt);
  }

  /**
   * This policy's worst case, in plain words: how many attempts a call makes and how long each may
   * run, the waits between them, where the deadline cuts, the budget, breaker, limiters and hedging
   * in force and the order they are asked in — and the bottom line: the most time one call can cost
   * its caller and the most attempts it can put on the dependency, with the bound the budget sets
   * across calls.
   *
   * <p>The figures follow the rules the calls themselves follow and are attained, not estimated:
   * the worst time is searched over every choice those rules leave open (each attempt timing out or
   * failing early, each jittered wait anywhere in its range, limiters holding an attempt, the budget
   * or a gate refusing a hedge or a retry), and one call that takes it is described. Measured timing
   * and a measured hedge delay are taken at their loosest (the configured attempt timeout, the delay
   * before the window has samples). Past 1,000 attempts the path is not followed further and the
   * time given is a bound (the deadline, or every attempt and wait at its longest), said to be one.
   * A few lines of plain text, the same for the same configuration; live state (the budget's
   * balance, the breaker's state, measured latencies) is not shown. Thread-safe; computed afresh on
   * each call, in time that grows with the attempts followed.
   */
  public String explain() {
    return Explanation.of(this);
  }

  // ---------------------------------------------------------------- identity

  @Override
  public boolean equals(@Nullable Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Resilience)) {
      return false;
    }
    Resilience r = (Resilience) o;
    return name.equals(r.name) && attempts == r.attempts && Objects.equals(deadline, r.deadline)
        && Objects.equals(attemptTimeout, r.attemptTimeout) && backoff.equals(r.backoff)
        && classifier.equals(r.classifier) && budget.equals(r.budget) && listeners.equals(r.listeners)
        && timeSource.equals(r.timeSource) && useAmbientDeadline == r.useAmbientDeadline
        && useAmbientCriticality == r.useAmbientCriticality && Objects.equals(hedge, r.hedge)
        && Objects.equals(discard, r.discard) && Objects.equals(measuredTiming, r.measuredTiming)
        && Objects.equals(breakerSetting, r.breakerSetting) && limiters.equals(r.limiters);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, attempts, deadline, attemptTimeout, backoff, classifier, budget, listeners, timeSource,
        useAmbientDeadline, useAmbientCriticality, hedge, discard, measuredTiming, breakerSetting, limiters);
  }

  @Override
  public String toString() {
    return "Resilience[" + name + ", attempts=" + attempts
        + ", deadline=" + (deadline == null ? "none" : Problems.duration(deadline))
        + ", attemptTimeout=" + (attemptTimeout == null ? "none" : Problems.duration(attemptTimeout))
        + ", backoff=" + backoff + ", budget=" + budget + "]";
  }

  /**
   * The settings of a policy, changed inside {@link Resilience#with(Consumer)} and validated together
   * when it returns. Not thread-safe, and unusable after {@code with} returns.
   */
  public static final class Settings {
    private String name = "default";
    private int attempts = 3;
    private @Nullable Duration deadline = Duration.ofSeconds(30);
    private @Nullable Duration attemptTimeout = Duration.ofSeconds(10);
    private Backoff backoff = Backoff.exponential();
    private Classifier classifier = Classifier.DEFAULT;
    private RetryBudget budget = RetryBudget.AUTOMATIC;
    private final List<ResilienceListener> listeners = new ArrayList<>();
    private TimeSource timeSource = TimeSource.system();
    private boolean useAmbientDeadline = true;
    private boolean useAmbientCriticality;
    private @Nullable Hedge hedge;
    private @Nullable Consumer<Object> discard;
    private @Nullable MeasuredTiming measuredTiming;
    private @Nullable Object breaker;
    private final List<Limiter> limiters = new ArrayList<>();
    /** deadline(...) or attemptTimeout(...) was called (with null, it is an error, not "none"). */
    private boolean deadlineSet;
    private boolean attemptTimeoutSet;
    boolean closed;

    Settings() {}

    Settings(Resilience from) {
      name = from.name;
      attempts = from.attempts;
      deadline = from.deadline;
      attemptTimeout = from.attemptTimeout;
      backoff = from.backoff;
      classifier = from.classifier;
      budget = from.budget;
      listeners.addAll(from.listeners);
      timeSource = from.timeSource;
      useAmbientDeadline = from.useAmbientDeadline;
      useAmbientCriticality = from.useAmbientCriticality;
      hedge = from.hedge;
      discard = from.discard;
      measuredTiming = from.measuredTiming;
      breaker = from.breakerSetting;
      limiters.addAll(from.limiters);
    }

    private Settings open() {
      if (closed) {
        throw new IllegalStateException("Resilience.Settings can only be changed inside Resilience.with(...)");
      }
      return this;
    }

    /** The policy's name, used in events, metrics and logs. */
    public Settings name(String name) { open().name = name; return this; }

    /** Attempts in total, the first included; at least 1. */
    public Settings attempts(int attempts) { open().attempts = attempts; return this; }

    /**
     * The deadline of each call: positive; a century or more ({@code ChronoUnit.FOREVER}) means none.
     * Null is an error that names the setting: say {@link #noDeadline()} to have none.
     */
    public Settings deadline(Duration deadline) { open().deadline = deadline; deadlineSet = true; return this; }

    /** No deadline of its own (the ambient one still applies when {@code useAmbientDeadline}). */
    public Settings noDeadline() { open().deadline = null; deadlineSet = false; return this; }

    /**
     * The longest one attempt may run: positive; a century or more means none. Null is an error that
     * names the setting: say {@link #noAttemptTimeout()} to have none.
     */
    public Settings attemptTimeout(Duration attemptTimeout) {
      open().attemptTimeout = attemptTimeout;
      attemptTimeoutSet = true;
      return this;
    }

    /** No attempt timeout (attempts are still bounded by the deadline). */
    public Settings noAttemptTimeout() { open().attemptTimeout = null; attemptTimeoutSet = false; return this; }

    /** The backoff between attempts. */
    public Settings backoff(Backoff backoff) { open().backoff = backoff; return this; }

    /** What counts as success, transient and permanent failure. */
    public Settings classifier(Classifier classifier) { open().classifier = classifier; return this; }

    /** The retry budget; null means {@link RetryBudget#NONE}. */
    public Settings budget(@Nullable RetryBudget budget) { open().budget = budget == null ? RetryBudget.NONE : budget; return this; }

    /** Adds a listener. */
    public Settings listener(ResilienceListener listener) { open().listeners.add(Objects.requireNonNull(listener, "listener")); return this; }

    /** Removes every listener. */
    public Settings clearListeners() { open().listeners.clear(); return this; }

    /** The time source. */
    public Settings timeSource(TimeSource timeSource) { open().timeSource = timeSource; return this; }

    /** Whether calls honour the ambient deadline of {@link ResilienceContext}. */
    public Settings useAmbientDeadline(boolean use) { open().useAmbientDeadline = use; return this; }

    /** Whether calls spend from the budget at the ambient {@link Criticality}. */
    public Settings useAmbientCriticality(boolean use) { open().useAmbientCriticality = use; return this; }

    /** Hedging (see {@link Hedge}); hedges count as attempts, so it needs attempts of 2 or more. */
    public Settings hedge(Hedge hedge) { open().hedge = Objects.requireNonNull(hedge, "hedge"); return this; }

    /** No hedging. */
    public Settings noHedge() { open().hedge = null; return this; }

    /** A circuit breaker of this policy's own, from {@code config}; see {@link Resilience#withBreaker(CircuitBreaker.Config)}. */
    public Settings breaker(CircuitBreaker.Config config) {
      open().breaker = Objects.requireNonNull(config, "breaker config");
      return this;
    }

    /** A live, possibly shared, circuit breaker; see {@link Resilience#withBreaker(CircuitBreaker)}. */
    public Settings breaker(CircuitBreaker breaker) {
      open().breaker = Objects.requireNonNull(breaker, "breaker");
      return this;
    }

    /** No circuit breaker. */
    public Settings noBreaker() { open().breaker = null; return this; }

    /** Adds a limiter (a given one once only); see {@link Resilience#withLimiter}. */
    public Settings limiter(Limiter limiter) {
      Objects.requireNonNull(limiter, "limiter");
      if (!open().limiters.contains(limiter)) {
        limiters.add(limiter);
      }
      return this;
    }

    /** Removes every limiter. */
    public Settings clearLimiters() { open().limiters.clear(); return this; }

    /** Measured attempt timeouts; see {@link MeasuredTiming}. */
    public Settings measuredTiming(MeasuredTiming timing) {
      open().measuredTiming = Objects.requireNonNull(timing, "measuredTiming");
      return this;
    }

    /** No measured timing. */
    public Settings noMeasuredTiming() { open().measuredTiming = null; return this; }

    /** What to do with a value nobody will see; see {@link Resilience#withDiscard}. */
    public Settings discard(Consumer<Object> discard) {
      open().discard = Objects.requireNonNull(discard, "discard");
      return this;
    }

    @SuppressWarnings("ConstantConditions") // users without nullness checking can still pass null
    void validate() {
      Problems p = new Problems();
      p.require(name != null && !name.isBlank(), "name", name == null ? null : '"' + name + '"', "must not be blank");
      p.require(attempts >= 1, "attempts", attempts, "must be at least 1 (attempts counts the first attempt too)");
      if (deadline != null || deadlineSet) {
        p.require(deadline != null, "deadline", null, "must be a positive duration; for no deadline use withoutDeadline()");
        if (deadline != null) {
          p.positive("deadline", deadline);
        }
      }
      if (attemptTimeout != null || attemptTimeoutSet) {
        p.require(attemptTimeout != null, "attemptTimeout", null,
            "must be a positive duration; for none use withoutAttemptTimeout()");
        if (attemptTimeout != null) {
          p.positive("attemptTimeout", attemptTimeout);
        }
      }
      p.require(backoff != null, "backoff", null, "must not be null (use Backoff.NONE for no delay)");
      p.require(classifier != null, "classifier", null, "must not be null");
      p.require(timeSource != null, "timeSource", null, "must not be null");
      if (hedge != null) {
        p.require(attempts > 1, "hedge", hedge, "needs attempts of 2 or more: every hedge is an attempt");
      }
      for (Limiter l : limiters) {
        if (l instanceof RateLimiter && timeSource != null) {
          p.require(((RateLimiter) l).timeSource() == timeSource, "limiter", l.name(),
              "refills from " + ((RateLimiter) l).timeSource() + " but the policy runs on " + timeSource
                  + ": build it with Limiter.rate(perSecond, burst, timeSource)");
        }
      }
      if (breaker instanceof CircuitBreaker && timeSource != null) {
        CircuitBreaker b = (CircuitBreaker) breaker;
        p.require(b.timeSource() == timeSource, "breaker", b.name(),
            "runs on " + b.timeSource() + " but the policy on " + timeSource
                + ": build it with CircuitBreaker.of(name, config, timeSource), or give the policy its Config");
      }
      if (useAmbientCriticality) {
        p.require(attempts > 1, "useAmbientCriticality", true,
            "has no effect with attempts = 1: criticality only decides which retries a budget funds");
        p.require(budget != RetryBudget.NONE, "useAmbientCriticality", true,
            "has no effect without a budget (budget is RetryBudget.NONE)");
      }
      p.throwIfAny();
    }
  }
}
