package dev.quell;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The asynchronous driver: carries out the core's plans without blocking. It starts each attempt's
 * work, arms its timeout and the core's wake-ups on the time source, cancels the futures of
 * attempts the core gives up on, and completes the caller's future when the core says the call is
 * over (after the guarded pause, if any); it decides nothing.
 *
 * <p>Each attempt is settled exactly once, by its own completion or by its timeout, whichever wins
 * a CAS; the loser does nothing. The caller's future is Quell's own subclass, so that cancelling
 * it, or completing it from outside ({@code complete}, {@code orTimeout}), is an input to the core
 * — the call stops, its attempt is cancelled, nothing more is charged — and {@code cancel} returns
 * true only when the call did end cancelled.
 *
 * <p>On the real clock, timers fire on one shared thread; the work they lead to (a retry after its
 * backoff, the next attempt after a timeout) is handed to the common fork-join pool, so user code
 * never runs on, and never stalls, the timer thread. On a virtual clock everything runs inline, so
 * tests and the simulator stay deterministic.
 */
final class AsyncExecution<T> implements Call.Driver {
  private static final Executor OFF_TIMER = ForkJoinPool.commonPool();

  final Call call = new Call();
  private final Resilience.AsyncWork<T> work;
  private final ResilienceContext outer;
  private final boolean retries;
  private final TimeSource time;
  private final boolean realClock;
  /** The future the caller holds: the value style, or the outcome style. */
  private final @Nullable Result<T> result;
  private final @Nullable Result<Outcome<T>> outcome;
  /** The caller cancelled the future: if the call ends cancelled, the future ends cancelled. */
  private volatile boolean callerCancelled;
  /** The caller completed the future itself: if the call ends cancelled, the caller's value stands. */
  private volatile boolean callerCompleted;
  private volatile TimeSource.@Nullable Scheduled pauseTimer;
  private final AtomicInteger delivered = new AtomicInteger();

  private AsyncExecution(Resilience policy, Resilience.AsyncWork<T> work, boolean outcomeStyle) {
    this.work = work;
    this.time = policy.timeSource();
    this.realClock = time == SystemTime.INSTANCE;
    this.retries = policy.attempts() > 1;
    Ambient ambient = Ambient.get();
    ResilienceContext context = ambient.context();
    this.outer = context == null ? ResilienceContext.EMPTY : context;
    this.result = outcomeStyle ? null : new Result<>(this);
    this.outcome = outcomeStyle ? new Result<>(this) : null;
    call.init(policy, time.nanoTime(), context, this);
    call.start(ambient.insideRetryingCall());
  }

  static <T> CompletableFuture<T> execute(Resilience policy, Resilience.AsyncWork<T> work) {
    AsyncExecution<T> execution = new AsyncExecution<>(policy, work, false);
    return java.util.Objects.requireNonNull(execution.result);
  }

  static <T> CompletableFuture<Outcome<T>> run(Resilience policy, Resilience.AsyncWork<T> work) {
    AsyncExecution<T> execution = new AsyncExecution<>(policy, work, true);
    return java.util.Objects.requireNonNull(execution.outcome);
  }

  // ---------------------------------------------------------------- Call.Driver

  @Override
  public void start(Call c, AttemptRecord attempt) {
    if (realClock && SystemTime.onTimerThread()) {
      OFF_TIMER.execute(() -> startNow(c, attempt)); // user work never runs on the shared timer thread
    } else {
      startNow(c, attempt);
    }
  }

  private void startNow(Call c, AttemptRecord attempt) {
    if (!c.begin(attempt)) {
      return; // the call ended since this start was planned
    }
    Running running = new Running(attempt);
    attempt.handle = running;
    long start = attempt.startNanos;
    long timeout = attempt.timeoutNanos;
    // arm the timeout before the work starts, as the sync driver does, so that an answer arriving
    // exactly at the timeout is judged the same way by both drivers
    if (timeout != Long.MAX_VALUE) {
      try {
        running.timer = time.schedule(() -> onTimer(() -> timedOut(running)), timeout);
      } catch (RuntimeException | Error e) {
        c.attemptEnded(attempt, null, e, false, false); // a clock that cannot schedule: this attempt fails
        return;
      }
    }
    ResilienceContext context = timeout == Long.MAX_VALUE ? outer : outer.withDeadlineAt(start + timeout, time);
    CompletableFuture<T> stage;
    try (ResilienceContext.Scope scope = context.openAttempt(retries)) {
      CompletionStage<T> started = work.start(new Attempt(attempt.number, timeout, c.remaining(start),
          attempt.kind == AttemptRecord.HEDGE, c.criticality));
      stage = started == null
          ? CompletableFuture.failedFuture(new NullPointerException("async work returned a null stage"))
          : started.toCompletableFuture();
    } catch (Throwable t) {
      stage = CompletableFuture.failedFuture(t);
    }
    running.stage = stage;
    if (running.state.get() != Running.OPEN) {
      stage.cancel(true); // timed out or cancelled while it was starting
    }
    stage.whenComplete((value, failure) -> completed(running, value, failure));
  }

  @Override
  public void cancel(Call c, AttemptRecord attempt) {
    Object handle = attempt.handle;
    if (handle instanceof Running) {
      Running running = (Running) handle;
      if (running.settle()) {
        // the core has already ended the attempt; stop its work
        running.stopTimer();
        CompletableFuture<?> stage = running.stage;
        if (stage != null) {
          stage.cancel(true);
        }
      }
    }
  }

