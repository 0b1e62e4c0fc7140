package dev.quell;

import java.time.Duration;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * The core's rules, each written once as a plain function: whether an attempt may be admitted and by
 * which gate it is refused, how an attempt's end is accounted, what a call does after an attempt that
 * did not succeed, how long it waits, how long a refusal pauses and what a stopped call gives its
 * caller. Every path calls these and none repeats them: {@link Call} (and through it the asynchronous
 * driver and the simulator), the synchronous fast lanes and their retry loop, and {@code explain()}.
 *
 * <p>Inputs are plain values; the process-wide state a rule depends on (draining, the clock) is
 * passed in, never read here. The functions that decide return a <em>plan</em>, a {@code long}: a
 * delay of zero or more means "go on after that long", a negative value is a stop with its reason
 * ({@link #stop}, {@link #reason}), and {@link #AWAIT_OTHERS} means another attempt still running
 * decides. Plans are numbers so that deciding allocates nothing. {@code DecideProperties} tests the
 * functions directly.
 */
final class Decide {

  private Decide() {}

  /** The guarded pause after a gate's refusal: keeps callers that loop on refusals from spinning. */
  static final long REJECTION_PAUSE_NANOS = 100_000_000L;

  /** The plan "another attempt is still running; its end decides". */
  static final long AWAIT_OTHERS = Long.MIN_VALUE;

  /** The plan "go on now". */
  static final long GO = 0;

  private static final StopReason[] REASONS = StopReason.values();

  /** The plan that stops the call for {@code reason}. */
  static long stop(StopReason reason) {
    return -1L - reason.ordinal();
  }

  /** True when {@code plan} stops the call. */
  static boolean stops(long plan) {
    return plan < 0 && plan != AWAIT_OTHERS;
  }

  /** The reason a stopping {@code plan} gives. */
  static StopReason reason(long plan) {
    return REASONS[(int) (-1L - plan)];
  }

  // ---------------------------------------------------------------- time

  /** Time left before the deadline at {@code now}: 0 or more; Long.MAX_VALUE when there is none ({@code deadline} Long.MAX_VALUE). */
  static long remaining(long deadline, long start, long now) {
    if (deadline == Long.MAX_VALUE) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, deadline - (now - start));
  }

  /** How long an attempt starting with {@code left} before the deadline may run: its ceiling, never past the deadline. */
  static long attemptTimeout(long ceiling, long left) {
    return Math.min(ceiling, left);
  }

  // ---------------------------------------------------------------- admission

  /** A gate walk for a first attempt or a retry: every gate in order; a wait a gate asks for is kept. */
  static final int WALK_ADMIT = 0;
  /** A gate walk for a hedge: a gate that would make it wait counts as refusing (a late hedge is no use). */
  static final int WALK_HEDGE = 1;
  /**
   * A gate walk that asks without starting anything (a retry refused before its backoff?): the budget
   * is asked, not charged, and a gate that would queue ends the walk without a refusal.
   */
  static final int WALK_PROBE = 2;

  /** What {@link #walk} returns when no gate refused. */
  static final int ADMITTED = -1;

  /**
   * Whether a new attempt may start at all, before any gate is asked: {@code null} when it may, else
   * why not. No new attempt starts once draining has begun or the deadline has passed.
   */
  static @Nullable StopReason mayStart(boolean draining, long left) {
    if (draining) {
      return StopReason.DRAINING;
    }
    return left <= 0 ? StopReason.DEADLINE_EXCEEDED : null;
  }

  /**
   * Asks gates {@code from} to the last, in their one order (breaker, rate limits, concurrency
   * limits, budget: SPEC §5), to admit {@code r} at {@code now}. Returns {@link #ADMITTED} when none
   * refused, else the index of the first that refused; {@code r.admitted} counts the gates that hold
   * something of {@code r} (what {@link #release} gives back). The budget never charges nor refuses
   * a first attempt. The longest wait a gate asks for is kept in {@code r.waitNanos}.
   */
  static int walk(Gate[] gates, int budgetGate, AttemptRecord r, int from, int mode, long now) {
    for (int i = from; i < gates.length; i++) {
      if (i == budgetGate) {
        if (!r.isAdditional()) {
          r.admitted = i + 1;
          continue;
        }
        if (mode == WALK_PROBE) {
          return ((BudgetGate) gates[i]).wouldFund(r, now) ? ADMITTED : i;
        }
      }
      long waitBefore = r.waitNanos;
      if (!gates[i].tryAdmit(r, i, now)) {
        return mode == WALK_PROBE && gates[i].maxWaitNanos() > 0 ? ADMITTED : i;
      }
      r.admitted = i + 1;
      if (r.waitNanos < waitBefore) {
        r.waitNanos = waitBefore; // waits do not shrink
      }
      if (mode == WALK_HEDGE && r.waitNanos > 0) {
        return i;
      }
    }
    return ADMITTED;
  }

  /** Gives back, last first, every gate that holds something of {@code r}, exactly once. */
  static void release(Gate[] gates, int budgetGate, AttemptRecord r, int how, long now) {
    int n = r.admitted;
    r.admitted = 0;
    for (int i = n - 1; i >= 0; i--) {
      if (i == budgetGate && !r.isAdditional()) {
        continue;
      }
      gates[i].release(r, i, how, now);
    }
  }

  /** How a gate is told an attempt with {@code kind} ended (or {@link Gate#TIMED_OUT}). */
  static int howEnded(Verdict.Kind kind, boolean timedOut) {
    if (timedOut) {
      return Gate.TIMED_OUT;
    }
    switch (kind) {
      case OK:
        return Gate.SUCCEEDED;
      case TRANSIENT:
        return Gate.FAILED;
      case THROTTLED:
        return Gate.THROTTLED;
      default:
        return Gate.REJECTED; // permanent: the dependency answered, and refused
    }
  }

  // ---------------------------------------------------------------- accounting

  /**
   * Accounts an attempt that ended with {@code kind}, its gates already released: a success
   * deposits into the budget and records its latency ({@code nanos}, ending at {@code now}) where the
   * policy measures; a failure that may be retried is recorded; a permanent one is not the
   * dependency's doing and counts for nothing.
   */
  static void accounted(Resilience policy, RetryBudget budget, Verdict.Kind kind, long nanos, long now) {
    if (kind == Verdict.Kind.OK) {
      budget.deposit();
      policy.recordLatency(nanos, now);
    } else if (kind != Verdict.Kind.PERMANENT) {
      budget.recordFailure();
    }
  }

  // ---------------------------------------------------------------- after an attempt

  /**
   * What a call does after an attempt ended with {@code kind}, before any wait is drawn: stop
   * ({@code SUCCEEDED}, {@code PERMANENT}, {@code DRAINING}, {@code DEADLINE_EXCEEDED},
   * {@code ATTEMPTS_EXHAUSTED}), {@link #AWAIT_OTHERS} when another attempt is still running or about
   * to, or {@link #GO}: a retry is possible, and {@link #afterWait} decides with its wait.
   *
   * @param attempts attempts started so far
   * @param hedgesEndIt the call hedged and its hedging does not retry: the attempts sent are all it has
   */
  static long afterAttempt(Verdict.Kind kind, boolean othersRunning, boolean draining, long left, int attempts,
      int maxAttempts, boolean hedgesEndIt) {
    if (kind == Verdict.Kind.OK) {
      return stop(StopReason.SUCCEEDED);
    }
    if (kind == Verdict.Kind.PERMANENT) {
      return stop(StopReason.PERMANENT);
    }
    if (othersRunning) {
      return AWAIT_OTHERS;
    }
    if (draining) {
      return stop(StopReason.DRAINING); // no new attempt starts once draining has begun
    }
    if (left <= 0) {
      return stop(StopReason.DEADLINE_EXCEEDED);
    }
    if (attempts >= maxAttempts || hedgesEndIt) {
      return stop(StopReason.ATTEMPTS_EXHAUSTED);
    }
    return GO;
  }

  /**
   * The plan for a retry whose wait is {@code delay} ({@link #backoffNanos}; -1 when the backoff
   * failed) with {@code left} before the deadline: retry after {@code delay}, or stop
   * ({@code PERMANENT} when the backoff failed, which turns retrying off for the call;
   * {@code DEADLINE_EXCEEDED} when the wait would only carry the call past its deadline).
   */
  static long afterWait(long delay, long left) {
    if (delay < 0) {
      return stop(StopReason.PERMANENT);
    }
    if (delay >= left) {
      return stop(StopReason.DEADLINE_EXCEEDED);
    }
    return delay;
  }

  /**
   * The wait before retry number {@code retry} (the attempts made so far) after {@code verdict},
   * saturated; -1 when the backoff itself failed (threw or returned null; {@code warnTo}, if given,
   * logs it once). A server's Retry-After wins over the backoff, capped by the backoff's maximum
   * ({@code max}), and is never jittered.
   */
  static long backoffNanos(Backoff backoff, long max, int retry, Verdict verdict, RandomGenerator random,
      @Nullable Resilience warnTo) {
    Duration asked = verdict.retryAfter().orElse(null);
    if (asked != null) {
      return Math.min(Durations.toNanosSaturated(asked), max);
    }
    if (backoff instanceof Backoff.Exponential) {
      return Math.min(((Backoff.Exponential) backoff).delayNanos(retry, verdict, random), max);
    }
    if (backoff instanceof Backoff.Constant) {
      return Math.min(((Backoff.Constant) backoff).delayNanos(), max);
    }
    Duration d;
    try {
      d = backoff.delay(retry, verdict, random);
    } catch (RuntimeException | LinkageError | AssertionError e) {
      if (warnTo != null) {
        warnTo.warnOnce("backoff " + backoff + " threw " + e + "; the call stops retrying");
      }
      return -1;
    }
    if (d == null) {
      if (warnTo != null) {
        warnTo.warnOnce("backoff " + backoff + " returned null; the call stops retrying");
      }
      return -1;
    }
    return Math.min(Math.max(0, Durations.toNanosSaturated(d)), max);
  }

  /**
   * The guarded pause before a call refused by a gate ends with {@code reason}, {@code left} before
   * its deadline: none for a deadline or a drain, otherwise {@link #REJECTION_PAUSE_NANOS}, never past
   * the deadline.
   */
  static long refusalPause(StopReason reason, long left) {
    if (reason == StopReason.DEADLINE_EXCEEDED || reason == StopReason.DRAINING) {
      return 0;
    }
    return Math.max(0, Math.min(REJECTION_PAUSE_NANOS, left));
  }

  // ---------------------------------------------------------------- what the caller gets

  /**
   * The Retry-After a stopped call reports: the refusing gate's ({@code gateNanos}, -1 for none) or
   * the dependency's from the last verdict, whichever is later; null for none.
   */
  static @Nullable Duration retryAfter(long gateNanos, @Nullable Verdict last) {
    long server = -1;
    if (last != null && last.retryAfter().isPresent()) {
      server = Durations.toNanosSaturated(last.retryAfter().get());
    }
    long hint = Math.max(gateNanos, server);
    return hint < 0 ? null : Duration.ofNanos(hint);
  }

  /**
   * The exception the call gives for {@code reason}, or null when it gives a value: the last
   * attempt's own failure when it stopped on it, else Quell's exception for the refusal, naming the
   * policy and the attempts made. Quell's exceptions carry a stack trace only when {@code stack}.
   */
  static @Nullable Throwable failure(StopReason reason, Resilience policy, RetryBudget budget, int attempts,
      long deadline, long elapsed, boolean lastHasValue, @Nullable Throwable lastFailure,
      @Nullable Verdict lastVerdict, long gateRetryAfter, boolean stack) {
    switch (reason) {
      case SUCCEEDED:
        return null;
      case PERMANENT:
      case ATTEMPTS_EXHAUSTED:
        return lastHasValue ? null : lastFailure;
      default:
        break;
    }
    String policyName = policy.name();
    String tried = attempts + (attempts == 1 ? " attempt" : " attempts");
    switch (reason) {
      case DEADLINE_EXCEEDED:
        return new DeadlineExceededException("deadline of "
            + (deadline == Long.MAX_VALUE ? "(none)" : Duration.ofNanos(deadline).toMillis() + " ms")
            + " exceeded after " + tried + " in policy '" + policyName + "'",
            attempts, Duration.ofNanos(Math.max(0, elapsed)), lastFailure, stack);
      case BUDGET_EXHAUSTED:
        return new CallRejectedException("retry budget '" + budget.name() + "' refused a retry after " + tried
            + " in policy '" + policyName + "'", reason, attempts, retryAfter(gateRetryAfter, lastVerdict),
            lastFailure, stack);
      case DEPENDENCY_UNAVAILABLE:
        return new CallRejectedException("circuit breaker refused the attempt after " + tried + " in policy '"
            + policyName + "'", reason, attempts, retryAfter(gateRetryAfter, lastVerdict), lastFailure, stack);
      case LIMITED:
        return new RateLimitedException("a limiter refused the attempt after " + tried + " in policy '"
            + policyName + "'", attempts, retryAfter(gateRetryAfter, lastVerdict), lastFailure, stack);
      case CANCELLED:
        if (lastFailure != null && Call.isCancellation(lastFailure, true)) {
          return lastFailure;
        }
        InterruptedException interrupted = new InterruptedException("call cancelled in policy '" + policyName + "'");
        if (lastFailure != null) {
          interrupted.initCause(lastFailure);
        }
        return interrupted;
      default:
        return new CallRejectedException("draining: no new attempt starts (policy '" + policyName + "', after "
            + tried + ")", reason, attempts, retryAfter(gateRetryAfter, lastVerdict), lastFailure, stack);
    }
  }
}
