package dev.quell;

import dev.quell.internal.DirectStage;
import dev.quell.internal.InPlaceWork;
import dev.quell.internal.OutcomeReceiver;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import org.jspecify.annotations.Nullable;

/**
 * The asynchronous driver: carries out the core's plans without blocking. It starts each attempt's
 * work, arms its timeout and the core's wake-ups on the time source, cancels the futures of
 * attempts the core gives up on, and completes the caller's future when the core says the call is
 * over (after the guarded pause, if any); it decides nothing. It is the call's own object (a
 * {@link Call} subclass), so an asynchronous call is one object plus its attempts' records.
 *
 * <p>Each attempt is settled exactly once, by its own completion or by its timeout, whichever wins
 * a CAS; the loser does nothing (a value that still arrives goes to the discard hook). The caller's
 * future is Quell's own subclass, so that cancelling it, or completing it from outside
 * ({@code complete}, {@code orTimeout}), is an input to the core — the call stops, its attempt is
 * cancelled, nothing more is charged — and {@code cancel} returns true only when the call did end
 * cancelled.
 *
 * <p>On the real clock, timers fire on one shared thread; the work they lead to (a retry after its
 * backoff, the next attempt after a timeout) is handed to the common fork-join pool, so user code
 * never runs on, and never stalls, the timer thread. On a virtual clock everything runs inline, so
 * tests and the simulator stay deterministic.
 */
final class AsyncExecution<T> extends Call implements Call.Driver, AttemptRecord.AsyncTarget {
  private static final Executor OFF_TIMER = ForkJoinPool.commonPool();
  private static final VarHandle DELIVERED;

