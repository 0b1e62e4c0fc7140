package dev.quell;

import dev.quell.internal.CallObserver;
import dev.quell.internal.SystemTime;
import dev.quell.internal.Watchdog;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;

/**
 * The synchronous driver: runs attempts on the caller's thread, sleeps between them on the time
 * source, and asks {@link Call} what to do after each.
 *
 * <p>The first attempt of a plain {@code execute} on the real clock takes a fast path that reads
 * no clock and allocates nothing when it succeeds: the watchdog slot times the attempt, and only if
 * the attempt does not come back {@code OK} is a {@link Call} created, with the watchdog's sighting
 * of the attempt as its start time. From there the core decides as for any other attempt.
 */
final class SyncExecution {
  private SyncExecution() {}

  static <T> @Nullable T execute(Resilience policy, @Nullable Callable<T> callable, Resilience.@Nullable Work<T> work)
      throws Exception {
    Ambient ambient = Ambient.get();
    if (callable != null && !ambient.inFastAttempt() && !Draining.isDraining()) {
      if (policy.unobservedOnRealClock && ambient.depth() == 0) {
        // The plainest case, kept small so that it inlines: no listener, no observer, real clock,
        // no ambient context. The armed slot times the attempt and is its frame; no clock is read.
        // It repeats the attempt block of fastExecute on purpose: folding the two together made the
        // method too big to inline and cost the success path ~2 ns (RetryOverheadBenchmark).
        Watchdog.Slot slot = ambient.armFast(policy.firstAttemptTimeoutNanos, policy.attempts() > 1);
        T result = null;
        Throwable failure = null;
        try {
          result = callable.call();
        } catch (Throwable t) {
          failure = t;
        }
        // a value that arrives is used even if the timeout fired as it came back
        boolean timedOut = slot.disarm() && failure != null;
        if (failure == null && !timedOut && isOk(policy.classifier(), result)) {
          policy.budget().deposit(); // the core's decision for an OK verdict: credit and stop
          return result;
        }
        return afterFailedFastAttempt(policy, callable, ambient, null, slot, Long.MIN_VALUE,
            policy.firstAttemptTimeoutNanos, result, failure, timedOut);
      }
      if (policy.eventListeners.isEmpty() && policy.timeSource() == SystemTime.INSTANCE) {
        return fastExecute(policy, callable, ambient);
      }
    }
    ResilienceContext outer = ambient.context();
    Call call = start(policy, ambient, outer);
    drive(call, callable, work, Call.RETRY, true, ambient, outer);
    return finish(call);
  }

  static <T> Outcome<T> run(Resilience policy, @Nullable Callable<T> callable, Resilience.@Nullable Work<T> work) {
    Ambient ambient = Ambient.get();
    ResilienceContext outer = ambient.context();
    Call call = start(policy, ambient, outer);
    drive(call, callable, work, Call.RETRY, true, ambient, outer);
    if (call.stopReason == StopReason.CANCELLED) {
      Thread.currentThread().interrupt(); // interrupts stop the call and keep the flag, in both styles
    }
    return call.toOutcome(call.time.nanoTime());
  }

  private static Call start(Resilience policy, Ambient ambient, @Nullable ResilienceContext outer) {
    long now = policy.timeSource().nanoTime();
    Call call = new Call(policy, now, outer);
    if (ambient.insideRetryingCall()) {
      call.nestedInsideRetryingCall(now);
    }
    return call;
  }

  private static <T> @Nullable T fastExecute(Resilience policy, Callable<T> callable, Ambient ambient) throws Exception {
    // Only an explicitly opened context can be outside us here: the fast path is never nested in another.
    ResilienceContext outer = ambient.depth() == 0 ? null : ambient.context();
    long timeout = policy.firstAttemptTimeoutNanos;
    long knownStart = Long.MIN_VALUE;
    if (outer != null && policy.useAmbientDeadline() && outer.hasDeadline()) {
      knownStart = System.nanoTime(); // an ambient deadline is measured from now: one clock read
      long left = outer.deadlineOn(policy.timeSource(), knownStart) - knownStart;
      if (left <= 0) {
        Call call = start(policy, ambient, outer); // the core ends it: DEADLINE_EXCEEDED, no attempt
        drive(call, callable, null, Call.RETRY, true, ambient, outer);
        return finish(call);
      }
      timeout = Math.min(timeout, left);
    }
    CallObserver[] observers = policy.observers;
    boolean observed = observers.length > 0;
    Criticality criticality = outer != null && policy.useAmbientCriticality() ? outer.criticality() : Criticality.CRITICAL;
    long observedStart = 0;
    if (observed) {
      observedStart = System.nanoTime(); // durations are what observers are for
      Call.notifyAttemptStarted(observers, policy.name(), policy.budget(), criticality, 1);
    }
    // The armed slot times the attempt and is its frame for nested calls; no clock read here.
    Watchdog.Slot slot = ambient.armFast(timeout, policy.attempts() > 1);
    T result = null;
    Throwable failure = null;
    try {
      result = callable.call();
    } catch (Throwable t) {
      failure = t;
    }
    // a value that arrives is used even if the timeout fired as it came back
    boolean timedOut = slot.disarm() && failure != null;
    if (failure == null && !timedOut && isOk(policy.classifier(), result)) {
      policy.budget().deposit(); // the core's decision for an OK verdict: credit and stop
      if (observed) {
        long took = System.nanoTime() - observedStart;
        Call.notifyAttemptEnded(observers, policy.name(), policy.budget(), criticality, 1, Verdict.OK, null, took);
        Call.notifyCallEnded(observers, policy.name(), policy.budget(), criticality, StopReason.SUCCEEDED, 1,
            Verdict.OK, took);
      }
      return result;
    }
    return afterFailedFastAttempt(policy, callable, ambient, outer, slot, observed ? observedStart : knownStart, timeout,
        result, failure, timedOut);
  }

