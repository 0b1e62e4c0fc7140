package dev.quell.slf4j.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.TimeSource;
import dev.quell.Verdict;
import dev.quell.internal.CallObserver;
import dev.quell.internal.CallObservers;
import dev.quell.internal.Internal;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * The listener behind {@code QuellSlf4j.listener}. Every line starts with its event name and
 * continues in {@code key=value} form. (No SLF4J markers: backends that print them would show the
 * name twice, and the first word of the message filters as well.) Nothing is formatted unless
 * the level is enabled; refusal warnings pass a per-(policy, reason) flood gate.
 *
 * <p>The last failed attempt is remembered per thread between its {@code attemptEnded} and the
 * {@code retrying} or {@code callEnded} that the core sends right after it on the same thread, so a
 * retry or refusal line can say what failed without per-call state.
 */
@Internal
public final class LoggingListener implements ResilienceListener, CallObserver {
  /** The logger every line goes to. */
  public static final String LOGGER_NAME = "dev.quell.Resilience";

  public static final String ATTEMPT = "quell.attempt";
  public static final String RETRY = "quell.retry";
  public static final String RECOVERED = "quell.recovered";
  public static final String GAVE_UP = "quell.gave_up";
  public static final String CANCELLED = "quell.cancelled";
  public static final String REJECTED_BUDGET = "quell.rejected.budget";
  public static final String REJECTED_BREAKER = "quell.rejected.breaker";
  public static final String REJECTED_LIMITER = "quell.rejected.limiter";
  public static final String DRAINING = "quell.draining";
  public static final String BREAKER_OPENED = "quell.breaker.opened";
  public static final String BREAKER_HALF_OPEN = "quell.breaker.half_open";
  public static final String BREAKER_CLOSED = "quell.breaker.closed";
  public static final String BREAKER_ISOLATED = "quell.breaker.isolated";
  public static final String HEDGE_STARTED = "quell.hedge.started";
  public static final String HEDGE_WON = "quell.hedge.won";
  public static final String HEDGE_DISCARDED = "quell.hedge.discarded";
  public static final String HEDGE_SUPPRESSED = "quell.hedge.suppressed";

  private static final int REASONS = StopReason.values().length;
  /** The flood gate of suppressed hedges: past the gates of the stop reasons. */
  private static final int HEDGE_GATE = REASONS;

  private static final ThreadLocal<LastAttempt> LAST = ThreadLocal.withInitial(LastAttempt::new);

  private final Logger log;
  private final TimeSource time;
  private final long intervalNanos;
  /** Flood gates per policy name, one per refusal reason and one for suppressed hedges. */
  private final ConcurrentHashMap<String, FloodGate[]> gates = new ConcurrentHashMap<>();

  public LoggingListener(Logger log, Duration warningInterval, TimeSource time) {
    if (warningInterval.isNegative()) {
      throw new IllegalArgumentException("warningInterval must not be negative: " + warningInterval);
    }
    this.log = log;
    this.time = time;
    this.intervalNanos = warningInterval.toNanos();
  }