  static {
    try {
      DELIVERED = MethodHandles.lookup().findVarHandle(AsyncExecution.class, "delivered", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Resilience.AsyncWork<T> work;
  private final boolean retries;
  private final boolean realClock;
  /** The future the caller holds: the value style, or the outcome style. */
  private final @Nullable Result<T> result;
  private final @Nullable Result<Outcome<T>> outcome;
  /** The caller cancelled the future: if the call ends cancelled, the future ends cancelled. */
  private volatile boolean callerCancelled;
  /** The caller completed the future itself: if the call ends cancelled, the caller's value stands. */
  private volatile boolean callerCompleted;
  private volatile TimeSource.@Nullable Scheduled pauseTimer;
  private volatile int delivered;

  private AsyncExecution(Resilience policy, Resilience.AsyncWork<T> work, boolean outcomeStyle) {
    this.work = work;
    TimeSource clock = policy.timeSource();
    this.realClock = clock == SystemTime.INSTANCE;
    this.retries = policy.attempts() > 1;
    Ambient ambient = ambientHere();
    ResilienceContext context = ambient.context();
    this.result = outcomeStyle ? null : new Result<>(this);
    this.outcome = outcomeStyle ? new Result<>(this) : null;
    init(policy, clock.nanoTime(), context, this);
    start(ambient.insideRetryingCall());
  }

  /** The call of attempts that {@link #firstInPlace} (or the loop it hands over to) started before the call existed. */
  private AsyncExecution(Resilience policy, Resilience.AsyncWork<T> work, boolean outcomeStyle, long start) {
    this.work = work;
    this.realClock = true;
    this.retries = policy.attempts() > 1;
    this.result = outcomeStyle ? null : new Result<>(this);
    this.outcome = outcomeStyle ? new Result<>(this) : null;
    init(policy, start, null, this);
  }

  @SuppressWarnings("unchecked") // the lane completes the value style's future with the work's own value
  static <T> CompletableFuture<T> execute(Resilience policy, Resilience.AsyncWork<T> work) {
    if (policy.unobservedOnRealClock) {
      Ambient ambient = Ambient.get();
      if (inPlace(ambient)) {
        return (CompletableFuture<T>) firstInPlace(policy, work, false, ambient);
      }
    }
    return Objects.requireNonNull(new AsyncExecution<>(policy, work, false).result);
  }

  @SuppressWarnings("unchecked") // the lane completes the outcome style's future with an outcome
  static <T> CompletableFuture<Outcome<T>> run(Resilience policy, Resilience.AsyncWork<T> work) {
    if (policy.unobservedOnRealClock) {
      Ambient ambient = Ambient.get();
      if (inPlace(ambient)) {
        return (CompletableFuture<Outcome<T>>) firstInPlace(policy, work, true, ambient);
      }
    }
    return Objects.requireNonNull(new AsyncExecution<>(policy, work, true).outcome);
  }

  /**
   * Whether a first attempt of a policy that allows it may run in place here: no context is open
   * on this thread, no synchronous fast attempt runs on it, no drain has begun, and it is not the
   * shared timer thread (user work never runs there; the call hands it off, as it always has).
   */
  private static boolean inPlace(Ambient ambient) {
    return ambient.depth() == 0 && !ambient.inFastAttempt() && !Draining.isDraining() && !SystemTime.onTimerThread();
  }

  // ---------------------------------------------------------------- the first attempt in place

  /**
   * The first attempt of a call that nothing observes, on the real clock, with no gate for first
   * attempts, no ambient context and no drain (the conditions of the synchronous plainest lane),
   * started before any call state exists. As in that lane, the thread's fast watchdog slot times
   * the attempt while the work's {@code start} runs and is the frame its nested calls see (its end,
   * no label), so a first attempt reads no clock unless it is not OK, and the work is told the
   * policy's own first {@link Attempt}. When its stage has answered by the time the work returns it
   * (a cached or fail-fast answer, a {@code Mono} that completes as it is subscribed to) and the
   * answer is OK, the call is over: the core's decision for an OK verdict is applied
   * ({@link Decide#accounted}) and the caller gets a completed future; no call, record or timer is
   * made. An answer that is not OK goes on in place ({@link RetryLoop}) while the retries answer in
   * place too; a first attempt still running is handed to a call of its own ({@link Call#adoptFirst}),
   * and the core decides from there as for any attempt.
   *
   * <p>An attempt that answered inside {@code start} is judged as the synchronous lanes judge theirs:
   * a value is used even if it came at the timeout; a failure after the slot timed the attempt out is
   * the attempt's timeout. The caller's future behaves as the call's own would: a completed future
   * ignores cancel and complete, as a call's completed future does.
   */
  private static <T> CompletableFuture<?> firstInPlace(Resilience policy, Resilience.AsyncWork<T> work,
      boolean outcomeStyle, Ambient ambient) {
    long left = Decide.remaining(policy.deadlineNanos, 0, 0);
    if (Decide.mayStart(false, left) != null) {
      return driven(policy, work, outcomeStyle); // the core ends it
    }
    long timeout = policy.firstAttemptTimeoutNanos;
    long start = outcomeStyle ? System.nanoTime() : 0; // an outcome tells its elapsed time exactly
    Watchdog.Slot slot = ambient.armFast(timeout, policy.attempts() > 1);
    CompletableFuture<T> stage;
    CompletionStage<T> origin;
    try {
      origin = begun(work, policy.firstAttempt);
      stage = futureOf(origin);
    } catch (Error e) {
      slot.disarm();
      throw e;
    }
    boolean inPlace = origin == InPlaceWork.ANSWERED;
    boolean done = inPlace || stage.isDone(); // read once: a stage still running may end at any moment
    if (done && (inPlace ? answerFailure(work) == null : !stage.isCompletedExceptionally())) {
      Object value = inPlace ? ((InPlaceWork) work).answerValue() : stage.getNow(null); // (this throws nothing)
      slot.disarm(); // a value is used even if it came at the timeout
      Verdict verdict = Call.classify(policy.classifier(), value, null);
      if (verdict.kind() == Verdict.Kind.OK) {
        // the core's decision for an OK verdict: no gate holds anything of it; credit, measure, stop
        long end = outcomeStyle ? System.nanoTime() : 0; // (nothing measures a value's time here)
        Decide.accounted(policy, policy.budget(), Verdict.Kind.OK, end - start, end);
        return answered(policy, work, outcomeStyle, stage, value, verdict, 1, end - start);
      }
      return notOk(policy, work, outcomeStyle, ambient, slot, start, timeout, value, null, false, verdict, stage);
    }
    return failedOrRunning(policy, work, outcomeStyle, ambient, slot, start, timeout, origin, stage, inPlace, done);
  }

  /** A call the core drives from its start: the caller's future. */
  private static <T> CompletableFuture<?> driven(Resilience policy, Resilience.AsyncWork<T> work,
      boolean outcomeStyle) {
    return outcomeStyle ? Objects.requireNonNull(new AsyncExecution<>(policy, work, true).outcome)
        : Objects.requireNonNull(new AsyncExecution<>(policy, work, false).result);
  }

  /**
   * The first attempt in place did not answer with a value: it failed ({@code done}), or its stage
   * was still running when looked at, and a call of its own hears it from here, as it hears any
   * attempt it started (whatever it has ended with since). (Kept out of {@link #firstInPlace}, so
   * that its success path stays small enough to inline.)
   */
  private static <T> CompletableFuture<?> failedOrRunning(Resilience policy, Resilience.AsyncWork<T> work,
      boolean outcomeStyle, Ambient ambient, Watchdog.Slot slot, long start, long timeout, CompletionStage<T> origin,
      CompletableFuture<T> stage, boolean inPlace, boolean done) {
    if (!done) {
      slot.disarm();
      if (!outcomeStyle) {
        start = slot.startEstimate(System.nanoTime()); // as the plainest lane: the watchdog's first sighting of it
      }
      AsyncExecution<T> call = new AsyncExecution<>(policy, work, outcomeStyle, start);
      AttemptRecord first = call.adoptFirst(start, timeout, policy.gates.length, null);
      first.target = call;
      call.watch(first, stage, origin, false);
      return call.callersFuture();
    }
    Throwable failure = inPlace ? Objects.requireNonNull(answerFailure(work)) : failureOf(origin);
    boolean timedOut = slot.disarm(); // a failure after the slot timed the attempt out is its timeout
    return notOk(policy, work, outcomeStyle, ambient, slot, start, timeout, null, failure, timedOut, null, stage);
  }

  /** The first attempt in place answered, and not OK: the call goes on in place ({@link RetryLoop}). */
  private static CompletableFuture<?> notOk(Resilience policy, Resilience.AsyncWork<?> work, boolean outcomeStyle,
      Ambient ambient, Watchdog.Slot slot, long start, long timeout, @Nullable Object value,
      @Nullable Throwable failure, boolean timedOut, @Nullable Verdict verdict, CompletableFuture<?> stage) {
    long end = System.nanoTime();
    if (!outcomeStyle) {
      start = slot.startEstimate(end);
    }
    AttemptRecord r = ambient.holdFastRecord();
    try {
      r.reset(1, AttemptRecord.FIRST, Criticality.CRITICAL, start, 0);
      r.admitted = policy.gates.length; // (no gate holds anything of a first attempt here)
      return RetryLoop.async(policy, work, outcomeStyle, ambient, start, end, timeout, r, value, failure, timedOut,
          verdict, stage);
    } finally {
      ambient.releaseFastRecord(r);
    }
  }

  /**
   * The caller's future for a call that ended with an OK value answered in place by {@code stage}:
   * the stage itself when it is one of Quell's own modules' ({@link DirectStage}: it holds that value
   * and is nobody else's), otherwise a completed future; for the outcome style, a completed outcome,
   * also handed to work that wants it.
   */
  static CompletableFuture<?> answered(Resilience policy, Resilience.AsyncWork<?> work, boolean outcomeStyle,
      CompletableFuture<?> stage, @Nullable Object value, Verdict verdict, int attempts, long elapsedNanos) {
    if (!outcomeStyle) {
      return stage == InPlaceWork.ANSWERED || stage instanceof DirectStage ? stage
          : CompletableFuture.completedFuture(value);
    }
    long elapsed = Math.max(0, elapsedNanos);
    Outcome<Object> ended = new Outcome<>(value, true, null, StopReason.SUCCEEDED, attempts, elapsed,
        Decide.retryAfter(-1, verdict));
    CompletableFuture<Outcome<Object>> answered = CompletableFuture.completedFuture(ended);
    tellReceiver(work, ended, elapsed);
    return answered;
  }

  /** A call the in-place loop stopped ({@link Call#resumeStopped}): ended as any call is, after its pause. */
  static CompletableFuture<?> stopped(Resilience policy, Resilience.AsyncWork<?> work, boolean outcomeStyle,
      long start, int attempts, @Nullable Object result, @Nullable Throwable failure, @Nullable Verdict verdict,
      StopReason reason, long now, long gateRetryAfterNanos, long pause) {
    AsyncExecution<?> call = new AsyncExecution<>(policy, work, outcomeStyle, start);
    call.resumeStopped(attempts, result, failure, verdict, reason, now, gateRetryAfterNanos, pause);
    return call.callersFuture();
  }

  /** A call the in-place loop must wait in before its next retry ({@link Call#resumeWaiting}). */
  static CompletableFuture<?> waiting(Resilience policy, Resilience.AsyncWork<?> work, boolean outcomeStyle,
      long start, int attempts, @Nullable Object result, @Nullable Throwable failure, Verdict verdict, long delay) {
    AsyncExecution<?> call = new AsyncExecution<>(policy, work, outcomeStyle, start);
    call.resumeWaiting(attempts, result, failure, verdict, delay);
    return call.callersFuture();
  }

  /** A call the in-place loop hands its retry to, still running on {@code stage} ({@link Call#adoptRetry}). */
  @SuppressWarnings("unchecked") // the stage of this work's own attempt
  static <T> CompletableFuture<?> adoptRetry(Resilience policy, Resilience.AsyncWork<T> work, boolean outcomeStyle,
      long start, int attemptsSoFar, @Nullable Object result, @Nullable Throwable failure, Verdict verdict,
      long attemptStart, long timeout, int admitted, CompletableFuture<?> stage, CompletionStage<?> origin) {
    AsyncExecution<T> call = new AsyncExecution<>(policy, work, outcomeStyle, start);
    AttemptRecord retry = call.adoptRetry(attemptsSoFar, result, failure, verdict, attemptStart, timeout, admitted);
    retry.target = call;
    call.watch(retry, (CompletableFuture<T>) stage, (CompletionStage<T>) origin, false);
    return call.callersFuture();
  }

  /** The failure of an attempt that answered in place without a stage ({@link InPlaceWork}), or null for a value. */
  static @Nullable Throwable answerFailure(Resilience.AsyncWork<?> work) {
    return unwrap(((InPlaceWork) work).answerFailure());
  }

  /**
   * The failure a stage that answered inside {@code start} failed with, as its own callback would
   * be told it (never a new exception read from the future, which would carry a stack trace): from
   * a {@link DirectStage} as it keeps it; from any other through a dependent stage, which runs at once.
   */
  static Throwable failureOf(CompletionStage<?> origin) {
    Throwable told;
    if (origin instanceof DirectStage) {
      told = ((DirectStage) origin).failedWith();
    } else {
      @Nullable Throwable[] handled = new Throwable[1];
      origin.handle((v, f) -> handled[0] = f);
      told = handled[0];
    }
    Throwable failure = unwrap(told);
    return failure != null ? failure : new IllegalStateException("a failed stage told no failure");
  }

  private CompletableFuture<?> callersFuture() {
    return result != null ? result : Objects.requireNonNull(outcome);
  }

  /** Hands {@code ended} to work that wants the outcome itself; what it throws is ignored, as a dependent stage's would be. */
  private static void tellReceiver(Resilience.AsyncWork<?> work, Outcome<?> ended, long elapsedNanos) {
    if (work instanceof OutcomeReceiver) {
      try {
        ((OutcomeReceiver) work).callEnded(ended, elapsedNanos);
      } catch (RuntimeException | Error ignored) {
        // as a dependent stage's failure would be: the caller's future is complete, the call is over
      }
    }
  }

  // ---------------------------------------------------------------- Call.Driver

  @Override
  public void start(Call c, AttemptRecord attempt) {
    if (realClock && SystemTime.onTimerThread()) {
      OFF_TIMER.execute(() -> startNow(attempt)); // user work never runs on the shared timer thread
    } else {
      startNow(attempt);
    }
  }

  private void startNow(AttemptRecord attempt) {
    if (!begin(attempt)) {
      return; // the call ended since this start was planned
    }
    attempt.target = this;
    // the record's timer and stage are volatile for other threads; a confined call has none
    boolean confined = onConfinedThread();
    long start = attempt.startNanos;
    long timeout = attempt.timeoutNanos;
    // on a virtual clock, arm the timeout before the work starts, as the sync driver does, so that an
    // answer arriving exactly at the timeout is judged the same way by both drivers; on the real
    // clock, only a stage still running when the work returns it is timed (see watch)
    if (timeout != Long.MAX_VALUE && !realClock) {
      try {
        attempt.setTimer(time.schedule(attempt, timeout), confined);
      } catch (RuntimeException | Error e) {
        attemptEnded(attempt, null, e, false, false); // a clock that cannot schedule: this attempt fails
        return;
      }
    }
    // the attempt's own end and the caller's label are what calls nested in it see, as in the sync driver
    Ambient ambient = ambientHere(); // no second lookup on the caller's thread
    Ambient.Frame frame = ambient.pushAttempt(start + timeout, timeout == Long.MAX_VALUE ? null : time,
        publishedCriticality, retries);
    CompletableFuture<T> stage;
    // the stage the work returned: its end is what the attempt hears, even when the future Quell
    // cancels is a copy of it (a minimal stage's, which a cancel does not reach): a value that still
    // arrives then goes to the discard hook instead of being dropped with the copy
    CompletionStage<T> origin;
    try {
      origin = begun(work, new Attempt(attempt.number, timeout, remaining(start), attempt.kind == AttemptRecord.HEDGE,
          criticality));
      stage = futureOf(origin);
    } finally {
      ambient.pop(frame);
    }
    if (origin == InPlaceWork.ANSWERED) {
      // it answered while it started, with no stage: heard at once, as a stage done by then is
      Throwable failure = answerFailure(work);
      attemptCompleted(attempt, failure != null ? null : ((InPlaceWork) work).answerValue(), failure);
      return;
    }
    watch(attempt, stage, origin, confined);
  }

  /**
   * Watches the started {@code attempt}: hears its stage's end, and on the real clock arms its
   * timeout only if the stage is still running once it is heard from (an answer that came inside
   * {@code start} is judged on its elapsed time instead, in {@link #attemptCompleted}): an attempt
   * that answers at once costs no timer and no wake-up of the timer thread.
   */
  private void watch(AttemptRecord attempt, CompletableFuture<T> stage, CompletionStage<T> origin, boolean confined) {
    attempt.setStage(stage, confined);
    if (attempt.isSettled()) {
      stage.cancel(true); // timed out or cancelled while it was starting (a value that still comes is heard below)
    } else if (stage.isDone() && !stage.isCompletedExceptionally()) {
      // it answered with a value while it started: heard at once, with no callback hung on it (its
      // stage, or a copy of it, holds the value its origin would tell); a failure is left to the
      // callback, since reading it from the future would cost an exception with a stack trace
      attemptCompleted(attempt, stage.getNow(null), null);
      return;
    }
    if (origin instanceof DirectStage) {
      ((DirectStage) origin).whenDone(attempt); // tells the attempt itself: no dependent stage
    } else {
      // handle, not whenComplete: its dependent completes normally, so a failure costs no wrapper
      origin.handle(attempt);
    }
    long timeout = attempt.timeoutNanos;
    if (realClock && timeout != Long.MAX_VALUE && !attempt.isSettled()) {
      try {
        attempt.setTimer(time.schedule(attempt, timeout - (time.nanoTime() - attempt.startNanos)), confined);
      } catch (RuntimeException | Error e) {
        if (settle(attempt)) { // a clock that cannot schedule: this attempt fails
          stage.cancel(true);
          attemptEnded(attempt, null, e, false, false);
        }
        return;
      }
      if (attempt.isSettled()) {
        stopTimer(attempt); // it ended as the timer was being armed
      }
    }
  }

  /**
   * Starts the work for {@code a}: the stage it returned, or a failed one when it threw or returned
   * null (never null). Both drivers' lanes start every attempt through here.
   */
  static <T> CompletionStage<T> begun(Resilience.AsyncWork<T> work, Attempt a) {
    try {
      CompletionStage<T> started = work.start(a);
      return started != null ? started
          : CompletableFuture.failedFuture(new NullPointerException("async work returned a null stage"));
    } catch (Throwable t) {
      return CompletableFuture.failedFuture(t);
    }
  }

  /**
   * The future Quell cancels for a stage: the stage itself when it is one; a fresh one when it
   * cannot be had (the spec allows {@code toCompletableFuture} to refuse; one that throws anything
   * else is taken the same way): nothing to cancel, and the origin still reports the attempt's end.
   */
  static <T> CompletableFuture<T> futureOf(CompletionStage<T> started) {
    try {
      return started.toCompletableFuture();
    } catch (RuntimeException e) {
      return new CompletableFuture<>();
    }
  }

  @Override
  public void cancel(Call c, AttemptRecord attempt) {
    if (settle(attempt)) {
      // the core has already ended the attempt; stop its work
      stopTimer(attempt);
      CompletableFuture<?> stage = attempt.stage;
      if (stage != null) {
        stage.cancel(true);
      }
    }
  }

  @Override
  public void wakeAfter(Call c, long delayNanos, int token) {
    time.schedule(new TimerTask(this, token), delayNanos);
  }

  @Override
  public void wakeWhileRunning(Call c, long delayNanos, int token) {
    wakeAfter(c, delayNanos, token);
  }

  @Override
  public void finish(Call c, long pauseNanos) {
    if (pauseNanos > 0) {
      pauseTimer = time.schedule(new TimerTask(this, TimerTask.PAUSE), pauseNanos);
      if (callerCancelled) {
        cutPauseShort(); // cancelled while the pause was being armed
      }
    } else if (realClock && SystemTime.onTimerThread()) {
      OFF_TIMER.execute(this::complete); // the caller's dependents never run on the shared timer thread
    } else {
      complete();
    }
  }

  /**
   * A wake-up's or the guarded pause's timer task: one object, which on the real clock also carries
   * its consequence off the shared timer thread (on a virtual clock it runs inline).
   */
  private static final class TimerTask implements Runnable {
    /** The {@link #token} of the guarded pause's task, which ends the call instead of waking it. */
    static final long PAUSE = Long.MIN_VALUE;

    private final AsyncExecution<?> execution;
    /** The wake-up's token (an int), or {@link #PAUSE}. */
    private final long token;
    private boolean handedOff;

    TimerTask(AsyncExecution<?> execution, long token) {
      this.execution = execution;
      this.token = token;
    }

    @Override
    public void run() {
      if (execution.realClock && !handedOff) {
        handedOff = true;
        OFF_TIMER.execute(this);
      } else if (token == PAUSE) {
        execution.complete();
      } else {
        execution.wake((int) token);
      }
    }
  }

  // ---------------------------------------------------------------- attempts ending

  @Override
  public void attemptCompleted(AttemptRecord attempt, @Nullable Object value, @Nullable Throwable failure) {
    if (!settle(attempt)) {
      if (failure == null) {
        discard(value); // the timeout or the core got there first: nobody will see this value
      }
      return;
    }
    boolean timedOut = false;
    if (attempt.timer != null) {
      stopTimer(attempt);
    } else if (realClock && failure != null && attempt.timeoutNanos != Long.MAX_VALUE) {
      // it ended before its timer was armed (inside start): judged on its elapsed time, as the
      // synchronous lanes judge theirs; a value is used even if it came at the timeout
      timedOut = time.nanoTime() - attempt.startNanos >= attempt.timeoutNanos;
    }
    Throwable cause = unwrap(failure);
    boolean cancelled = !timedOut && cause != null && Call.isCancellation(cause, false);
    attemptEnded(attempt, value, cause, timedOut, cancelled);
  }

  @Override
  public void attemptTimedOut(AttemptRecord attempt) {
    if (realClock && SystemTime.onTimerThread()) {
      OFF_TIMER.execute(() -> attemptTimedOut(attempt)); // what follows may start user work
      return;
    }
    if (!settle(attempt)) {
      return;
    }
    CompletableFuture<?> abandoned = attempt.stage;
    if (abandoned != null) {
      abandoned.cancel(true);
    }
    attemptEnded(attempt, null, null, true, false);
  }

  /** Settles the attempt once; on a call confined to this thread, without an atomic operation. */
  private boolean settle(AttemptRecord attempt) {
    return onConfinedThread() ? attempt.settleConfined() : attempt.settle();
  }

  private static void stopTimer(AttemptRecord attempt) {
    TimeSource.Scheduled t = attempt.timer;
    if (t != null) {
      t.cancel();
    }
  }

  // ---------------------------------------------------------------- the caller's future

  /** Completes the caller's future with the call's outcome, once. */
  @SuppressWarnings("unchecked")
  private void complete() {
    if (onConfinedThread()) {
      if (delivered != 0) {
        return;
      }
      DELIVERED.set(this, 1); // nothing runs beside this thread: a plain write, not a CAS
    } else if (!DELIVERED.compareAndSet(this, 0, 1)) {
      return;
    }
    finishedNanos = time.nanoTime();
    Result<?> future = result != null ? result : outcome;
    if (stopReason == StopReason.CANCELLED && future != null) {
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
      Outcome<T> ended = toOutcome();
      o.completeInternally(ended);
      tellReceiver(work, ended, Math.max(0, finishedNanos - startNanos));
      return;
    }
    Result<T> r = result;
    if (r != null) {
      Throwable failure = failureToThrow();
      if (failure == null) {
        r.completeInternally((T) lastResult);
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
    if (cancel()) {
      return true;
    }
    cutPauseShort(); // the call had already ended: it may still be serving its guarded pause
    return false;
  }

  /** The caller completes the future itself: the call stops, cancelled, and the caller's value stands. */
  private void callerCompletes() {
    callerCompleted = true;
    cancel();
  }

  private static @Nullable Throwable unwrap(@Nullable Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
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

    void completeInternally(@Nullable V value) {
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
