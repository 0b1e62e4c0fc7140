package dev.quell;

import dev.quell.internal.CallObserver;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The synchronous driver: carries out the core's plans on the caller's thread. It runs each attempt
 * there, sleeps the waits the core asks for on the time source, and serves the guarded pause; it
 * decides nothing. Each call that needs state (it failed, hedges, listens, or returns an
 * {@link Outcome}) gets its own driver and {@link Call}, so a hedge, a timer or a late attempt that
 * still holds one can never reach the next call on this thread.
 *
 * <p>The first attempt of a plain {@code execute} on the real clock takes a fast path that reads
 * no clock and allocates nothing when it succeeds: the watchdog slot times the attempt, and only if
 * the attempt does not come back {@code OK} is a {@link Call} set up, with the watchdog's sighting
 * of the attempt as its start time and the verdict already reached. From there the core decides as
 * for any other attempt. The fast path applies only where it decides as the core would: nothing
 * listens, the clock is real, no gate asks about first attempts, no context is open and the process
 * is not draining.
 */
final class SyncExecution implements Call.Driver {
  // the owner's wait on a virtual clock, and the core waking it (a Dekker-style handshake, as the
  // watchdog's); on the real clock the owner parks and the core unparks it, and no interrupt is sent
  private static final int NOT_WAITING = 0;
  private static final int WAITING = 1;
  private static final int WAKING = 2;
  private static final int WOKEN = 3;
  private static final VarHandle WAIT;