  /** Hands a first attempt that did not come back OK to the core, which decides from there. */
  private static <T> @Nullable T afterFailedFastAttempt(Resilience policy, Callable<T> callable, Ambient ambient,
      @Nullable ResilienceContext outer, Watchdog.Slot slot, long knownStart, long timeout, @Nullable Object result,
      @Nullable Throwable failure, boolean timedOut) throws Exception {
    long now = System.nanoTime();
    long start = knownStart != Long.MIN_VALUE ? knownStart : slot.startEstimate(now);
    Call call = new Call(policy, start, outer);
    call.adoptFirstAttempt(start, timeout);
    int action = call.afterAttempt(result, failure, timedOut, interruptedBy(failure, timedOut), now);
    drive(call, callable, null, action, false, ambient, outer);
    return finish(call);
  }

  private static boolean isOk(Classifier classifier, @Nullable Object result) {
    try {
      return classifier.classify(result, null).kind() == Verdict.Kind.OK;
    } catch (RuntimeException e) {
      return false; // the core will classify again and call it permanent
    }
  }

  /**
   * Drives the call until it stops. {@code action} is the core's last decision; {@code first} means no
   * attempt has run yet.
   */
  private static void drive(Call call, @Nullable Callable<?> callable, Resilience.@Nullable Work<?> work, int action,
      boolean first, Ambient ambient, @Nullable ResilienceContext outer) {
    Criticality published = outer != null && outer.hasCriticality() ? outer.criticality() : null;
    TimeSource time = call.time;
    boolean system = time == SystemTime.INSTANCE;
    while (true) {
      if (action == Call.STOP) {
        return;
      }
      if (action == Call.PAUSE_THEN_STOP) {
        try {
          time.sleep(call.delayNanos); // the guarded rejection pause, cut short by an interrupt
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return;
      }
      if (!first) {
        try {
          time.sleep(call.delayNanos);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          call.cancelled(time.nanoTime());
          return;
        }
      }
      first = false;
      long start = time.nanoTime();
      long timeout = call.beginAttempt(start);
      if (timeout == 0) {
        return;
      }
      Ambient.Frame frame = ambient.push();
      frame.time = time;
      frame.deadlineNanos = timeout == Long.MAX_VALUE ? Long.MAX_VALUE : Call.saturatedAdd(start, timeout);
      frame.criticality = published;
      frame.retries = call.policy.attempts() > 1;
      AttemptTimer timer = timeout == Long.MAX_VALUE ? null
          : system ? new WatchdogTimer(frame.slot().arm(timeout)) : new ScheduledInterrupt(time, timeout);
      Object result = null;
      Throwable failure = null;
      try {
        result = callable != null ? callable.call()
            : Objects.requireNonNull(work, "work").call(new Attempt(call.attempts, timeout, call.remainingNanos(start), false, call.criticality));
      } catch (Throwable t) {
        failure = t;
      }
      boolean timedOut = timer != null && timer.disarm() && failure != null;
      ambient.pop(frame);
      action = call.afterAttempt(result, failure, timedOut, interruptedBy(failure, timedOut), time.nanoTime());
    }
  }

  /** An attempt that failed while the caller's thread carries an interrupt was cancelled, not failed. */
  private static boolean interruptedBy(@Nullable Throwable failure, boolean timedOut) {
    return failure != null && !timedOut && Thread.currentThread().isInterrupted();
  }

  @SuppressWarnings("unchecked")
  private static <T> @Nullable T finish(Call call) throws Exception {
    Throwable failure = call.failureToThrow(call.time.nanoTime());
    if (failure == null) {
      return (T) call.lastResult;
    }
    if (call.stopReason == StopReason.CANCELLED) {
      Thread.currentThread().interrupt(); // interrupts stop the call and keep the flag
    }
    if (failure instanceof Error) {
      throw (Error) failure;
    }
    if (failure instanceof Exception) {
      throw (Exception) failure;
    }
    throw new ResilienceException("attempt failed", failure);
  }

  /** Ends a blocked attempt when its timeout passes. */
  private interface AttemptTimer {
    /** Stops timing; true if the timeout fired (its interrupt has been cleared). */
    boolean disarm();
  }

  private static final class WatchdogTimer implements AttemptTimer {
    private final Watchdog.Slot slot;

    WatchdogTimer(Watchdog.Slot slot) {
      this.slot = slot;
    }

    @Override
    public boolean disarm() {
      return slot.disarm();
    }
  }

  /** For time sources other than the real clock: a scheduled task interrupts the owner. */
  private static final class ScheduledInterrupt implements AttemptTimer, Runnable {
    private final Thread owner = Thread.currentThread();
    private final TimeSource.Scheduled scheduled;
    private volatile boolean fired;

    ScheduledInterrupt(TimeSource time, long timeoutNanos) {
      this.scheduled = time.schedule(this, timeoutNanos);
    }

    @Override
    public void run() {
      owner.interrupt();
      fired = true;
    }

    @Override
    public boolean disarm() {
      if (scheduled.cancel()) {
        return false;
      }
      while (!fired) {
        Thread.onSpinWait(); // cancel failed: the task is running or ran; wait for its interrupt to land
      }
      Thread.interrupted();
      return true;
    }
  }
}