  @Override
  public void wakeAfter(Call c, long delayNanos, int token) {
    time.schedule(() -> onTimer(() -> c.wake(token)), delayNanos);
  }

  @Override
  public void wakeWhileRunning(Call c, long delayNanos, int token) {
    wakeAfter(c, delayNanos, token);
  }

  @Override
  public void finish(Call c, long pauseNanos) {
    if (pauseNanos > 0) {
      pauseTimer = time.schedule(() -> onTimer(this::complete), pauseNanos);
      if (callerCancelled) {
        cutPauseShort(); // cancelled while the pause was being armed
      }
    } else if (realClock && SystemTime.onTimerThread()) {
      OFF_TIMER.execute(this::complete); // the caller's dependents never run on the shared timer thread
    } else {
      complete();
    }
  }

  /** Runs a timer's consequence off the shared timer thread on the real clock, inline otherwise. */
  private void onTimer(Runnable task) {
    if (realClock) {
      OFF_TIMER.execute(task);
    } else {
      task.run();
    }
  }

  // ---------------------------------------------------------------- attempts ending

  private void completed(Running running, @Nullable T value, @Nullable Throwable failure) {
    if (!running.settle()) {
      if (failure == null) {
        call.discard(value); // the timeout or the core got there first: nobody will see this value
      }
      return;
    }
    running.stopTimer();
    Throwable cause = unwrap(failure);
    boolean cancelled = cause != null && Call.isCancellation(cause, false);
    call.attemptEnded(running.attempt, value, cause, false, cancelled);
  }

  private void timedOut(Running running) {
    if (!running.settle()) {
      return;
    }
    CompletableFuture<?> abandoned = running.stage;
    if (abandoned != null) {
      abandoned.cancel(true);
    }
    call.attemptEnded(running.attempt, null, null, true, false);
  }

  // ---------------------------------------------------------------- the caller's future

  /** Completes the caller's future with the call's outcome, once. */
  @SuppressWarnings("unchecked")
  private void complete() {
    if (!delivered.compareAndSet(0, 1)) {
      return;
    }
    call.finishedNanos = time.nanoTime();
    Result<?> future = result != null ? result : outcome;
    if (call.stopReason == StopReason.CANCELLED && future != null) {
      if (callerCompleted) {
        return; // the caller completed the future itself; its value stands
      }
      if (callerCancelled) {
        future.cancelInternally();
        return;
      }
    }
    Result<Outcome<T>> o = outcome;
    if (o != null) {
      o.completeInternally(call.toOutcome());
      return;
    }
    Result<T> r = result;
    if (r != null) {
      Throwable failure = call.failureToThrow();
      if (failure == null) {
        r.completeInternally((T) call.lastResult);
      } else {
        r.failInternally(failure);
      }
    }
  }

  /** The caller cancelled or interrupted a call whose outcome is fixed: stop serving the pause. */
  private void cutPauseShort() {
    TimeSource.Scheduled t = pauseTimer;
    if (t != null && t.cancel()) {
      complete();
    }
  }

  /** Cancel from the caller: true only if the call ended cancelled because of it. */
  private boolean callerCancels() {
    callerCancelled = true;
    if (call.cancel()) {
      return true;
    }
    cutPauseShort(); // the call had already ended: it may still be serving its guarded pause
    return false;
  }

  /** The caller completes the future itself: the call stops, cancelled, and the caller's value stands. */
  private void callerCompletes() {
    callerCompleted = true;
    call.cancel();
  }

  private static @Nullable Throwable unwrap(@Nullable Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** One running attempt: its future, its timer, and who settled it. */
  private static final class Running {
    static final int OPEN = 0;
    static final int SETTLED = 1;

    final AttemptRecord attempt;
    final AtomicInteger state = new AtomicInteger(OPEN);
    volatile @Nullable CompletableFuture<?> stage;
    volatile TimeSource.@Nullable Scheduled timer;

    Running(AttemptRecord attempt) {
      this.attempt = attempt;
    }

    boolean settle() {
      return state.compareAndSet(OPEN, SETTLED);
    }

    void stopTimer() {
      TimeSource.Scheduled t = timer;
      if (t != null) {
        t.cancel();
      }
    }
  }

  /**
   * The future the caller holds. Cancelling it or completing it from outside goes through the core;
   * Quell's own completion goes around these overrides. Dependent stages are plain futures.
   */
  static final class Result<V> extends CompletableFuture<V> {
    private final AsyncExecution<?> execution;

    Result(AsyncExecution<?> execution) {
      this.execution = execution;
    }

    void completeInternally(V value) {
      super.complete(value);
    }

    void failInternally(Throwable failure) {
      super.completeExceptionally(failure);
    }

    void cancelInternally() {
      super.cancel(true);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (isDone()) {
        return false;
      }
      if (!execution.callerCancels()) {
        return false; // the call had already ended: its outcome stands
      }
      super.cancel(mayInterruptIfRunning); // (the core may have cancelled it already)
      return true;
    }

    @Override
    public boolean complete(V value) {
      if (isDone()) {
        return false;
      }
      execution.callerCompletes();
      return super.complete(value);
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
      if (isDone()) {
        return false;
      }
      execution.callerCompletes();
      return super.completeExceptionally(ex);
    }

    @Override
    public void obtrudeValue(V value) {
      execution.callerCompletes();
      super.obtrudeValue(value);
    }

    @Override
    public void obtrudeException(Throwable ex) {
      execution.callerCompletes();
      super.obtrudeException(ex);
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
      return new CompletableFuture<>();
    }
  }
}