  static {
    try {
      WAIT = MethodHandles.lookup().findVarHandle(SyncExecution.class, "wait", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final Call call = new Call();
  private final Thread owner;
  private volatile int wait;
  /** The nesting level this call is driven at on its owner's thread ({@link Ambient#enter}); -1 before. */
  private int level = -1;
  /** Set while the owner starts an attempt of its own: a hedge wake-up then rides on its slot. */
  private boolean primaryArming;
  private long hedgeDelay = Long.MAX_VALUE;
  private int hedgeToken;

  private void hedgeDue() {
    Call c = call;
    Hedge h = c.policy.hedge;
    int token = hedgeToken;
    if (h != null) {
      h.executor().execute(() -> c.wake(token));
    }
  }

  /** The work of the call being driven, for hedges started on other threads. */
  private volatile @Nullable Callable<?> callable;
  private volatile Resilience.@Nullable Work<?> work;

  // the plan, as the core hands it over (possibly from another thread)
  private volatile @Nullable AttemptRecord toStart;
  private volatile boolean wakePending;
  private volatile long wakeDelay;
  private volatile int wakeToken;
  private volatile boolean finished;
  private volatile long pause;

  SyncExecution(Thread owner) {
    this.owner = owner;
  }

  // ---------------------------------------------------------------- Call.Driver

  @Override
  public void start(Call c, AttemptRecord attempt) {
    if (attempt.kind == AttemptRecord.HEDGE) {
      // the caller's thread is busy with an attempt: a hedge runs beside it, on the hedge's executor
      Callable<?> callable = this.callable;
      Resilience.Work<?> work = this.work;
      try {
        java.util.concurrent.Executor executor = Objects.requireNonNull(c.policy.hedge).executor();
        executor.execute(() -> runHedge(c, attempt, callable, work));
      } catch (RuntimeException e) {
        c.notStarted(attempt, e);
      }
      return;
    }
    toStart = attempt;
    wakeOwner();
  }

  @Override
  public void cancel(Call c, AttemptRecord attempt) {
    // the call ended while this attempt ran (another attempt won): interrupt its thread, once; the
    // thread takes the interrupt back when the work returns
    attempt.interruptRunner();
  }

  @Override
  public void wakeWhileRunning(Call c, long delayNanos, int token) {
    TimeSource time = c.time;
    if (time == SystemTime.INSTANCE && Thread.currentThread() == owner && primaryArming) {
      // the caller's own attempt is about to start: its watchdog slot times the hedge too, so a
      // hedge that is never needed costs no timer
      hedgeDelay = delayNanos;
      hedgeToken = token;
      return;
    }
    Runnable wake = () -> c.wake(token);
    if (time == SystemTime.INSTANCE) {
      java.util.concurrent.Executor off = Objects.requireNonNull(c.policy.hedge).executor();
      time.schedule(() -> off.execute(wake), delayNanos); // never the timer thread's own work
    } else {
      time.schedule(wake, delayNanos);
    }
  }

  /** Runs a hedge on an executor thread, with that thread's own attempt timer and frame. */
  private void runHedge(Call c, AttemptRecord attempt, @Nullable Callable<?> callable,
      Resilience.@Nullable Work<?> work) {
    Ambient ambient = Ambient.get();
    int hedgeLevel = ambient.enter();
    try {
      runAttempt(c, attempt, callable, work, ambient, ambient.slotAt(hedgeLevel), false);
    } finally {
      ambient.exit();
    }
  }

  @Override
  public void wakeAfter(Call c, long delayNanos, int token) {
    wakeDelay = delayNanos;
    wakeToken = token;
    wakePending = true;
    wakeOwner();
  }

  @Override
  public void finish(Call c, long pauseNanos) {
    pause = pauseNanos;
    finished = true;
    wakeOwner();
  }

  /**
   * Ends the owner's wait early, if it is waiting. On the real clock the owner parks and is unparked:
   * its interrupt flag stays the caller's alone. On another clock the owner sleeps on the time
   * source, whose sleep only an interrupt stops; the plan may then come from another thread, or from
   * the owner itself in the middle of its own sleep (a virtual clock runs due timers on the sleeping
   * thread), and the owner takes that interrupt back before it goes on.
   */
  private void wakeOwner() {
    if (call.time == SystemTime.INSTANCE) {
      if (Thread.currentThread() != owner) { // the owner itself sees the plan before it would park
        LockSupport.unpark(owner);
      }
      return;
    }
    if (WAIT.compareAndSet(this, WAITING, WAKING)) {
      owner.interrupt();
      wait = WOKEN;
    }
  }

  // ---------------------------------------------------------------- entry points

  static <T> @Nullable T execute(Resilience policy, @Nullable Callable<T> callable, Resilience.@Nullable Work<T> work)
      throws Exception {
    Ambient ambient = Ambient.get();
    if (callable != null && policy.unobservedOnRealClock && ambient.depth() == 0 && !ambient.inFastAttempt()
        && !Draining.isDraining()) {
      // The plainest case, kept small so that it inlines: no listener, no observer, real clock, no
      // ambient context, no gate for first attempts. The armed slot times the attempt and is its
      // frame; no clock is read.
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
      Verdict verdict = null;
      if (failure == null && !timedOut) {
        verdict = Call.classify(policy.classifier(), result, null);
        if (verdict.kind() == Verdict.Kind.OK) {
          Decide.accounted(policy, policy.budget(), Verdict.Kind.OK, 0, 0); // (nothing measures here)
          return result;
        }
      }
      return retryInPlace(policy, callable, ambient, slot, result, failure, timedOut, verdict);
    }
    if (callable != null && ambient.depth() == 0 && !ambient.inFastAttempt() && !Draining.isDraining()) {
      if (policy.timedFastPath) {
        return timedFast(policy, callable, ambient);
      }
      if (policy.hedgedFastPath) {
        return ambient.hedgedLane().run(policy, callable, ambient);
      }
    }
    return driven(policy, callable, work, ambient);
  }

  /** The plainest lane's first attempt was not OK: the call goes on in place ({@link RetryLoop}). */
  private static <T> @Nullable T retryInPlace(Resilience policy, Callable<T> callable, Ambient ambient,
      Watchdog.Slot slot, @Nullable T result, @Nullable Throwable failure, boolean timedOut, @Nullable Verdict verdict)
      throws Exception {
    long end = System.nanoTime();
    long start = slot.startEstimate(end);
    AttemptRecord r = ambient.holdFastRecord();
    try {
      r.reset(1, AttemptRecord.FIRST, Criticality.CRITICAL, start, 0);
      r.admitted = policy.gates.length; // (no gate holds anything of a first attempt here)
      return RetryLoop.sync(policy, callable, ambient, start, end, policy.firstAttemptTimeoutNanos, r,
          result, failure, timedOut, verdict);
    } finally {
      ambient.releaseFastRecord(r);
    }
  }

  /** A call the core drives (kept out of {@link #execute}, so that it stays small enough to inline). */
  private static <T> @Nullable T driven(Resilience policy, @Nullable Callable<T> callable,
      Resilience.@Nullable Work<T> work, Ambient ambient) throws Exception {
    SyncExecution driver = new SyncExecution(Thread.currentThread());
    driver.level = ambient.enter();
    try {
      Call call = driver.begin(policy, ambient, callable, work);
      driver.drive(callable, work, ambient);
      return finish(call);
    } finally {
      ambient.exit();
    }
  }

  /**
   * The first attempt of a call whose gates (breaker, limiters) or measured timing need the clock,
   * when nothing listens: the same gates asked in the same order, the same attempt ceiling, one
   * clock read (two when latency is measured or a gate needs the end time; none when every gate
   * takes the watchdog's coarse time, {@link Resilience#fastCoarseTime}) and no allocation; only an
   * attempt that does not come back OK sets up a call of its own, with the verdict reached and the
   * permits held. A gate's refusal is handed to the core, which ends the call as it ends any refused
   * first attempt. (Gates that can make an attempt wait are left to the core.)
   */
  private static <T> @Nullable T timedFast(Resilience policy, Callable<T> callable, Ambient ambient) throws Exception {
    AttemptRecord held = ambient.holdFastRecord();
    try {
      return timedFast(policy, callable, ambient, held);
    } finally {
      ambient.releaseFastRecord(held);
    }
  }

  /** {@link #timedFast}, with the record the lane holds. */
  private static <T> @Nullable T timedFast(Resilience policy, Callable<T> callable, Ambient ambient,
      AttemptRecord held) throws Exception {
    // when every gate decides alike on the watchdog's last sighting of the clock (a steady closed
    // breaker with a window of seconds, a concurrency limit), a success reads no clock at all
    CallObserver[] observers = policy.observers;
    boolean observed = observers.length > 0; // they are told the attempt's duration: read the clock exactly
    boolean coarse = policy.fastCoarseTime && !observed;
    long start = coarse ? Watchdog.INSTANCE.sighting() : System.nanoTime();
    long timeout = Math.min(policy.attemptCeilingNanos(start), policy.deadlineNanos);
    AttemptRecord r = held.reset(1, AttemptRecord.FIRST, Criticality.CRITICAL, start, policy.markSlots);
    r.timeoutNanos = policy.deadlineNanos; // what the gates may use: the time left before the deadline
    r.coarseNow = coarse;
    Gate[] gates = policy.gates;
    int refusedBy = Decide.walk(gates, policy.budgetGateIndex, r, 0, Decide.WALK_ADMIT, start);
    if (refusedBy != Decide.ADMITTED) {
      // refused: give back what the earlier gates admitted, and let the core end the call exactly
      // as it ends one whose first attempt it refused itself
      if (coarse) {
        start = System.nanoTime(); // the call's own start is exact
      }
      Decide.release(gates, policy.budgetGateIndex, r, Gate.NOT_STARTED, start);
      SyncExecution driver = new SyncExecution(Thread.currentThread());
      driver.level = ambient.enter();
      try {
        Call call = driver.call.init(policy, start, null, driver);
        call.startRefused(gates[refusedBy].refusal(), r.retryAfterNanos);
        driver.drive(callable, null, ambient);
        return finish(call);
      } finally {
        ambient.exit();
      }
    }
    Watchdog.Slot slot = ambient.armFast(timeout, policy.attempts() > 1);
    T result = null;
    Throwable failure = null;
    try {
      result = callable.call();
    } catch (Throwable t) {
      failure = t;
    }
    boolean timedOut = slot.disarm() && failure != null;
    // the end time, when a success needs one (a latency, a slow-call threshold); otherwise the
    // gates are released at the start time and the call reads the clock once
    long end = policy.fastEndTime || observed ? System.nanoTime() : coarse ? Watchdog.INSTANCE.sighting() : start;
    Verdict verdict = null;
    if (failure == null && !timedOut) {
      verdict = Call.classify(policy.classifier(), result, null);
      if (verdict.kind() == Verdict.Kind.OK) {
        // the core's decision for an OK verdict: release as succeeded, credit, measure, stop
        int moved = -1;
        if (observed) {
          moved = r.breakerTransition; // a move while admitting; one while releasing is read after
          r.breakerTransition = -1;
        }
        Decide.release(gates, policy.budgetGateIndex, r, Gate.SUCCEEDED, end);
        Decide.accounted(policy, policy.budget(), Verdict.Kind.OK, end - start, end);
        if (observed) {
          observeSuccess(policy, observers, r, moved, verdict, end - start);
        }
        return result;
      }
    }
    if (coarse) {
      end = System.nanoTime();
      start = slot.startEstimate(end); // as the plainest path: the watchdog's first sighting of it
    } else if (!policy.fastEndTime && !observed) {
      end = System.nanoTime(); // (read only now: a success needed no end time)
    }
    if (!observed) {
      return RetryLoop.sync(policy, callable, ambient, start, end, timeout, r, result, failure, timedOut,
          verdict);
    }
    return adopt(policy, callable, ambient, start, timeout, r.admitted, r.marks, result, failure, timedOut, verdict);
  }

  /**
   * Tells allocation-free observers of a first attempt that succeeded in the timed lane, as a call
   * would have: the attempt started and ended, a breaker move it caused, the call succeeded.
   */
  private static void observeSuccess(Resilience policy, CallObserver[] observers, AttemptRecord r, int movedOnAdmit,
      Verdict verdict, long nanos) {
    RetryBudget b = policy.budget();
    Criticality c = Criticality.CRITICAL;
    Call.observe(observers, policy, b, c, ResilienceEvent.Type.ATTEMPT_STARTED, 1, false, 0, 0, 0, null, null, null,
        null);
    if (movedOnAdmit >= 0) {
      Call.observe(observers, policy, b, c, ResilienceEvent.Type.BREAKER_TRANSITION, 1, false, 0, 0, 0, null, null,
          null, CircuitBreaker.State.values()[movedOnAdmit]);
    }
    Call.observe(observers, policy, b, c, ResilienceEvent.Type.ATTEMPT_ENDED, 1, false, nanos, nanos, 0, verdict,
        null, null, null);
    int movedOnRelease = r.breakerTransition;
    if (movedOnRelease >= 0) {
      r.breakerTransition = -1;
      Call.observe(observers, policy, b, c, ResilienceEvent.Type.BREAKER_TRANSITION, 1, false, nanos, 0, 0, null,
          null, null, CircuitBreaker.State.values()[movedOnRelease]);
    }
    Call.observe(observers, policy, b, c, ResilienceEvent.Type.SUCCEEDED, 1, false, nanos, 0, 0, verdict, null,
        StopReason.SUCCEEDED, null);
  }

  /**
   * Hands a first attempt that a fast lane ran, and that did not come back OK, to a call of its own:
   * the core decides from its end as for any other attempt.
   */
  private static <T> @Nullable T adopt(Resilience policy, Callable<T> callable, Ambient ambient, long start,
      long timeout, int admitted, long @Nullable [] marks, @Nullable Object result, @Nullable Throwable failure,
      boolean timedOut, @Nullable Verdict verdict) throws Exception {
    SyncExecution driver = new SyncExecution(Thread.currentThread());
    driver.level = ambient.enter();
    try {
      driver.callable = callable;
      Call call = driver.call.init(policy, start, null, driver);
      AttemptRecord first = call.adoptFirst(start, timeout, admitted, marks);
      boolean cancelled = !timedOut && failure != null && isCancelled(failure);
      call.attemptEnded(first, result, failure, timedOut, cancelled, cancelled ? null : verdict);
      driver.drive(callable, null, ambient);
      return finish(call);
    } finally {
      ambient.exit();
    }
  }

  /** A call carried by {@link RetryLoop} must wait before its next retry: the core takes it over, waits and goes on. */
  static <T> @Nullable T waitInCall(Resilience policy, Callable<T> callable, Ambient ambient, long start,
      int attempts, @Nullable Object result, @Nullable Throwable failure, Verdict verdict, long delay)
      throws Exception {
    SyncExecution driver = new SyncExecution(Thread.currentThread());
    driver.level = ambient.enter();
    try {
      driver.callable = callable;
      Call call = driver.call.init(policy, start, null, driver);
      call.resumeWaiting(attempts, result, failure, verdict, delay);
      driver.drive(callable, null, ambient);
      return finish(call);
    } finally {
      ambient.exit();
    }
  }

  /**
   * The hedged fast lane of one thread: the first attempt runs as on the plainest path, and its
   * watchdog slot times the hedge. If the attempt answers first, nothing else happens and nothing is
   * allocated. If the hedge falls due first, its task takes the call over on the hedge executor: it
   * sets up a call of its own (a new driver, with the running attempt adopted as attempt 1) and
   * sends the hedge; the owner, when its attempt returns, reports to that call and drives it.
   *
   * <p>The lane itself outlives its calls (it is this thread's), and the watchdog and the hedge
   * executor can reach it after a call: a CAS on {@code state} decides who was first, and the state
   * carries a generation, so a take-over late for one call can never touch the next. Everything a
   * taken-over call uses after that is its own.
   */
  static final class HedgedLane {
    private static final long RUNNING = 1;
    private static final long DONE = 2;
    private static final long TAKING_OVER = 3;
    private static final long TAKEN_OVER = 4;

    private final Thread owner;
    private final java.util.concurrent.atomic.AtomicLong state = new java.util.concurrent.atomic.AtomicLong();
    // the current generation's call; written by the owner before it publishes RUNNING
    private @Nullable Resilience policy;
    private @Nullable Callable<?> callable;
    private volatile Watchdog.@Nullable Slot slot;
    /** Whether the hedge delay came from the histogram, and then when the first attempt started (read exactly). */
    private boolean measured;
    private long start;
    /** The call the take-over set up, and its adopted first attempt; published before TAKEN_OVER. */
    private volatile @Nullable SyncExecution taken;
    private volatile @Nullable AttemptRecord primary;
    /** Runs on the watchdog thread: only hands the take-over to the hedge executor. */
    private final Runnable hedgeDue = this::hedgeDue;

    HedgedLane(Thread owner) {
      this.owner = owner;
    }

    private static long stamp(long generation, long state) {
      return generation << 3 | state;
    }

    <T> @Nullable T run(Resilience policy, Callable<T> callable, Ambient ambient) throws Exception {
      Hedge hedge = Objects.requireNonNull(policy.hedge);
      // a hedge by maxExtraLoad reads its delay from the policy's histogram and feeds it: the only
      // path here that reads the clock (twice, to measure the attempt), as the core would
      boolean measured = policy.latencies != null;
      long start = measured ? System.nanoTime() : 0;
      long delay = measured ? policy.hedgeDelayNanos(start) : hedge.fixedDelayNanos();
      Call.creditHedgeAllowance(policy); // as the core does for every call that may hedge
      this.policy = policy;
      this.callable = callable;
      this.taken = null;
      this.primary = null;
      this.measured = measured;
      this.start = start;
      long generation = (state.get() >>> 3) + 1;
      state.set(stamp(generation, RUNNING));
      Watchdog.Slot slot = ambient.armFast(policy.firstAttemptTimeoutNanos, true, delay, hedgeDue);
      this.slot = slot;
      T result = null;
      Throwable failure = null;
      try {
        result = callable.call();
      } catch (Throwable t) {
        failure = t;
      }
      boolean timedOut = slot.disarm() && failure != null;
      if (state.compareAndSet(stamp(generation, RUNNING), stamp(generation, DONE))) {
        // answered before any hedge: exactly the plainest path
        this.callable = null;
        Verdict verdict = null;
        if (failure == null && !timedOut) {
          verdict = Call.classify(policy.classifier(), result, null);
          if (verdict.kind() == Verdict.Kind.OK) {
            long end = measured ? System.nanoTime() : 0;
            Decide.accounted(policy, policy.budget(), Verdict.Kind.OK, end - start, end);
            return result;
          }
        }
        if (!measured) {
          start = slot.startEstimate(System.nanoTime());
        }
        return adopt(policy, callable, ambient, start, policy.firstAttemptTimeoutNanos, policy.gates.length, null,
            result, failure, timedOut, verdict);
      }
      // the hedge's task took the call over while the attempt ran: report to it, then drive it
      while (state.get() != stamp(generation, TAKEN_OVER)) {
        Thread.onSpinWait();
      }
      SyncExecution driver = Objects.requireNonNull(taken);
      AttemptRecord first = Objects.requireNonNull(primary);
      this.taken = null;
      this.primary = null;
      this.callable = null;
      driver.level = ambient.enter();
      try {
        first.workReturned(); // a cancel's interrupt (a hedge won) is taken back
        boolean cancelled = !timedOut && failure != null && isCancelled(failure);
        driver.call.attemptEnded(first, result, failure, timedOut, cancelled);
        driver.drive(callable, null, ambient);
        return finish(driver.call);
      } finally {
        ambient.exit();
      }
    }

    private void hedgeDue() {
      Resilience p = policy;
      long s = state.get();
      if (p != null && p.hedge != null && (s & 7) == RUNNING) {
        long generation = s >>> 3;
        p.hedge.executor().execute(() -> takeOver(generation)); // (allocates only when a hedge is due)
      }
    }

    /** On the hedge executor: sets up a call of its own around the running first attempt and sends the hedge. */
    private void takeOver(long generation) {
      if (!state.compareAndSet(stamp(generation, RUNNING), stamp(generation, TAKING_OVER))) {
        return; // the attempt answered first, or this is an earlier call's hedge
      }
      Resilience p = Objects.requireNonNull(policy);
      Watchdog.Slot s = slot;
      long now = System.nanoTime();
      long begun = measured ? start : s == null ? now : s.startEstimate(now);
      SyncExecution driver = new SyncExecution(owner);
      driver.callable = callable;
      Call c = driver.call.init(p, begun, null, driver);
      AttemptRecord first = c.adoptFirst(begun, p.firstAttemptTimeoutNanos, p.gates.length, null);
      first.workStartingOn(owner);
      taken = driver;
      primary = first;
      state.set(stamp(generation, TAKEN_OVER));
      c.hedgeDue();
    }
  }

  static <T> Outcome<T> run(Resilience policy, @Nullable Callable<T> callable, Resilience.@Nullable Work<T> work) {
    Ambient ambient = Ambient.get();
    SyncExecution driver = new SyncExecution(Thread.currentThread());
    driver.level = ambient.enter();
    try {
      Call call = driver.begin(policy, ambient, callable, work);
      driver.drive(callable, work, ambient);
      if (call.stopReason == StopReason.CANCELLED) {
        Thread.currentThread().interrupt(); // interrupts stop the call and keep the flag, in both styles
      }
      return call.toOutcome();
    } finally {
      ambient.exit();
    }
  }

  private Call begin(Resilience policy, Ambient ambient, @Nullable Callable<?> callable,
      Resilience.@Nullable Work<?> work) {
    this.callable = callable;
    this.work = work;
    ResilienceContext outer = ambient.context();
    boolean nested = ambient.insideRetryingCall();
    Call c = call.init(policy, policy.timeSource().nanoTime(), outer, this);
    c.start(nested);
    return c;
  }

  /** Carries out the core's plan until the call is over and its pause served. */
  private void drive(@Nullable Callable<?> callable, Resilience.@Nullable Work<?> work, Ambient ambient) {
    Call c = call;
    boolean interrupted = false;
    while (true) {
      if (finished) {
        if (!interrupted) {
          interrupted = pauseFor(pause);
        }
        break;
      }
      AttemptRecord next = toStart;
      if (next != null) {
        toStart = null;
        runAttempt(c, next, callable, work, ambient, ambient.slotAt(level), true);
        continue;
      }
      if (wakePending) {
        wakePending = false;
        int token = wakeToken;
        if (sleep(c.time, wakeDelay)) {
          c.wake(token);
        } else if (!finished && toStart == null) {
          // the caller's interrupt: the call ends now, cancelled, and the flag is kept
          interrupted = true;
          c.cancel();
        }
        continue;
      }
      // nothing handed over yet: another thread is delivering the plan; wait for it
      if (!sleep(c.time, Long.MAX_VALUE) && !finished && toStart == null && !wakePending) {
        interrupted = true;
        c.cancel();
      }
    }
    c.finishedNanos = c.time.nanoTime();
    this.callable = null;
    this.work = null;
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** True while the core has handed the owner something to do. */
  private boolean planReady(long nanos) {
    return finished || toStart != null || nanos == Long.MAX_VALUE && wakePending;
  }

  /**
   * Sleeps {@code nanos} on {@code time} ({@code Long.MAX_VALUE}: until woken) unless the core hands
   * over a plan first. Returns true when it slept the whole time or the core woke it, false when the
   * caller interrupted the thread (the flag is then clear; {@link #drive} puts it back).
   */
  private boolean sleep(TimeSource time, long nanos) {
    if (time == SystemTime.INSTANCE) {
      // the real clock: park, and let the core unpark us; an interrupt here is always the caller's
      long until = nanos == Long.MAX_VALUE ? 0 : System.nanoTime() + nanos;
      while (!planReady(nanos)) {
        if (nanos == Long.MAX_VALUE) {
          LockSupport.park(this);
        } else {
          long left = until - System.nanoTime();
          if (left <= 0) {
            return true;
          }
          LockSupport.parkNanos(this, left);
        }
        if (Thread.interrupted()) {
          return false;
        }
      }
      return true;
    }
    wait = WAITING;
    boolean callerInterrupt = false;
    // announced, then re-checked: a plan handed over in between is seen here or wakes us (Dekker).
    // A caller's interrupt that lands in the very instant the core wakes us merges with the core's
    // and is lost: only on a clock other than the real one, which has no caller to interrupt it.
    if (!planReady(nanos)) {
      try {
        if (nanos == Long.MAX_VALUE) {
          LockSupport.park(this);
          if (Thread.interrupted()) {
            throw new InterruptedException();
          }
        } else {
          time.sleep(nanos);
        }
      } catch (InterruptedException e) {
        callerInterrupt = true;
      }
    }
    if (!WAIT.compareAndSet(this, WAITING, NOT_WAITING)) {
      // the core is waking us: wait for its interrupt to land, then take it back
      while (wait != WOKEN) {
        Thread.onSpinWait();
      }
      Thread.interrupted();
      wait = NOT_WAITING;
      return true;
    }
    return !callerInterrupt;
  }

  /** Serves the guarded pause; true if the caller interrupted it (the pause is cut short). */
  private boolean pauseFor(long nanos) {
    if (nanos <= 0) {
      return false;
    }
    try {
      call.time.sleep(nanos);
      return false;
    } catch (InterruptedException e) {
      return true;
    }
  }

  /**
   * Runs {@code attempt} of {@code c} on this thread, timed by {@code slot} on the real clock.
   * {@code primary}: this is the call's owner running an attempt of its own (a hedge wake-up may
   * then ride on its slot); false for a hedge on an executor thread.
   */
  private void runAttempt(Call c, AttemptRecord attempt, @Nullable Callable<?> callable,
      Resilience.@Nullable Work<?> work, Ambient ambient, Watchdog.Slot slot, boolean primary) {
    if (primary) {
      primaryArming = true;
      hedgeDelay = Long.MAX_VALUE;
    }
    boolean begun;
    try {
      begun = c.begin(attempt);
    } finally {
      primaryArming = false;
    }
    if (!begun) {
      return;
    }
    long hedgeAfter = primary ? hedgeDelay : Long.MAX_VALUE;
    TimeSource time = c.time;
    long start = attempt.startNanos;
    long timeout = attempt.timeoutNanos;
    // Armed before the frame is pushed: a clock that cannot schedule leaves no stale frame behind.
    // On the real clock the slot is armed even without a timeout, so a drain's cut-off reaches it.
    Watchdog.Slot armed = null;
    ScheduledInterrupt scheduled = null;
    try {
      if (time == SystemTime.INSTANCE) {
        armed = hedgeAfter == Long.MAX_VALUE ? slot.arm(timeout) : slot.arm(timeout, hedgeAfter, this::hedgeDue);
      } else if (timeout != Long.MAX_VALUE) {
        scheduled = new ScheduledInterrupt(time, timeout);
      }
    } catch (RuntimeException | Error e) {
      c.attemptEnded(attempt, null, e, false, false);
      return;
    }
    Ambient.Frame frame = ambient.pushAttempt(start + timeout, timeout == Long.MAX_VALUE ? null : time,
        c.publishedCriticality, c.policy.attempts() > 1);
    Object result = null;
    Throwable failure = null;
    boolean fired;
    attempt.workStarting();
    try {
      result = callable != null ? callable.call()
          : Objects.requireNonNull(work, "work").call(
              new Attempt(attempt.number, timeout, c.remaining(start), attempt.kind == AttemptRecord.HEDGE,
                  c.criticality));
    } catch (Throwable t) {
      failure = t;
    } finally {
      fired = armed != null ? armed.disarm() : scheduled != null && scheduled.disarm();
      attempt.workReturned();
      ambient.pop(frame);
    }
    // a value that arrives is used even if the timeout fired as it came back
    boolean timedOut = fired && failure != null;
    boolean cancelled = !timedOut && failure != null && isCancelled(failure);
    c.attemptEnded(attempt, result, failure, timedOut, cancelled);
  }

  /**
   * An attempt that failed because the caller interrupted the thread (its flag still set), or with
   * an interrupt's own exception, was cancelled, not failed. An {@code InterruptedIOException}
   * without the flag is a client's own timeout: a failure like any other.
   */
  static boolean isCancelled(Throwable failure) {
    boolean interrupted = Thread.currentThread().isInterrupted();
    return interrupted || Call.isCancellation(failure, false);
  }

  @SuppressWarnings("unchecked")
  private static <T> @Nullable T finish(Call call) throws Exception {
    Throwable failure = call.failureToThrow(true);
    if (failure == null) {
      return (T) call.lastResult;
    }
    if (call.stopReason == StopReason.CANCELLED) {
      Thread.currentThread().interrupt(); // interrupts stop the call and keep the flag
    }
    return rethrow(failure);
  }

  /** Throws a stopped call's failure as the throw style does. */
  static <T> T rethrow(Throwable failure) throws Exception {
    if (failure instanceof Error) {
      throw (Error) failure;
    }
    if (failure instanceof Exception) {
      throw (Exception) failure;
    }
    throw new ResilienceException("attempt failed", failure);
  }

  /** For time sources other than the real clock: a scheduled task interrupts the owner. */
  private static final class ScheduledInterrupt implements Runnable {
    private static final int ARMED = 0;
    private static final int FIRING = 1;
    private static final int FIRED = 2;
    private static final int DISARMED = 3;

    private final Thread owner = Thread.currentThread();
    private final AtomicInteger state = new AtomicInteger(ARMED);
    private final TimeSource.Scheduled scheduled;

    ScheduledInterrupt(TimeSource time, long timeoutNanos) {
      this.scheduled = time.schedule(this, timeoutNanos);
    }

    @Override
    public void run() {
      // an owner already interrupted was cancelled by its caller: that interrupt stands, and wins
      if (!owner.isInterrupted() && state.compareAndSet(ARMED, FIRING)) {
        owner.interrupt();
        state.set(FIRED);
      }
    }

    /** Stops timing; true if the timeout fired (its interrupt has been cleared). */
    boolean disarm() {
      scheduled.cancel();
      if (state.compareAndSet(ARMED, DISARMED)) {
        return false;
      }
      while (state.get() != FIRED) {
        Thread.onSpinWait(); // the task is interrupting us: wait for it to land
      }
      Thread.interrupted();
      return true;
    }
  }
}
