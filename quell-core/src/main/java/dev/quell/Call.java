package dev.quell;

import java.time.Duration;
import dev.quell.internal.CallObserver;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The decision core: one call's state and the single place where Quell decides what follows an
 * attempt. The synchronous driver ({@link SyncExecution}), the asynchronous driver
 * ({@link AsyncExecution}) and, through a virtual {@link TimeSource}, the simulator all drive this
 * class and nothing else decides. It runs on any {@code TimeSource}, starts no threads and never
 * blocks: waiting is the driver's job.
 *
 * <p>Not thread-safe: a driver makes sure one thread at a time touches a call.
 */
final class Call {
  /** Start the next attempt after {@link #delayNanos}. */
  static final int RETRY = 1;
  /** Stop now with {@link #stopReason}. */
  static final int STOP = 2;
  /** Serve the guarded pause of {@link #delayNanos}, then stop with {@link #stopReason}. */
  static final int PAUSE_THEN_STOP = 3;

  /** The guarded rejection pause: keeps callers that loop on rejections from spinning. */
  static final long REJECTION_PAUSE_NANOS = 100_000_000L;

  final Resilience policy;
  final RetryBudget budget;
  final TimeSource time;
  final long startNanos;
  final long deadlineNanos;
  final Criticality criticality;
  private final List<ResilienceListener> listeners;
  private final CallObserver[] observers;
  private final boolean observed;

  int attempts;
  long attemptStartNanos;
  long attemptTimeoutNanos;
  @Nullable Object lastResult;
  @Nullable Throwable lastFailure;
  boolean lastHasValue;
  @Nullable Verdict lastVerdict;

  @Nullable StopReason stopReason;
  long delayNanos;
  @Nullable Duration retryAfter;

  Call(Resilience policy, long startNanos, @Nullable ResilienceContext ambient) {
    this.policy = policy;
    this.budget = policy.budget();
    this.time = policy.timeSource();
    this.startNanos = startNanos;
    long deadline = policy.deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : saturatedAdd(startNanos, policy.deadlineNanos);
    if (ambient != null && policy.useAmbientDeadline()) {
      // the effective deadline is the earlier of ours and the caller's, resolved once per call
      deadline = Math.min(deadline, ambient.deadlineOn(time, startNanos));
    }
    this.deadlineNanos = deadline;
    this.criticality = ambient != null && policy.useAmbientCriticality() ? ambient.criticality() : Criticality.CRITICAL;
    this.listeners = policy.eventListeners;
    this.observers = policy.observers;
    this.observed = !listeners.isEmpty() || observers.length > 0;
  }

  /** Emits the nested-retry event: this call retries inside an attempt of another call that retries too. */
  void nestedInsideRetryingCall(long now) {
    if (policy.attempts() > 1) {
      emit(ResilienceEvent.Type.NESTED_RETRY, now, null, null, null, null);
    }
  }

  /**
   * Decides whether the next attempt may start at {@code now}. Returns the attempt's timeout in
   * nanoseconds ({@code Long.MAX_VALUE} for none), or 0 if it must not start; then the call has
   * stopped with {@link #stopReason} and the terminal event has been sent.
   */
  long beginAttempt(long now) {
    if (Draining.isDraining()) {
      stop(StopReason.DRAINING, now, null);
      return 0;
    }
    if (now >= deadlineNanos) {
      stop(StopReason.DEADLINE_EXCEEDED, now, null);
      return 0;
    }
    attempts++;
    attemptStartNanos = now;
    long left = deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : deadlineNanos - now;
    attemptTimeoutNanos = Math.min(policy.attemptTimeoutNanos, left);
    if (observed) {
      notifyAttemptStarted(observers, policy.name(), budget, criticality, attempts);
      emit(ResilienceEvent.Type.ATTEMPT_STARTED, now, null, null, null, null);
    }
    return attemptTimeoutNanos;
  }

