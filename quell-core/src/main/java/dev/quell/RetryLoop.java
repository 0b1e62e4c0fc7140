package dev.quell;

import dev.quell.internal.InPlaceWork;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The rest of a call whose first attempt a fast lane ran and that did not come back OK, while only
 * the caller's thread can reach the call: nothing observes it, it does not hedge, the clock is real
 * and no gate makes an attempt wait. Both drivers' lanes hand over here: the synchronous lanes
 * (the plainest, and the timed lane without observers), whose attempts are the caller's
 * {@link Callable}, and the asynchronous first-attempt lane ({@code AsyncExecution.firstInPlace}),
 * whose attempts are the work's stages, each carried on only while it answers inside
 * {@code start}. The call goes on here, its state in locals, each step decided by the core's own
 * functions ({@link Decide}) in the order {@link Call} takes them: judge the attempt, give back its
 * gates, account it, decide, draw the wait, ask the gates for the retry, run it. Each attempt is
 * timed, and is its nested calls' frame, by the thread's fast watchdog slot. The loop allocates
 * nothing unless the call ends with Quell's own exception (an attempt's timeout builds its
 * exception too); an asynchronous attempt also gets its {@link Attempt}, and a stage unless its
 * work answers in place without one ({@link InPlaceWork}).
 *
 * <p>What the loop does not carry itself, it hands to a call of its own, which goes on from there
 * as the core goes on from any such point: a retry that must wait first ({@link Call#resumeWaiting}:
 * waits are the core's, which a drain's grace cuts short); and for the asynchronous driver, a retry
 * whose stage is still running when the work returns it ({@link Call#adoptRetry}), and every end
 * but a value ({@link Call#resumeStopped}: the caller's future is then the call's own, completed as
 * any call's is).
 *
 * <p>{@code r} is this thread's fast record, held by the lane that calls ({@link Ambient#holdFastRecord}),
 * with the first attempt's gates in it; the gates keep nothing of it, so each retry reuses it, and
 * a call that takes over copies what it needs. User code the loop runs between attempts (the
 * classifier, the backoff, the discard hook) finds it held: a call it makes gets a record of its own.
 */
final class RetryLoop {
  private RetryLoop() {}

  /** The synchronous lanes' rest of a call: returns its value or throws, as {@code execute} does. */
  @SuppressWarnings("unchecked") // the value of the caller's own Callable<T>
  static <T> @Nullable T sync(Resilience policy, Callable<T> callable, Ambient ambient, long start, long firstEnd,
      long timeout, AttemptRecord r, @Nullable Object result, @Nullable Throwable failure, boolean timedOut,
      @Nullable Verdict known) throws Exception {
    return (T) loop(policy, callable, null, false, ambient, start, firstEnd, timeout, r, result, failure, timedOut,
        known, null);
  }

  /**
   * The asynchronous first-attempt lane's rest of a call, from a first attempt that answered inside
   * {@code start} (through {@code stage}) and was not OK: the caller's future.
   */
  static CompletableFuture<?> async(Resilience policy, Resilience.AsyncWork<?> work, boolean outcomeStyle,
      Ambient ambient, long start, long firstEnd, long timeout, AttemptRecord r, @Nullable Object result,
      @Nullable Throwable failure, boolean timedOut, @Nullable Verdict known, CompletableFuture<?> stage) {
    try {
      return Objects.requireNonNull((CompletableFuture<?>) loop(policy, null, work, outcomeStyle, ambient, start,
          firstEnd, timeout, r, result, failure, timedOut, known, stage));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new AssertionError("the asynchronous loop throws no checked exception", e);
    }
  }

  /**
   * The loop; exactly one of {@code callable} and {@code work} is set. For {@code work}, returns the
   * caller's future; for {@code callable}, the value (or throws the call's exception).
   */
  private static @Nullable Object loop(Resilience policy, @Nullable Callable<?> callable,
      Resilience.@Nullable AsyncWork<?> work, boolean outcomeStyle, Ambient ambient, long start, long firstEnd,
      long timeout, AttemptRecord r, @Nullable Object result, @Nullable Throwable failure, boolean timedOut,
      @Nullable Verdict known, @Nullable CompletableFuture<?> firstStage) throws Exception {
    Gate[] gates = policy.gates;
    int budgetGate = policy.budgetGateIndex;
    RetryBudget budget = policy.budget();
    long deadline = policy.deadlineNanos;
    int attempts = 1;
    long attemptStart = start;
    long attemptTimeout = timeout;
    Object kept = null; // the last attempt's value, until a later one supersedes it
    boolean keptValue = false;
    Verdict verdict = known;
    long now = firstEnd;
    boolean read = true; // whether now is this attempt's end, read from the clock
    CompletableFuture<?> stage = firstStage; // the asynchronous attempt's stage, answered
    while (true) {
      if (timedOut) {
        failure = new AttemptTimeoutException(Duration.ofNanos(attemptTimeout));
        result = null;
      }
      if (keptValue && kept != null && kept != result) {
        policy.discardUnseen(kept); // superseded by this attempt: nobody will see it
      }
      kept = result;
      keptValue = failure == null;
      if (!timedOut && failure != null
          && (work == null ? SyncExecution.isCancelled(failure) : Call.isCancellation(failure, false))) {
        now = read ? now : System.nanoTime();
        Decide.release(gates, budgetGate, r, Gate.CANCELLED, now);
        return end(policy, work, outcomeStyle, StopReason.CANCELLED, start, now, attempts, result, failure, null,
            -1, 0, stage);
      }
      if (verdict == null) {
        verdict = Call.classify(policy.classifier(), result, failure);
      }
      Verdict.Kind kind = verdict.kind();
      if (!read) {
        // as in the timed lane, a success that nothing measures is released at its start: no clock
        // read (an asynchronous call measures its outcome's elapsed time)
        now = kind == Verdict.Kind.OK && !policy.fastEndTime && !outcomeStyle ? attemptStart : System.nanoTime();
        read = true;
      }
      Decide.release(gates, budgetGate, r, Decide.howEnded(kind, timedOut), now);
      Decide.accounted(policy, budget, kind, now - attemptStart, now);
      long left = Decide.remaining(deadline, start, now);
      long plan = Decide.afterAttempt(kind, false, Draining.isDraining(), left, attempts, policy.attempts(), false);
      if (!Decide.stops(plan)) {
        plan = Decide.afterWait(Decide.backoffNanos(policy.backoff(), policy.backoffMaxNanos, attempts, verdict,
            policy.timeSource().random(), policy), left);
      }
      if (Decide.stops(plan)) {
        return end(policy, work, outcomeStyle, Decide.reason(plan), start, now, attempts, result, failure, verdict,
            -1, 0, stage);
      }
      r.reset(0, AttemptRecord.RETRY, Criticality.CRITICAL, now, policy.markSlots);
      r.timeoutNanos = left;
      if (plan > 0 && !budget.wouldFundAt(Criticality.CRITICAL, now, SystemTime.INSTANCE)) {
        // known before the wait: the first gate in order that refuses is the one reported (with no
        // wait, the admission below asks the same gates in the same order at the same instant)
        int refusedBy = Decide.walk(gates, budgetGate, r, 0, Decide.WALK_PROBE, now);
        Decide.release(gates, budgetGate, r, Gate.NOT_STARTED, now);
        if (refusedBy != Decide.ADMITTED) {
          StopReason reason = gates[refusedBy].refusal();
          return end(policy, work, outcomeStyle, reason, start, now, attempts, result, failure, verdict,
              r.retryAfterNanos, Decide.refusalPause(reason, left), stage);
        }
        r.reset(0, AttemptRecord.RETRY, Criticality.CRITICAL, now, policy.markSlots);
        r.timeoutNanos = left;
      }
      if (plan > 0) {
        return waitInCall(policy, callable, work, outcomeStyle, ambient, start, attempts, result, failure, verdict,
            plan);
      }
      // admitted now, as after any wait: the gates in order, the budget last
      StopReason cannot = Decide.mayStart(Draining.isDraining(), left);
      if (cannot != null) {
        return end(policy, work, outcomeStyle, cannot, start, now, attempts, result, failure, verdict, -1, 0, stage);
      }
      int refusedBy = Decide.walk(gates, budgetGate, r, 0, Decide.WALK_ADMIT, now);
      if (refusedBy != Decide.ADMITTED) {
        Decide.release(gates, budgetGate, r, Gate.NOT_STARTED, now);
        StopReason reason = gates[refusedBy].refusal();
        return end(policy, work, outcomeStyle, reason, start, now, attempts, result, failure, verdict,
            r.retryAfterNanos, Decide.refusalPause(reason, left), stage);
      }
      attempts++;
      r.number = attempts;
      attemptStart = now;
      attemptTimeout = Decide.attemptTimeout(policy.attemptCeilingNanos(now), left);
      Watchdog.Slot slot = ambient.armFast(attemptTimeout, true);
      if (callable != null) {
        result = null;
        failure = null;
        try {
          result = callable.call();
        } catch (Throwable t) {
          failure = t;
        }
      } else {
        Resilience.AsyncWork<?> w = Objects.requireNonNull(work);
        CompletionStage<?> origin;
        try {
          origin = AsyncExecution.begun(w,
              new Attempt(attempts, attemptTimeout, left, false, Criticality.CRITICAL));
          stage = AsyncExecution.futureOf(origin);
        } catch (Error e) {
          slot.disarm();
          throw e;
        }
        boolean inPlace = origin == InPlaceWork.ANSWERED;
        if (!inPlace && !stage.isDone()) {
          slot.disarm(); // still running: its call times it from here, and hears its end
          return AsyncExecution.adoptRetry(policy, w, outcomeStyle, start, attempts - 1, result, failure, verdict,
              attemptStart, attemptTimeout, r.admitted, stage, origin);
        }
        failure = inPlace ? AsyncExecution.answerFailure(w)
            : stage.isCompletedExceptionally() ? AsyncExecution.failureOf(origin) : null;
        // (a stage completed normally: getNow throws nothing)
        result = failure != null ? null : inPlace ? ((InPlaceWork) w).answerValue() : stage.getNow(null);
      }
      timedOut = slot.disarm() && failure != null;
      verdict = null;
      read = false;
    }
  }

  /**
   * The call carried by the loop ends. Synchronously: the guarded pause, then its value or its
   * exception ({@link Decide#failure}). Asynchronously: a value is the caller's future at once
   * ({@link AsyncExecution#answered}); any other end is a call's of its own.
   */
  private static @Nullable Object end(Resilience policy, Resilience.@Nullable AsyncWork<?> work,
      boolean outcomeStyle, StopReason reason, long start, long end, int attempts, @Nullable Object result,
      @Nullable Throwable failure, @Nullable Verdict verdict, long gateRetryAfter, long pause,
      @Nullable CompletableFuture<?> stage) throws Exception {
    if (work != null) {
      if (reason == StopReason.SUCCEEDED && stage != null && verdict != null) {
        return AsyncExecution.answered(policy, work, outcomeStyle, stage, result, verdict, attempts, end - start);
      }
      return AsyncExecution.stopped(policy, work, outcomeStyle, start, attempts, result, failure, verdict, reason,
          end, gateRetryAfter, pause);
    }
    boolean interrupted = false;
    if (pause > 0) {
      try {
        SystemTime.INSTANCE.sleep(pause);
      } catch (InterruptedException e) {
        interrupted = true; // the pause is cut short, and the flag kept
      }
    }
    Throwable thrown = Decide.failure(reason, policy, policy.budget(), attempts, policy.deadlineNanos, end - start,
        failure == null, failure, verdict, gateRetryAfter, true);
    if (interrupted || reason == StopReason.CANCELLED) {
      Thread.currentThread().interrupt(); // interrupts stop the call and keep the flag
    }
    if (thrown == null) {
      return result;
    }
    return SyncExecution.rethrow(thrown);
  }

  /** A call carried by the loop must wait before its next retry: the core takes it over, waits and goes on. */
  private static @Nullable Object waitInCall(Resilience policy, @Nullable Callable<?> callable,
      Resilience.@Nullable AsyncWork<?> work, boolean outcomeStyle, Ambient ambient, long start, int attempts,
      @Nullable Object result, @Nullable Throwable failure, Verdict verdict, long delay) throws Exception {
    if (work != null) {
      return AsyncExecution.waiting(policy, work, outcomeStyle, start, attempts, result, failure, verdict, delay);
    }
    return SyncExecution.waitInCall(policy, Objects.requireNonNull(callable), ambient, start, attempts, result,
        failure, verdict, delay);
  }
}
