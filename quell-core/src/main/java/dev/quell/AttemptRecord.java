package dev.quell;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * The core's record of one attempt of a call: its number, kind, when it was admitted and started,
 * its timeout and state, and what each gate needs to release it. A call holds one per attempt, so
 * that more than one can be in flight (hedging). Records are owned by their {@link Call} and reused
 * when the call is; only the call's lock guards the mutable state, except where marked.
 */
final class AttemptRecord implements Runnable, BiFunction<@Nullable Object, @Nullable Throwable, @Nullable Object> {
  private static final VarHandle INTERRUPTION;
  private static final VarHandle SETTLED;
  private static final VarHandle TIMER;
  private static final VarHandle STAGE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      INTERRUPTION = lookup.findVarHandle(AttemptRecord.class, "interruption", int.class);
      SETTLED = lookup.findVarHandle(AttemptRecord.class, "settled", int.class);
      TIMER = lookup.findVarHandle(AttemptRecord.class, "timer", TimeSource.Scheduled.class);
      STAGE = lookup.findVarHandle(AttemptRecord.class, "stage", CompletableFuture.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The call's first attempt: never charged to the budget. */
  static final int FIRST = 0;
  /** A retry after a failed attempt. */
  static final int RETRY = 1;
  /** A hedge started beside an attempt still in flight. */
  static final int HEDGE = 2;

  // states
  /** Admission is being decided (or the record is free). */
  static final int NEW = 0;
  /** Admitted; the driver has been asked to start it (after {@link #waitNanos}). */
  static final int PLANNED = 1;
  /** Queued at a gate for a permit. */
  static final int QUEUED = 2;
  /** The work is running. */
  static final int RUNNING = 3;
  /** Ended and released (if it ran, its driver may still be stopping its work). */
  static final int ENDED = 5;

  /** 1 for the call's first attempt; every attempt, hedges included, has its own number. */
  int number;
  /** {@link #FIRST}, {@link #RETRY} or {@link #HEDGE}. */
  int kind;
  Criticality criticality = Criticality.CRITICAL;
  int state;
  /** When the gates admitted it. */
  long admittedNanos;
  /** When the work started (the admission time until then). */
  long startNanos;
  /** How long it may run; {@code Long.MAX_VALUE} for no limit. */
  long timeoutNanos;
  /** How many gates (a prefix of the call's gate list) admitted it and must release it. */
  int admitted;
  /** Per gate, one long the gate keeps for its release (a probe marker, a sample). */
  long @Nullable [] marks;
  /** Set by a refusing gate: when it expects to admit again; -1 when it cannot tell. */
  long retryAfterNanos = -1;
  /** Set by an admitting gate: the permit is reserved, but the attempt may start only this much later. */
  long waitNanos;
  /**
   * The {@code now} the gates are handed for this attempt is the watchdog's last clock sighting (the
   * synchronous fast path's coarse time, {@link Gate#coarseTime}), not a reading: a gate that needs
   * exact time for a rarer decision reads its own clock.
   */
  boolean coarseNow;
  /** Set by a gate that handed a queued attempt its permit. Written by the releasing thread. */
  volatile boolean granted;
  /**
   * Set by a circuit breaker whose {@code tryAdmit} or {@code release} for this attempt moved it to
   * another state: the new {@link CircuitBreaker.State}'s ordinal, so the core can report the
   * transition with this call; -1 for none. The breaker only sets it: the core reads it after each
   * of those calls and puts it back to -1.
   */
  int breakerTransition = -1;
  /** The driver's handle on the running work (its future, its thread), for cancellation. */
  @Nullable Object handle;

  // A synchronous attempt's thread, and the handshake that lets the core interrupt it to cancel it
  // without the interrupt leaking into whatever that thread does next.
  static final int NOT_RUNNING = 0;
  static final int RUNNING_WORK = 1;
  static final int INTERRUPTING = 2;
  static final int INTERRUPTED = 3;
  private volatile int interruption;
  volatile @Nullable Thread runner;

  /** The work starts on this thread: the core may interrupt it to cancel it. */
  void workStarting() {
    workStartingOn(Thread.currentThread());
  }

  /** The work runs (or already runs) on {@code thread}: the core may interrupt it to cancel it. */
  void workStartingOn(Thread thread) {
    runner = thread;
    interruption = RUNNING_WORK;
  }

  /** The core ended this attempt while its work ran: interrupt the thread running it (once). */
  void interruptRunner() {
    Thread t = runner;
    if (t != null && INTERRUPTION.compareAndSet(this, RUNNING_WORK, INTERRUPTING)) {
      t.interrupt();
      interruption = INTERRUPTED;
    }
  }

  /** The work returned: if the core interrupted it to cancel it, take that interrupt back. */
  void workReturned() {
    if (!INTERRUPTION.compareAndSet(this, RUNNING_WORK, NOT_RUNNING)) {
      while (interruption == INTERRUPTING) {
        Thread.onSpinWait();
      }
      Thread.interrupted();
      interruption = NOT_RUNNING;
    }
    runner = null;
  }

  // An asynchronous attempt: its future and timer, and who settled it (its completion or its
  // timeout, whichever wins a CAS). The record is the timer's task and the future's callback, so an
  // attempt allocates no closure for either.
  volatile @Nullable CompletableFuture<?> stage;
  volatile TimeSource.@Nullable Scheduled timer;
  private volatile int settled;
  /** Who hears the timer and the future: the asynchronous driver that started the work. */
  @Nullable AsyncTarget target;

  /** The asynchronous driver's side of an attempt. */
  interface AsyncTarget {
    void attemptCompleted(AttemptRecord attempt, @Nullable Object value, @Nullable Throwable failure);

    void attemptTimedOut(AttemptRecord attempt);
  }

  /** Settles the attempt once: true for the first of completion, timeout and cancellation to ask. */
  boolean settle() {
    return SETTLED.compareAndSet(this, 0, 1);
  }

  /**
   * Sets the attempt's timer; for a call confined to one thread ({@code ConfinedTime}), on that
   * thread, with a plain write (no fence): no other thread reads it.
   */
  void setTimer(TimeSource.Scheduled t, boolean confined) {
    if (confined) {
      TIMER.set(this, t);
    } else {
      timer = t;
    }
  }

  /** Sets the attempt's stage, as {@link #setTimer}. */
  void setStage(CompletableFuture<?> s, boolean confined) {
    if (confined) {
      STAGE.set(this, s);
    } else {
      stage = s;
    }
  }

  /**
   * As {@link #settle()}, without an atomic operation: only for a call confined to one thread
   * ({@code ConfinedTime}), on that thread, where completion, timeout and cancellation cannot race.
   */
  boolean settleConfined() {
    if ((int) SETTLED.get(this) != 0) {
      return false;
    }
    SETTLED.set(this, 1);
    return true;
  }

  /** True once completion, timeout or cancellation has settled it. */
  boolean isSettled() {
    return settled != 0;
  }

  /** The attempt timer fired. */
  @Override
  public void run() {
    AsyncTarget t = target;
    if (t != null) {
      t.attemptTimedOut(this);
    }
  }

  /** The attempt's future completed (used with {@code handle}, so its dependent completes normally). */
  @Override
  public @Nullable Object apply(@Nullable Object value, @Nullable Throwable failure) {
    AsyncTarget t = target;
    if (t != null) {
      t.attemptCompleted(this, value, failure);
    }
    return null;
  }

  /** Resets the record for a new attempt. */
  AttemptRecord reset(int number, int kind, Criticality criticality, long now, int gates) {
    this.number = number;
    this.kind = kind;
    if (this.criticality != criticality) {
      this.criticality = criticality; // (a reference store pays the collector's write barrier: skip it when unchanged)
    }
    this.state = NEW;
    this.admittedNanos = now;
    this.startNanos = now;
    this.timeoutNanos = Long.MAX_VALUE;
    this.admitted = 0;
    long[] m = marks;
    if (gates > 0 && (m == null || m.length < gates)) {
      marks = new long[gates];
    } else if (m != null) {
      java.util.Arrays.fill(m, 0L);
    }
    this.retryAfterNanos = -1;
    this.waitNanos = 0;
    this.coarseNow = false;
    this.breakerTransition = -1;
    if (handle != null) {
      this.handle = null;
    }
    if (target != null) {
      this.target = null;
    }
    // the volatile fields are written only when they differ: a volatile write is a full fence
    // (six of them were a quarter of a gated call's time), and a record a fast path used for an
    // attempt that answered at once still holds every one of these values
    if (granted) {
      granted = false;
    }
    if (runner != null) {
      runner = null;
    }
    if (interruption != NOT_RUNNING) {
      interruption = NOT_RUNNING;
    }
    if (stage != null) {
      stage = null;
    }
    if (timer != null) {
      timer = null;
    }
    if (settled != 0) {
      settled = 0;
    }
    return this;
  }

  /** True for retries and hedges, which the retry budget funds. */
  boolean isAdditional() {
    return kind != FIRST;
  }

  @Override
  public String toString() {
    return "AttemptRecord[" + number + (kind == HEDGE ? " hedge" : kind == RETRY ? " retry" : " first") + ", state="
        + state + "]";
  }
}
