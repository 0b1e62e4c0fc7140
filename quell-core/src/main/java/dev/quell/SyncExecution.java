package dev.quell;

import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The synchronous driver: carries out the core's plans on the caller's thread. It runs each attempt
 * there, sleeps the waits the core asks for on the time source, and serves the guarded pause; it
 * decides nothing. Call objects are pooled per thread and nesting level ({@link Ambient}), so a
 * synchronous call that retries allocates no call state.
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
  // the owner's wait, and the core waking it (a Dekker-style handshake, as the watchdog's)
  private static final int NOT_WAITING = 0;
  private static final int WAITING = 1;
  private static final int WAKING = 2;
  private static final int WOKEN = 3;

  final Call call = new Call();
  private final Thread owner = Thread.currentThread();
  private final AtomicInteger wait = new AtomicInteger();
  /** Set while the owner starts an attempt of its own: a hedge wake-up then rides on its slot. */
  private boolean primaryArming;
  private long hedgeDelay = Long.MAX_VALUE;
  private int hedgeToken;
  /** Hands the hedge wake-up from the watchdog to the hedge executor (made once per driver). */
  private final Runnable hedgeFromWatchdog = this::hedgeDue;

  private void hedgeDue() {
    Call c = call;
    Hedge h = c.policy.hedge;
    int token = hedgeToken;
    if (h != null) {
      h.executor().execute(() -> c.wake(token));
    }
  }

  /** The timed fast path's attempt record, reused. */
  private final AttemptRecord scratch = new AttemptRecord();
  /** This nesting level's attempt timer on the real clock. */
  private Watchdog.@Nullable Slot slot;

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
  private static void runHedge(Call c, AttemptRecord attempt, @Nullable Callable<?> callable,
      Resilience.@Nullable Work<?> work) {
    Ambient ambient = Ambient.get();
    SyncExecution here = ambient.acquireDriver();
    try {
      here.runAttempt(c, attempt, callable, work, ambient);
    } finally {
      ambient.releaseDriver(here);
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
   * Ends the owner's wait early, if it is waiting. The plan may come from another thread, or — on a
   * virtual clock, whose sleep runs due timers on the sleeping thread — from the owner itself, in the
   * middle of its own sleep: the interrupt then stops that sleep at this instant.
   */
  private void wakeOwner() {
    if (wait.compareAndSet(WAITING, WAKING)) {
      owner.interrupt();
      wait.set(WOKEN);
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
          policy.budget().deposit(); // the core's decision for an OK verdict: credit and stop
          return result;
        }
      }
      return afterFastAttempt(policy, callable, ambient, slot, result, failure, timedOut, verdict);
    }
    SyncExecution driver = ambient.acquireDriver();
    try {
      if (callable != null && ambient.depth() == 0 && !ambient.inFastAttempt() && !Draining.isDraining()) {
        if (policy.timedFastPath) {
          return driver.timedFast(policy, callable, ambient);
        }
        if (policy.hedgedFastPath) {
          return driver.hedgedFast(policy, callable, ambient);
        }
      }
      Call call = driver.begin(policy, ambient, callable, work);
      driver.drive(callable, work, ambient);
      return finish(call);
    } finally {
      ambient.releaseDriver(driver);
    }
  }

  /**
   * The first attempt of a call whose gates (breaker, limiters) or measured timing need the clock,
   * when nothing listens: the same gates asked in the same order, the same attempt ceiling, one
   * clock read (two when latency is measured or a gate needs the end time; none when every gate
   * takes the watchdog's coarse time, {@link Resilience#fastCoarseTime}) and no allocation; only an attempt that does not come back OK sets up the call,
   * with the verdict reached and the permits held. A gate's refusal is handed to the core, which
   * ends the call as it ends any refused first attempt. (Gates that can make an attempt wait are
   * left to the core.)
   */
  private <T> @Nullable T timedFast(Resilience policy, Callable<T> callable, Ambient ambient) throws Exception {
    // when every gate decides alike on the watchdog's last sighting of the clock (a steady closed
    // breaker with a window of seconds, a concurrency limit), a success reads no clock at all
    boolean coarse = policy.fastCoarseTime;
    long start = coarse ? Watchdog.INSTANCE.sighting() : System.nanoTime();
    long timeout = Math.min(policy.attemptCeilingNanos(start), policy.deadlineNanos);
    AttemptRecord r = scratch.reset(1, AttemptRecord.FIRST, Criticality.CRITICAL, start, policy.markSlots);
    r.timeoutNanos = policy.deadlineNanos; // what the gates may use: the time left before the deadline
    r.coarseNow = coarse;
    Gate[] gates = policy.gates;
    int admitted = 0;
    for (int i = 0; i < gates.length; i++) {
      if (i != policy.budgetGateIndex) { // first attempts are never charged nor refused by the budget
        if (!gates[i].tryAdmit(r, i, start)) {
          // refused: give back what the earlier gates admitted, and let the core end the call
          // exactly as it ends one whose first attempt it refused itself
          if (coarse) {
            start = System.nanoTime(); // the call's own start is exact
          }
          releaseFast(policy, r, admitted, Gate.NOT_STARTED, start);
          reset();
          Call call = this.call.init(policy, start, null, this);
          call.startRefused(gates[i].refusal(), r.retryAfterNanos);
          drive(callable, null, ambient);
          return finish(call);
        }
      }
      admitted = i + 1;
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
    long end = policy.fastEndTime ? System.nanoTime() : coarse ? Watchdog.INSTANCE.sighting() : start;
    Verdict verdict = null;
    if (failure == null && !timedOut) {
      verdict = Call.classify(policy.classifier(), result, null);
      if (verdict.kind() == Verdict.Kind.OK) {
        // the core's decision for an OK verdict: release as succeeded, credit, measure, stop
        releaseFast(policy, r, admitted, Gate.SUCCEEDED, end);
        policy.budget().deposit();
        policy.recordLatency(end - start, end);
        return result;
      }
    }
    if (coarse) {
      start = slot.startEstimate(System.nanoTime()); // as the plainest path: the watchdog's first sighting of it
    }
    reset();
    this.callable = callable;
    this.work = null;
    Call call = this.call.init(policy, start, null, this);
    AttemptRecord first = call.adoptFirst(start, timeout, admitted, r.marks);
    boolean cancelled = !timedOut && failure != null && isCancelled(failure);
    call.attemptEnded(first, result, failure, timedOut, cancelled, cancelled ? null : verdict);
    drive(callable, null, ambient);
    return finish(call);
  }

  // The hedged fast path: the first attempt runs as on the plainest path, and its watchdog slot
  // times the hedge. If the attempt answers first, nothing else happens. If the hedge falls due
  // first, its task takes the call over on the hedge executor — sets up the call with the running
  // attempt adopted as attempt 1, and sends the hedge — and the owner, when its attempt returns,
  // reports to that call and drives it like any other. A CAS on fastState decides who was first;
  // it carries a generation, so a take-over late for one call can never touch the next.
  private static final long FAST_RUNNING = 1;
  private static final long FAST_DONE = 2;
  private static final long FAST_TAKING_OVER = 3;
  private static final long FAST_TAKEN_OVER = 4;
  private final java.util.concurrent.atomic.AtomicLong fastState = new java.util.concurrent.atomic.AtomicLong();
  private @Nullable Resilience fastPolicy;
  private @Nullable Callable<?> fastCallable;
  private volatile Watchdog.@Nullable Slot fastSlot;
  /** Whether the hedge delay came from the histogram, and then when the first attempt started (read exactly). */
  private boolean fastMeasured;
  private long fastStart;
  private volatile @Nullable AttemptRecord fastPrimary;
  /** Runs on the watchdog thread: only hands the take-over to the hedge executor. */
  private final Runnable fastHedgeDue = this::fastHedgeDue;

  private static long fast(long generation, long state) {
    return generation << 3 | state;
  }

  private <T> @Nullable T hedgedFast(Resilience policy, Callable<T> callable, Ambient ambient) throws Exception {
    Hedge hedge = Objects.requireNonNull(policy.hedge);
    // a hedge by maxExtraLoad reads its delay from the policy's histogram and feeds it: the only
    // path here that reads the clock (twice, to measure the attempt), as the core would
    boolean measured = policy.latencies != null;
    long start = measured ? System.nanoTime() : 0;
    long delay = measured ? policy.hedgeDelayNanos(start) : hedge.fixedDelayNanos();
    fastPolicy = policy;
    fastCallable = callable;
    fastPrimary = null;
    fastMeasured = measured;
    fastStart = start;
    long generation = (fastState.get() >>> 3) + 1;
    fastState.set(fast(generation, FAST_RUNNING));
    Watchdog.Slot slot = ambient.armFast(policy.firstAttemptTimeoutNanos, true, delay, fastHedgeDue);
    fastSlot = slot;
    T result = null;
    Throwable failure = null;
    try {
      result = callable.call();
    } catch (Throwable t) {
      failure = t;
    }
    boolean timedOut = slot.disarm() && failure != null;
    if (fastState.compareAndSet(fast(generation, FAST_RUNNING), fast(generation, FAST_DONE))) {
      // answered before any hedge: exactly the plainest path
      Verdict verdict = null;
      if (failure == null && !timedOut) {
        verdict = Call.classify(policy.classifier(), result, null);
        if (verdict.kind() == Verdict.Kind.OK) {
          if (measured) {
            long end = System.nanoTime();
            policy.recordLatency(end - start, end);
          }
          policy.budget().deposit();
          return result;
        }
      }
      if (!measured) {
        start = slot.startEstimate(System.nanoTime());
      }
      reset();
      this.callable = callable;
      this.work = null;
      Call c = call.init(policy, start, null, this);
      AttemptRecord first = c.adoptFirst(start, policy.firstAttemptTimeoutNanos, policy.gates.length, null);
      boolean cancelled = !timedOut && failure != null && isCancelled(failure);
      c.attemptEnded(first, result, failure, timedOut, cancelled, cancelled ? null : verdict);
      drive(callable, null, ambient);
      return finish(c);
    }
    // the hedge's task took the call over while the attempt ran: report to it, then drive it
    while (fastState.get() != fast(generation, FAST_TAKEN_OVER)) {
      Thread.onSpinWait();
    }
    AttemptRecord primary = Objects.requireNonNull(fastPrimary);
    primary.workReturned(); // a cancel's interrupt (a hedge won) is taken back
    boolean cancelled = !timedOut && failure != null && isCancelled(failure);
    call.attemptEnded(primary, result, failure, timedOut, cancelled);
    drive(callable, null, ambient);
    return finish(call);
  }

  private void fastHedgeDue() {
    Resilience p = fastPolicy;
    long state = fastState.get();
    if (p != null && p.hedge != null && (state & 7) == FAST_RUNNING) {
      long generation = state >>> 3;
      p.hedge.executor().execute(() -> takeOver(generation)); // (allocates only when a hedge is due)
    }
  }

  /** On the hedge executor: sets up the call around the running first attempt and sends the hedge. */
  private void takeOver(long generation) {
    if (!fastState.compareAndSet(fast(generation, FAST_RUNNING), fast(generation, FAST_TAKING_OVER))) {
      return; // the attempt answered first
    }
    Resilience p = Objects.requireNonNull(fastPolicy);
    Watchdog.Slot s = fastSlot;
    long now = System.nanoTime();
    long start = fastMeasured ? fastStart : s == null ? now : s.startEstimate(now);
    reset();
    this.callable = fastCallable;
    this.work = null;
    Call c = call.init(p, start, null, this);
    AttemptRecord primary = c.adoptFirst(start, p.firstAttemptTimeoutNanos, p.gates.length, null);
    primary.workStartingOn(owner);
    fastPrimary = primary;
    fastState.set(fast(generation, FAST_TAKEN_OVER));
    c.hedgeDue();
  }

  private static void releaseFast(Resilience policy, AttemptRecord r, int admitted, int how, long now) {
    Gate[] gates = policy.gates;
    for (int i = admitted - 1; i >= 0; i--) {
      if (i != policy.budgetGateIndex) {
        gates[i].release(r, i, how, now);
      }
    }
  }

  static <T> Outcome<T> run(Resilience policy, @Nullable Callable<T> callable, Resilience.@Nullable Work<T> work) {
    Ambient ambient = Ambient.get();
    SyncExecution driver = ambient.acquireDriver();
    try {
      Call call = driver.begin(policy, ambient, callable, work);
      driver.drive(callable, work, ambient);
      if (call.stopReason == StopReason.CANCELLED) {
        Thread.currentThread().interrupt(); // interrupts stop the call and keep the flag, in both styles
      }
      return call.toOutcome();
    } finally {
      ambient.releaseDriver(driver);
    }
  }

  /** Hands a first attempt that did not come back OK to the core, which decides from there. */
  private static <T> @Nullable T afterFastAttempt(Resilience policy, Callable<T> callable, Ambient ambient,
      Watchdog.Slot slot, @Nullable Object result, @Nullable Throwable failure, boolean timedOut,
      @Nullable Verdict verdict) throws Exception {
    long now = System.nanoTime();
    long start = slot.startEstimate(now);
    SyncExecution driver = ambient.acquireDriver();
    try {
      driver.reset();
      driver.callable = callable;
      driver.work = null;
      Call call = driver.call.init(policy, start, null, driver);
      AttemptRecord first = call.adoptFirst(start, policy.firstAttemptTimeoutNanos, policy.gates.length, null);
      boolean cancelled = !timedOut && failure != null && isCancelled(failure);
      call.attemptEnded(first, result, failure, timedOut, cancelled, cancelled ? null : verdict);
      driver.drive(callable, null, ambient);
      return finish(call);
    } finally {
      ambient.releaseDriver(driver);
    }
  }

  private Watchdog.Slot slot() {
    Watchdog.Slot s = slot;
    if (s == null) {
      s = slot = Watchdog.INSTANCE.newSlot();
    }
    return s;
  }

  private SyncExecution reset() {
    toStart = null;
    wakePending = false;
    finished = false;
    pause = 0;
    wait.set(NOT_WAITING);
    return this;
  }

  private Call begin(Resilience policy, Ambient ambient, @Nullable Callable<?> callable,
      Resilience.@Nullable Work<?> work) {
    reset();
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
        runAttempt(c, next, callable, work, ambient);
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

  /**
   * Sleeps {@code nanos} on {@code time} ({@code Long.MAX_VALUE}: until woken) unless the core hands
   * over a plan first. Returns true when it slept the whole time or the core woke it, false when the
   * caller interrupted the thread (the flag is then clear; {@link #drive} puts it back). A caller's
   * interrupt that lands in the very instant the core wakes us merges with the core's and is lost.
   */
  private boolean sleep(TimeSource time, long nanos) {
    wait.set(WAITING);
    boolean callerInterrupt = false;
    // announced, then re-checked: a plan handed over in between is seen here or wakes us (Dekker)
    if (!finished && toStart == null && !(nanos == Long.MAX_VALUE && wakePending)) {
      try {
        if (nanos == Long.MAX_VALUE) {
          java.util.concurrent.locks.LockSupport.park(this);
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
    if (!wait.compareAndSet(WAITING, NOT_WAITING)) {
      // the core is waking us: wait for its interrupt to land, then take it back
      while (wait.get() != WOKEN) {
        Thread.onSpinWait();
      }
      Thread.interrupted();
      wait.set(NOT_WAITING);
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

  private void runAttempt(Call c, AttemptRecord attempt, @Nullable Callable<?> callable,
      Resilience.@Nullable Work<?> work, Ambient ambient) {
    boolean mine = Thread.currentThread() == owner;
    if (mine) {
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
    long hedgeAfter = mine ? hedgeDelay : Long.MAX_VALUE;
    TimeSource time = c.time;
    long start = attempt.startNanos;
    long timeout = attempt.timeoutNanos;
    // Armed before the frame is pushed: a clock that cannot schedule leaves no stale frame behind.
    // On the real clock the slot is armed even without a timeout, so a drain's cut-off reaches it.
    Watchdog.Slot armed = null;
    ScheduledInterrupt scheduled = null;
    try {
      if (time == SystemTime.INSTANCE) {
        armed = hedgeAfter == Long.MAX_VALUE ? slot().arm(timeout) : slot().arm(timeout, hedgeAfter, hedgeFromWatchdog);
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
  private static boolean isCancelled(Throwable failure) {
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