  @Override
  public void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge) {
    // the attempt's end says all there is to say
  }

  @Override
  public void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
      @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
    if (verdict != Verdict.OK) {
      LastAttempt last = LAST.get();
      last.policy = policy;
      last.attempt = attempt;
      last.verdict = verdict;
      last.failure = failure;
    }
    if (log.isTraceEnabled()) {
      log.trace("quell.attempt policy={} attempt={}{} verdict={} duration={} failure={}",
          policy, attempt, hedge ? " hedge" : "", verdict == null ? "CANCELLED" : verdict, millis(durationNanos),
          failure == null ? "none" : failure.toString());
    }
  }

  @Override
  public void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos) {
    LastAttempt last = LAST.get();
    boolean known = last.is(policy, attempt);
    Verdict verdict = last.verdict;
    Throwable failure = last.failure;
    last.clear();
    if (log.isDebugEnabled()) {
      log.debug("quell.retry policy={} attempt={} delay={} verdict={} failure={}", policy, attempt + 1,
          millis(delayNanos), known ? verdictName(verdict) : "?", known ? failureText(failure) : "?");
    }
  }

  @Override
  public void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
      @Nullable Verdict verdict, long elapsedNanos) {
    LastAttempt last = LAST.get();
    boolean known = last.is(policy, attempts);
    Throwable failure = last.failure;
    last.clear();
    switch (reason) {
      case SUCCEEDED:
        if (attempts > 1 && log.isDebugEnabled()) {
          log.debug("quell.recovered policy={} attempts={} elapsed={}", policy, attempts, millis(elapsedNanos));
        }
        break;
      case PERMANENT:
      case ATTEMPTS_EXHAUSTED:
      case DEADLINE_EXCEEDED:
        if (log.isDebugEnabled()) {
          log.debug("quell.gave_up policy={} reason={} attempts={} elapsed={} failure={}", policy, reason,
              attempts, millis(elapsedNanos), known ? failureText(failure) : "?");
        }
        break;
      case CANCELLED:
        if (log.isDebugEnabled()) {
          log.debug("quell.cancelled policy={} attempts={} elapsed={}", policy, attempts, millis(elapsedNanos));
        }
        break;
      case DRAINING:
        if (log.isInfoEnabled()) {
          long suppressed = gate(policy, reason).admit(time.nanoTime());
          if (suppressed >= 0) {
            log.info("quell.draining policy={} attempts={} suppressed={}: the process is shutting down,"
                + " so no new attempt starts", policy, attempts, suppressed);
          }
        }
        break;
      default:
        rejected(policy, budget, reason, attempts, known, failure);
    }
  }

  private void rejected(String policy, RetryBudget budget, StopReason reason, int attempts, boolean known,
      @Nullable Throwable lastFailure) {
    if (!log.isWarnEnabled()) {
      return;
    }
    long suppressed = gate(policy, reason).admit(time.nanoTime());
    if (suppressed < 0) {
      return;
    }
    String failure = known ? failureText(lastFailure) : "?";
    if (reason == StopReason.BUDGET_EXHAUSTED) {
      log.warn("quell.rejected.budget policy={} budget={} utilization={} retryAfter={} attempts={} failure={}"
          + " suppressed={}: the retry budget refused a retry; the dependency is failing and Quell is holding back"
          + " a retry storm", policy, budget.name(), String.format(Locale.ROOT, "%.2f", budget.utilization()),
          budget.retryAfter().map(d -> millis(d.toNanos())).orElse("none"), attempts, failure, suppressed);
    } else {
      String event = reason == StopReason.DEPENDENCY_UNAVAILABLE ? REJECTED_BREAKER : REJECTED_LIMITER;
      log.warn("{} policy={} reason={} attempts={} failure={} suppressed={}", event, policy, reason,
          attempts, failure, suppressed);
    }
  }

  @Override
  public void hedged(String policy, RetryBudget budget, Criticality criticality, ResilienceEvent.Type type,
      int attempt) {
    switch (type) {
      case HEDGE_SUPPRESSED:
        if (log.isInfoEnabled()) {
          long suppressed = gate(policy, HEDGE_GATE).admit(time.nanoTime());
          if (suppressed >= 0) {
            log.info("quell.hedge.suppressed policy={} budget={} utilization={} attempts={} suppressed={}: a hedge"
                + " was due but the retry budget or a limit refused it; the call goes on without it", policy,
                budget.name(), String.format(Locale.ROOT, "%.2f", budget.utilization()), attempt, suppressed);
          }
        }
        break;
      case HEDGE_WON:
        if (log.isDebugEnabled()) {
          log.debug("quell.hedge.won policy={} attempt={}", policy, attempt);
        }
        break;
      case HEDGE_STARTED:
        if (log.isTraceEnabled()) {
          log.trace("quell.hedge.started policy={} attempt={}", policy, attempt);
        }
        break;
      case HEDGE_DISCARDED:
        if (log.isTraceEnabled()) {
          log.trace("quell.hedge.discarded policy={} attempt={}", policy, attempt);
        }
        break;
      default:
        break;
    }
  }

  /**
   * Not flood-controlled: a breaker moves at most a few times per break (at least half its break
   * duration, 2.5 s by default), and each move is worth its line.
   */
  @Override
  public void breakerMoved(String policy, @Nullable CircuitBreaker breaker, CircuitBreaker.State state, int attempt) {
    String name = breaker == null ? "?" : breaker.name();
    switch (state) {
      case OPEN:
        if (log.isWarnEnabled()) {
          if (breaker == null) {
            log.warn("quell.breaker.opened policy={} breaker=? attempt={}: the circuit breaker opened; attempts are"
                + " refused until the break is over", policy, attempt);
          } else {
            CircuitBreaker.Metrics m = breaker.metrics();
            log.warn("quell.breaker.opened policy={} breaker={} attempt={} failureRate={} calls={} retryAfter={}"
                + " opened={}: the circuit breaker opened; attempts are refused until the break is over", policy,
                name, attempt, String.format(Locale.ROOT, "%.2f", m.failureRate()), m.calls(),
                breaker.retryAfter().map(LoggingListener::millis).orElse("none"),
                m.transitionsTo(CircuitBreaker.State.OPEN));
          }
        }
        break;
      case HALF_OPEN:
        if (log.isInfoEnabled()) {
          log.info("quell.breaker.half_open policy={} breaker={} attempt={}: the break is over; probing the"
              + " dependency", policy, name, attempt);
        }
        break;
      case CLOSED:
        if (log.isInfoEnabled()) {
          log.info("quell.breaker.closed policy={} breaker={} attempt={} ramp={}: the probes succeeded; traffic"
              + " comes back", policy, name, attempt,
              breaker == null ? "?" : millis(breaker.config().ramp()));
        }
        break;
      default:
        if (log.isWarnEnabled()) {
          log.warn("quell.breaker.isolated policy={} breaker={} attempt={}: the circuit breaker is held open until"
              + " reset", policy, name, attempt);
        }
    }
  }

  private FloodGate gate(String policy, StopReason reason) {
    return gate(policy, reason.ordinal());
  }

  private FloodGate gate(String policy, int slot) {
    FloodGate[] byReason = gates.get(policy);
    if (byReason == null) {
      byReason = gates.computeIfAbsent(policy, p -> {
        FloodGate[] g = new FloodGate[REASONS + 1];
        for (int i = 0; i < g.length; i++) {
          g[i] = new FloodGate(intervalNanos);
        }
        return g;
      });
    }
    return byReason[slot];
  }

  private static String verdictName(@Nullable Verdict verdict) {
    return verdict == null ? "CANCELLED" : verdict.toString();
  }

  private static String failureText(@Nullable Throwable failure) {
    return failure == null ? "none" : failure.toString();
  }

  /** {@code d} as {@link #millis(long)}, or "forever" past what nanoseconds can hold (a break of 300 years). */
  private static String millis(Duration d) {
    return d.compareTo(MAX_NANOS) >= 0 ? "forever" : millis(d.toNanos());
  }

  private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

  private static String millis(long nanos) {
    if (nanos % 1_000_000 == 0) {
      return nanos / 1_000_000 + "ms";
    }
    return String.format(Locale.ROOT, "%.3fms", nanos / 1e6);
  }

  @Override
  public void onEvent(ResilienceEvent event) {
    CallObservers.dispatch(event, this);
  }

  @Override
  public String toString() {
    return "QuellSlf4j.listener[" + log.getName() + ", warnings every " + Duration.ofNanos(intervalNanos) + "]";
  }

  /** The last failed attempt seen on a thread. Mutable and reused: one per thread. */
  private static final class LastAttempt {
    @Nullable String policy;
    int attempt;
    @Nullable Verdict verdict;
    @Nullable Throwable failure;

    void clear() {
      policy = null;
      verdict = null;
      failure = null;
      attempt = 0;
    }

    /** True when this is the failed attempt {@code attempt} of {@code policy} (compared by identity: the core passes the policy's own name). */
    boolean is(String policy, int attempt) {
      return this.policy == policy && this.attempt == attempt;
    }
  }
}