  /** Time left before the deadline at {@code now}; {@code Long.MAX_VALUE} when there is none. */
  long remainingNanos(long now) {
    return deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, deadlineNanos - now);
  }

  /** Records an attempt that the first-attempt fast path already ran, so the core can take over from there. */
  void adoptFirstAttempt(long attemptStart, long timeoutNanos) {
    attempts = 1;
    attemptStartNanos = attemptStart;
    attemptTimeoutNanos = timeoutNanos;
  }

  /**
   * Decides what follows an attempt that ended at {@code now} with {@code result} or
   * {@code failure}; {@code timedOut} means the attempt timeout ended it, {@code interrupted} that the
   * caller cancelled it. Returns {@link #RETRY},
   * {@link #STOP} or {@link #PAUSE_THEN_STOP}. Budget accounting happens here: a success deposits, a
   * retryable failure is recorded, and a retry is charged in the same step that admits it.
   */
  int afterAttempt(@Nullable Object result, @Nullable Throwable failure, boolean timedOut, boolean interrupted, long now) {
    if (timedOut) {
      failure = new AttemptTimeoutException(Duration.ofNanos(attemptTimeoutNanos));
      result = null;
    }
    lastResult = result;
    lastFailure = failure;
    lastHasValue = failure == null;

    if (interrupted || (failure != null && isCancellation(failure))) {
      lastVerdict = null;
      emitAttemptEnded(now);
      stop(StopReason.CANCELLED, now, null);
      return STOP;
    }

    Verdict verdict = classify(result, failure);
    lastVerdict = verdict;
    emitAttemptEnded(now);

    switch (verdict.kind()) {
      case OK:
        budget.deposit();
        stop(StopReason.SUCCEEDED, now, null);
        return STOP;
      case PERMANENT:
        stop(StopReason.PERMANENT, now, null);
        return STOP;
      default:
        budget.recordFailure();
    }
    if (Draining.isDraining()) {
      stop(StopReason.DRAINING, now, null); // no new attempt starts once draining has begun
      return STOP;
    }
    long deadline = deadlineNanos;
    if (now >= deadline) {
      stop(StopReason.DEADLINE_EXCEEDED, now, null);
      return STOP;
    }
    if (attempts >= policy.attempts()) {
      stop(StopReason.ATTEMPTS_EXHAUSTED, now, null);
      return STOP;
    }
    long delay = backoffNanos(verdict);
    if (delay >= deadline - now) {
      // sleeping would only carry us past the deadline: fail now instead
      stop(StopReason.DEADLINE_EXCEEDED, now, null);
      return STOP;
    }
    if (!budget.trySpend(criticality)) {
      retryAfter = budget.retryAfter().orElse(null);
      delayNanos = Math.min(REJECTION_PAUSE_NANOS, deadline - now);
      stop(StopReason.BUDGET_EXHAUSTED, now, Duration.ofNanos(delayNanos));
      return PAUSE_THEN_STOP;
    }
    delayNanos = delay;
    if (observed) {
      for (CallObserver o : observers) {
        try {
          o.retrying(policy.name(), budget, criticality, attempts, delay);
        } catch (RuntimeException | LinkageError | AssertionError ignored) {
          // an observer must never break a call
        }
      }
      if (!listeners.isEmpty()) {
        emit(ResilienceEvent.Type.RETRYING, now, Duration.ofNanos(delay), verdict, failure, null);
      }
    }
    return RETRY;
  }

  /** The caller cancelled (or interrupted) the call while it waited between attempts. */
  void cancelled(long now) {
    if (stopReason == null) {
      stop(StopReason.CANCELLED, now, null);
    }
  }

  private long backoffNanos(Verdict verdict) {
    Backoff backoff = policy.backoff();
    Duration asked = verdict.retryAfter().orElse(null);
    if (asked != null) {
      // a server's Retry-After wins over our backoff, capped by the backoff's maximum, never jittered
      return Math.min(asked.toNanos(), backoff.max().toNanos());
    }
    return Math.max(0, backoff.delay(attempts, verdict, time.random()).toNanos());
  }

  private Verdict classify(@Nullable Object result, @Nullable Throwable failure) {
    try {
      Verdict v = policy.classifier().classify(result, failure);
      return v != null ? v : Verdict.PERMANENT;
    } catch (RuntimeException | LinkageError e) {
      return Verdict.PERMANENT;
    }
  }

  static boolean isCancellation(Throwable failure) {
    return failure instanceof InterruptedException
        || failure instanceof java.util.concurrent.CancellationException
        || (failure instanceof java.io.InterruptedIOException && !(failure instanceof java.net.SocketTimeoutException))
        || failure instanceof java.nio.channels.ClosedByInterruptException;
  }

  private void stop(StopReason reason, long now, @Nullable Duration pause) {
    stopReason = reason;
    if (observed) {
      notifyCallEnded(observers, policy.name(), budget, criticality, reason, attempts, lastVerdict, now - startNanos);
      emit(terminalType(reason), now, pause, lastVerdict, lastFailure, reason);
    }
  }

  // Observer notification, shared with the first-attempt fast path. An observer must never break a call.

  static void notifyAttemptStarted(CallObserver[] observers, String policy, RetryBudget budget, Criticality criticality,
      int attempt) {
    for (CallObserver o : observers) {
      try {
        o.attemptStarted(policy, budget, criticality, attempt, false);
      } catch (RuntimeException | LinkageError | AssertionError ignored) {
        // swallowed
      }
    }
  }

  static void notifyAttemptEnded(CallObserver[] observers, String policy, RetryBudget budget, Criticality criticality,
      int attempt, @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos) {
    for (CallObserver o : observers) {
      try {
        o.attemptEnded(policy, budget, criticality, attempt, false, verdict, failure, durationNanos);
      } catch (RuntimeException | LinkageError | AssertionError ignored) {
        // swallowed
      }
    }
  }

  static void notifyCallEnded(CallObserver[] observers, String policy, RetryBudget budget, Criticality criticality,
      StopReason reason, int attempts, @Nullable Verdict verdict, long elapsedNanos) {
    for (CallObserver o : observers) {
      try {
        o.callEnded(policy, budget, criticality, reason, attempts, verdict, elapsedNanos);
      } catch (RuntimeException | LinkageError | AssertionError ignored) {
        // swallowed
      }
    }
  }

  private static ResilienceEvent.Type terminalType(StopReason reason) {
    switch (reason) {
      case SUCCEEDED: return ResilienceEvent.Type.SUCCEEDED;
      case PERMANENT: return ResilienceEvent.Type.NOT_RETRIED;
      case ATTEMPTS_EXHAUSTED: return ResilienceEvent.Type.EXHAUSTED;
      case DEADLINE_EXCEEDED: return ResilienceEvent.Type.DEADLINE_EXCEEDED;
      case BUDGET_EXHAUSTED: return ResilienceEvent.Type.REJECTED_BY_BUDGET;
      case DEPENDENCY_UNAVAILABLE: return ResilienceEvent.Type.REJECTED_BY_BREAKER;
      case LIMITED: return ResilienceEvent.Type.LIMITED;
      case DRAINING: return ResilienceEvent.Type.DRAINING;
      default: return ResilienceEvent.Type.CANCELLED;
    }
  }

  private void emitAttemptEnded(long now) {
    if (observed) {
      notifyAttemptEnded(observers, policy.name(), budget, criticality, attempts, lastVerdict, lastFailure,
          now - attemptStartNanos);
      emit(ResilienceEvent.Type.ATTEMPT_ENDED, now, null, lastVerdict, lastFailure, null);
    }
  }

  private void emit(ResilienceEvent.Type type, long now, @Nullable Duration delay, @Nullable Verdict verdict,
      @Nullable Throwable failure, @Nullable StopReason reason) {
    if (listeners.isEmpty()) {
      return;
    }
    Duration attemptDuration = type == ResilienceEvent.Type.ATTEMPT_ENDED ? Duration.ofNanos(now - attemptStartNanos) : null;
    ResilienceEvent event = new ResilienceEvent(type, policy.name(), attempts, false,
        Duration.ofNanos(Math.max(0, now - startNanos)), attemptDuration, delay, verdict, failure, reason,
        budget.isUnbounded() ? null : budget, criticality);
    for (ResilienceListener listener : listeners) {
      try {
        listener.onEvent(event);
      } catch (RuntimeException | LinkageError | AssertionError ignored) {
        // a listener must never break a call
      }
    }
  }

  /** The exception the throw style raises for this stopped call, or null when it returns a value. */
  @Nullable Throwable failureToThrow(long now) {
    StopReason reason = stopReason;
    if (reason == null) {
      throw new IllegalStateException("call has not stopped");
    }
    switch (reason) {
      case SUCCEEDED:
        return null;
      case PERMANENT:
      case ATTEMPTS_EXHAUSTED:
        return lastHasValue ? null : lastFailure;
      case DEADLINE_EXCEEDED:
        return new DeadlineExceededException(
            "deadline of " + policy.deadline().map(d -> d.toMillis() + " ms").orElse("(none)") + " exceeded after "
                + attempts + (attempts == 1 ? " attempt" : " attempts") + " in policy '" + policy.name() + "'",
            attempts, Duration.ofNanos(Math.max(0, now - startNanos)), lastFailure);
      case BUDGET_EXHAUSTED:
        return new CallRejectedException(
            "retry budget '" + budget.name() + "' refused a retry after " + attempts
                + (attempts == 1 ? " attempt" : " attempts") + " in policy '" + policy.name() + "'",
            reason, attempts, retryAfter, lastFailure);
      case CANCELLED:
        if (lastFailure != null && isCancellation(lastFailure)) {
          return lastFailure;
        }
        InterruptedException interrupted = new InterruptedException("call cancelled in policy '" + policy.name() + "'");
        if (lastFailure != null) {
          interrupted.initCause(lastFailure);
        }
        return interrupted;
      default:
        return new CallRejectedException(reason + " in policy '" + policy.name() + "'", reason, attempts, retryAfter, lastFailure);
    }
  }

  <T> Outcome<T> toOutcome(long now) {
    Throwable failure = failureToThrow(now);
    @SuppressWarnings("unchecked")
    T value = failure == null && lastHasValue ? (T) lastResult : null;
    Duration hint = retryAfter;
    if (hint == null && lastVerdict != null) {
      hint = lastVerdict.retryAfter().orElse(null);
    }
    return new Outcome<>(value, failure == null && lastHasValue, failure, stopReasonOrFail(), attempts,
        Duration.ofNanos(Math.max(0, now - startNanos)), hint);
  }

  private StopReason stopReasonOrFail() {
    StopReason reason = stopReason;
    if (reason == null) {
      throw new IllegalStateException("call has not stopped");
    }
    return reason;
  }

  static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }
}
