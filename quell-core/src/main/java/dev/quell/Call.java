package dev.quell;

import dev.quell.internal.CallObserver;
import dev.quell.internal.ConfinedTime;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The decision core: one call as a small state machine, and the only place where Quell decides what
 * happens next. Drivers feed it inputs — {@link #start}, an attempt began ({@link #begin}) or ended
 * ({@link #attemptEnded}), a wake-up came due ({@link #wake}), a queued permit was handed over
 * ({@link #granted}), the caller cancelled ({@link #cancel}) — and carry out the plan it hands back
 * through {@link Driver}: start this attempt, cancel that one, wake me after D, finish after pause P.
 * The synchronous driver, the asynchronous driver and (through a virtual {@link TimeSource}) the
 * simulator all carry out the same plans; none of them decides anything.
 *
 * <p>It holds a record per attempt ({@link AttemptRecord}), so more than one attempt can be in
 * flight, and asks one ordered list of {@link Gate}s before every attempt: draining, deadline,
 * breaker, limiters, and — for retries and hedges only, last — the retry budget.
 *
 * <p>The invariants hold by construction, whatever the drivers do:
 * <ul>
 *   <li>Inputs are taken under the call's lock; the plan and the events they produce go into an
 *       outbox that is delivered outside the lock, by one thread at a time, in order. A listener
 *       that re-enters the call (cancels it from an event) only adds to the outbox; the delivering
 *       thread carries that out next. Nothing recurses, so retries never grow the stack.
 *   <li>Exactly one terminal event: {@link #stop} runs once; after it no input changes the outcome.
 *   <li>No attempt starts after the terminal event: {@link #begin} is the last word on whether
 *       work may start, and it refuses once the call has stopped. A start planned before the stop
 *       reaches the driver before the stop's events do, because the outbox keeps order.
 *   <li>Every gate that admitted an attempt is released exactly once ({@link #release}), on every
 *       exit path: the attempt ended, was cancelled, threw, or never started.
 * </ul>
 *
 * <p>It runs on any {@code TimeSource}, starts no thread and never blocks: waiting is the driver's.
 */
class Call {
  /** What a driver does for the core. Called outside the call's lock, in order, by one thread at a time. */
  interface Driver {
    /** Start the work of {@code attempt} now (after {@link Call#begin} says it may). */
    void start(Call call, AttemptRecord attempt);

    /** Stop the work of {@code attempt}, which is running: its end is still to be reported. */
    void cancel(Call call, AttemptRecord attempt);

    /**
     * Call {@link Call#wake} with {@code token} after {@code delayNanos}: a backoff or a wait for a
     * permit, while no attempt runs (a synchronous driver may sleep its caller's thread for it).
     */
    void wakeAfter(Call call, long delayNanos, int token);

    /**
     * Call {@link Call#wake} with {@code token} after {@code delayNanos} while attempts run (the
     * next hedge is due): a timer, since the caller's thread may be busy in an attempt.
     */
    void wakeWhileRunning(Call call, long delayNanos, int token);

    /** The call is over: deliver its outcome, after serving the guarded pause of {@code pauseNanos}. */
    void finish(Call call, long pauseNanos);
  }

  // phases
  private static final int NEW = 0;
  /** One or more attempts run; nothing else is pending. */
  private static final int RUNNING = 1;
  /** Waiting out a backoff (or a gate's wait) before the next admission or start. */
  private static final int WAITING = 2;
  /** An attempt is queued at a gate for a permit. */
  private static final int QUEUED = 3;
  /** Stopped; the outcome is fixed. */
  private static final int DONE = 4;

  // what a wake-up is for
  private static final int WAKE_ADMIT = 1;
  private static final int WAKE_START = 2;
  private static final int WAKE_QUEUE = 3;
  private static final int WAKE_HEDGE = 4;

  // outbox entries
  private static final int FX_EVENT = 1;
  private static final int FX_START = 2;
  private static final int FX_CANCEL = 3;
  private static final int FX_WAKE = 4;
  private static final int FX_FINISH = 5;
  private static final int FX_DISCARD = 6;
  private static final int FX_WAKE_RUNNING = 7;

  // ---------------------------------------------------------------- configuration, fixed per call

  Resilience policy;
  TimeSource time;
  /**
   * The thread every input comes on when {@link #time} is confined to one ({@link ConfinedTime}):
   * then the inputs that come on it most (start, begin, an attempt's end, a wake-up, and the
   * delivery's hand-back) take no lock, since nothing can run beside them; null otherwise.
   */
  private @Nullable Thread confinedTo;
  RetryBudget budget;
  private Gate[] gates;
  /** Index of the budget's gate in {@link #gates}, or -1. */
  private int budgetGate;
  long startNanos;
  /** Nanoseconds from {@link #startNanos} to the deadline; Long.MAX_VALUE for none. Only differences are compared. */
  long deadlineNanos;
  Criticality criticality;
  /** The criticality to publish to nested calls, or null when the caller's context has no label. */
  @Nullable Criticality publishedCriticality;
  private List<ResilienceListener> listeners;
  private CallObserver[] observers;
  private boolean observed;
  private Driver driver;

  // ---------------------------------------------------------------- state, guarded by this

  private int phase;
  private AttemptRecord[] records = new AttemptRecord[2];
  /** Records in use: every attempt admitted or being admitted. */
  private int recordCount;
  /** Attempts that started their work; what {@link Outcome#attempts()} reports. */
  int attempts;
  private int inFlight;
  /** Attempts admitted whose start the driver has been asked for, not yet begun. */
  private int planned;
  /** The policy's hedging, or null; and what this call did with it. */
  private @Nullable Hedge hedge;
  private int hedges;
  private boolean hedging;
  private long hedgeDelayNanos;
  /** The record being admitted, queued or waiting to start. */
  private @Nullable AttemptRecord pending;
  private int pendingKind;
  private int queuedGate = -1;
  private int wakeToken;
  private int wakeFor;

  @Nullable StopReason stopReason;
  long pauseNanos;
  /** Retry-After of the refusing gate, or -1. */
  private long refusalRetryAfterNanos = -1;
  long endNanos;

  @Nullable Object lastResult;
  @Nullable Throwable lastFailure;
  boolean lastHasValue;
  @Nullable Verdict lastVerdict;
  /** When the driver delivered the outcome (after the guarded pause, if any). */
  long finishedNanos;

  // Draining's list of waiting calls (guarded by Draining's stripe lock, changed under this one)
  boolean watched;
  int waitStripe;
  @Nullable Call waitPrev;
  @Nullable Call waitNext;

  // the outbox: a queue of effects (pooled per thread), delivered in batches outside the lock
  private @Nullable Effect outHead;
  private @Nullable Effect outTail;
  private boolean delivering;
  /** Set while a thread is inside {@link #deliverClaimed}: which one, for re-entrancy. */
  private @Nullable Thread deliverer;

  @SuppressWarnings("NullAway.Init") // init() sets every field before the call is used; a driver calls it at once
  Call() {}

  /** Sets up this new call object. Once per object: a call's state is never handed to another call. Before {@link #start}. */
  Call init(Resilience policy, long now, @Nullable ResilienceContext ambient, Driver driver) {
    this.policy = policy;
    this.time = policy.timeSource();
    this.confinedTo = time instanceof ConfinedTime ? ((ConfinedTime) time).owner() : null;
    this.budget = policy.budget();
    this.gates = policy.gates;
    this.budgetGate = policy.budgetGateIndex;
    this.startNanos = now;
    long deadline = policy.deadlineNanos;
    Criticality c = Criticality.CRITICAL;
    Criticality published = null;
    if (ambient != null) {
      if (policy.useAmbientDeadline()) {
        // the effective deadline is the earlier of ours and the caller's, resolved once per call
        deadline = Math.min(deadline, ambient.remainingOn(time, now));
      }
      if (ambient.hasCriticality()) {
        published = ambient.criticality();
        if (policy.useAmbientCriticality()) {
          c = published;
        }
      }
    }
    this.deadlineNanos = deadline;
    this.criticality = c;
    this.publishedCriticality = published;
    this.listeners = policy.eventListeners;
    this.observers = policy.observers;
    this.observed = !listeners.isEmpty() || observers.length > 0;
    this.driver = driver;
    Hedge h = policy.hedge;
    this.hedge = h;
    // SHEDDABLE work is never hedged; a call of one attempt has nothing to hedge with
    this.hedging = h != null && c != Criticality.SHEDDABLE && policy.attempts() > 1;
    this.hedgeDelayNanos = hedging ? policy.hedgeDelayNanos(now) : Long.MAX_VALUE;
    this.endNanos = now;
    this.finishedNanos = now;
    return this;
  }


  // ---------------------------------------------------------------- inputs

  /** Starts the call: emits the nested-retry event if asked, then admits the first attempt. */
  void start(boolean nestedInsideRetryingCall) {
    Effect batch;
    if (onConfinedThread()) {
      batch = startLocked(nestedInsideRetryingCall);
    } else {
      synchronized (this) {
        batch = startLocked(nestedInsideRetryingCall);
      }
    }
    deliverClaimed(batch);
  }

  /** True on the thread the call is confined to (see {@link #confinedTo}): nothing else can run beside it. */
  final boolean onConfinedThread() {
    return confinedTo == Thread.currentThread();
  }

  private @Nullable Effect startLocked(boolean nestedInsideRetryingCall) {
    long now = time.nanoTime();
    budget.callStarted();
    if (hedging) {
      creditHedgeAllowance(policy);
    }
    phase = RUNNING;
    if (nestedInsideRetryingCall && policy.attempts() > 1) {
      event(ResilienceEvent.Type.NESTED_RETRY, now, 0, null, 0);
    }
    admit(AttemptRecord.FIRST, now);
    return claimOutbox();
  }

  /**
   * Starts a call whose first attempt a gate already refused (the synchronous fast path asked the
   * gates itself and gave back what the earlier ones admitted): the same refusal as the core's own.
   */
  void startRefused(StopReason reason, long retryAfterNanos) {
    Effect batch;
    synchronized (this) {
      budget.callStarted();
      phase = RUNNING;
      refuse(reason, retryAfterNanos, time.nanoTime());
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  /**
   * Starts the first attempt that a driver already ran before the call existed (the synchronous
   * fast path), so the core takes over from its end. The attempt was admitted by the fast path's
   * own gate checks, recorded in {@code admitted}.
   */
  AttemptRecord adoptFirst(long attemptStart, long timeoutNanos, int admitted, long @Nullable [] marks) {
    synchronized (this) {
      budget.callStarted();
      phase = RUNNING;
      return adoptLocked(AttemptRecord.FIRST, attemptStart, timeoutNanos, admitted, marks);
    }
  }

  /**
   * Takes over, with its retry still running, a call that the asynchronous in-place lane carried
   * this far ({@code RetryLoop}): attempts {@code 1..attemptsSoFar} have ended (the last with
   * {@code result}, {@code failure}, {@code verdict}) and no gate holds anything of them; the retry
   * started at {@code attemptStart}, admitted by {@code admitted} gates. The core hears its end as
   * it hears any attempt's.
   */
  AttemptRecord adoptRetry(int attemptsSoFar, @Nullable Object result, @Nullable Throwable failure, Verdict verdict,
      long attemptStart, long timeoutNanos, int admitted) {
    synchronized (this) {
      budget.callStarted();
      resumed(attemptsSoFar, result, failure, verdict);
      phase = RUNNING;
      Draining.watch(this);
      return adoptLocked(AttemptRecord.RETRY, attemptStart, timeoutNanos, admitted, null);
    }
  }

  private AttemptRecord adoptLocked(int kind, long attemptStart, long timeoutNanos, int admitted,
      long @Nullable [] marks) {
    AttemptRecord r = newRecord(kind, attemptStart);
    r.admitted = admitted;
    if (marks != null && r.marks != null) {
      System.arraycopy(marks, 0, r.marks, 0, Math.min(marks.length, r.marks.length));
    }
    r.timeoutNanos = timeoutNanos;
    r.state = AttemptRecord.RUNNING;
    r.number = ++attempts;
    inFlight++;
    if (observed) {
      event(ResilienceEvent.Type.ATTEMPT_STARTED, attemptStart, r.number, r, 0); // the lane ran it unobserved
    }
    return r;
  }

  /** What a call taken over from a fast lane knows of the attempts that lane ran (all ended). */
  private void resumed(int attemptsSoFar, @Nullable Object result, @Nullable Throwable failure,
      @Nullable Verdict verdict) {
    attempts = attemptsSoFar;
    lastResult = result;
    lastFailure = failure;
    lastHasValue = failure == null;
    lastVerdict = verdict;
  }

  /**
   * Takes over, at the wait before its next retry, a call that the synchronous fast lanes carried
   * this far ({@code RetryLoop}): its attempts have all ended and no gate holds
   * anything of them. The core waits {@code delay} (cut short by a drain's grace, as any wait) and
   * admits the retry as after any backoff.
   */
  void resumeWaiting(int attemptsSoFar, @Nullable Object result, @Nullable Throwable failure, Verdict verdict,
      long delay) {
    Effect batch;
    synchronized (this) {
      budget.callStarted();
      resumed(attemptsSoFar, result, failure, verdict);
      pendingKind = AttemptRecord.RETRY;
      phase = WAITING;
      wakeFor = WAKE_ADMIT;
      Draining.watch(this);
      outbox(FX_WAKE, null, delay, ++wakeToken);
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  /**
   * Takes over, to end it, a call that a fast lane carried this far and that its loop has stopped
   * with {@code reason} at {@code now}: the driver ends it as it ends any call, after {@code pause}
   * (the guarded pause after a refusal, whose gate expects to admit again after
   * {@code gateRetryAfterNanos}). For the ends a lane does not finish itself.
   */
  void resumeStopped(int attemptsSoFar, @Nullable Object result, @Nullable Throwable failure,
      @Nullable Verdict verdict, StopReason reason, long now, long gateRetryAfterNanos, long pause) {
    Effect batch;
    synchronized (this) {
      budget.callStarted();
      resumed(attemptsSoFar, result, failure, verdict);
      phase = RUNNING;
      refusalRetryAfterNanos = gateRetryAfterNanos;
      stop(reason, now, pause);
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  /**
   * The driver is about to start {@code attempt}'s work. Returns false if it must not — the call
   * stopped since the start was planned — and then the attempt is released as never started.
   * Emits ATTEMPT_STARTED otherwise.
   */
  boolean begin(AttemptRecord attempt) {
    Effect batch;
    if (onConfinedThread()) {
      batch = beginLocked(attempt);
    } else {
      synchronized (this) {
        batch = beginLocked(attempt);
      }
    }
    if (batch == NOT_BEGUN) {
      return false;
    }
    deliverClaimed(batch);
    return true;
  }

  /** What {@link #beginLocked} returns when the attempt must not start. */
  private static final Effect NOT_BEGUN = new Effect();

  private @Nullable Effect beginLocked(AttemptRecord attempt) {
    if (attempt.state != AttemptRecord.PLANNED) {
      return NOT_BEGUN;
    }
    long now = time.nanoTime();
    if (phase == DONE) {
      attempt.state = AttemptRecord.ENDED;
      planned--;
      release(attempt, Gate.NOT_STARTED, now);
      return NOT_BEGUN;
    }
    attempt.state = AttemptRecord.RUNNING;
    attempt.startNanos = now;
    // the attempt may run at most its timeout, and never past the deadline
    attempt.timeoutNanos = Decide.attemptTimeout(policy.attemptCeilingNanos(now), remaining(now));
    attempt.number = ++attempts;
    planned--;
    inFlight++;
    if (observed) {
      event(ResilienceEvent.Type.ATTEMPT_STARTED, now, attempt.number, attempt, 0);
      if (attempt.kind == AttemptRecord.HEDGE) {
        event(ResilienceEvent.Type.HEDGE_STARTED, now, attempt.number, attempt, 0);
      }
    }
    if (attempt.kind != AttemptRecord.RETRY && canHedge()) {
      // the next hedge is due if nothing answers within the delay
      wakeFor = WAKE_HEDGE;
      outbox(FX_WAKE_RUNNING, null, hedgeDelayNanos, ++wakeToken);
    }
    return claimOutbox();
  }

  /**
   * The driver could not start {@code attempt} (its executor refused it): it ends as never started,
   * and the call decides as if it had failed to be sent.
   */
  void notStarted(AttemptRecord attempt, Throwable why) {
    Effect batch;
    synchronized (this) {
      if (attempt.state == AttemptRecord.PLANNED) {
        long now = time.nanoTime();
        attempt.state = AttemptRecord.ENDED;
        planned--;
        release(attempt, Gate.NOT_STARTED, now);
        if (phase != DONE && inFlight == 0 && planned == 0) {
          lastResult = null;
          lastFailure = why;
          lastHasValue = false;
          lastVerdict = Verdict.PERMANENT;
          stop(StopReason.PERMANENT, now, 0);
        }
      }
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  /**
   * The hedge of a first attempt that the synchronous fast path started is due (the watchdog saw
   * it run past the hedge delay): send it now, as the core's own hedge timer would.
   */
  void hedgeDue() {
    Effect batch;
    synchronized (this) {
      if (phase == RUNNING && canHedge()) {
        sendHedge(time.nanoTime());
      }
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  /** A value nobody will see (an attempt that ended after the call did): hand it to the discard hook. */
  void discard(@Nullable Object value) {
    if (value == null) {
      return;
    }
    Effect batch;
    synchronized (this) {
      Effect e = nextEffect();
      e.kind = FX_DISCARD;
      e.value = value;
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  private boolean canHedge() {
    return hedging && hedges < hedge().maxHedges() && attempts + planned < policy.attempts() && phase == RUNNING;
  }

  private Hedge hedge() {
    Hedge h = hedge;
    if (h == null) {
      throw new IllegalStateException("no hedge");
    }
    return h;
  }

  /**
   * {@code attempt} ended: it returned {@code result}, threw {@code failure}, ran past its timeout
   * ({@code timedOut}), or was cancelled ({@code cancelled}: the caller's interrupt or cancellation,
   * or the core's own request). Decides what follows.
   */
  void attemptEnded(AttemptRecord attempt, @Nullable Object result, @Nullable Throwable failure, boolean timedOut,
      boolean cancelled) {
    attemptEnded(attempt, result, failure, timedOut, cancelled, null);
  }

  /** As above, with the verdict already known (the fast path classified the result once). */
  void attemptEnded(AttemptRecord attempt, @Nullable Object result, @Nullable Throwable failure, boolean timedOut,
      boolean cancelled, @Nullable Verdict known) {
    Effect batch;
    if (onConfinedThread()) {
      endedLocked(attempt, result, failure, timedOut, cancelled, known, time.nanoTime());
      batch = claimOutbox();
    } else {
      synchronized (this) {
        endedLocked(attempt, result, failure, timedOut, cancelled, known, time.nanoTime());
        batch = claimOutbox();
      }
    }
    deliverClaimed(batch);
  }

  private void endedLocked(AttemptRecord attempt, @Nullable Object result, @Nullable Throwable failure,
      boolean timedOut, boolean cancelled, @Nullable Verdict known, long now) {
    if (attempt.state != AttemptRecord.RUNNING) {
      // already settled: the call ended while it ran, and ended it then; its value goes unseen
      if (failure == null && result != null && !timedOut) {
        discardLater(result);
      }
      return;
    }
    attempt.state = AttemptRecord.ENDED;
    inFlight--;
    if (lastHasValue && lastResult != null && lastResult != result) {
      discardLater(lastResult); // superseded by this attempt: nobody will see it
    }
    if (timedOut) {
      failure = new AttemptTimeoutException(Duration.ofNanos(attempt.timeoutNanos));
      result = null;
    }
    lastResult = result;
    lastFailure = failure;
    lastHasValue = failure == null;

    if (cancelled) {
      lastVerdict = null;
      release(attempt, Gate.CANCELLED, now);
      if (observed) {
        event(ResilienceEvent.Type.ATTEMPT_ENDED, now, attempt.number, attempt, 0, null, failure);
      }
      stop(StopReason.CANCELLED, now, 0);
      return;
    }

    Verdict verdict = known != null ? known : classify(result, failure);
    lastVerdict = verdict;
    Verdict.Kind kind = verdict.kind();
    release(attempt, Decide.howEnded(kind, timedOut), now);
    Decide.accounted(policy, budget, kind, now - attempt.startNanos, now);
    if (observed) {
      event(ResilienceEvent.Type.ATTEMPT_ENDED, now, attempt.number, attempt, 0, verdict, failure);
    }
    afterAttempt(attempt, verdict, now);
  }

  /** A wake-up the core asked for came due. Stale wake-ups (for a plan since replaced) are ignored. */
  void wake(int token) {
    Effect batch;
    if (onConfinedThread()) {
      wakeLocked(token);
      batch = claimOutbox();
    } else {
      synchronized (this) {
        wakeLocked(token);
        batch = claimOutbox();
      }
    }
    deliverClaimed(batch);
  }

  private void wakeLocked(int token) {
    {
      if (token != wakeToken || phase == DONE) {
        return;
      }
      long now = time.nanoTime();
      int what = wakeFor;
      wakeFor = 0;
      wakeToken++;
      if (what == WAKE_ADMIT && phase == WAITING) {
        phase = RUNNING;
        admit(pendingKind, now);
      } else if (what == WAKE_START && phase == WAITING) {
        AttemptRecord r = pending;
        if (r != null) {
          phase = RUNNING;
          planStart(r, now);
        }
      } else if (what == WAKE_HEDGE && phase == RUNNING) {
        if (canHedge()) {
          sendHedge(now);
        }
      } else if (what == WAKE_QUEUE && phase == QUEUED) {
        AttemptRecord r = pending;
        if (r != null) {
          // the wait ran out: refused, unless the permit was handed over at the last moment
          if (gates[queuedGate].cancelAwait(r, queuedGate)) {
            queueRefused(r, now);
          } else {
            continueAfterQueue(r, now);
          }
        }
      }
    }
  }

  /** A gate handed a queued attempt its permit. */
  void granted(AttemptRecord attempt) {
    Effect batch;
    synchronized (this) {
      if (phase == QUEUED && pending == attempt) {
        wakeToken++; // the wait timer is stale now
        continueAfterQueue(attempt, time.nanoTime());
      }
      // otherwise the call stopped while it waited, and stop() took the permit back
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  /**
   * The caller cancelled the call (cancelled or completed its future, or interrupted its thread
   * between attempts). Returns true if this made the call end as {@link StopReason#CANCELLED}; false
   * if it had already ended (its outcome stands).
   */
  boolean cancel() {
    boolean cancelled;
    Effect batch;
    synchronized (this) {
      if (phase == DONE) {
        cancelled = false;
      } else {
        long now = time.nanoTime();
        stop(StopReason.CANCELLED, now, 0);
        cancelled = true;
      }
      batch = claimOutbox();
    }
    deliverClaimed(batch);
    return cancelled;
  }

  /** A drain's grace ran out: a call still waiting between attempts ends now, as DRAINING. */
  void graceEnded() {
    Effect batch;
    synchronized (this) {
      if (phase == WAITING || phase == QUEUED) {
        stop(StopReason.DRAINING, time.nanoTime(), 0);
      }
      batch = claimOutbox();
    }
    deliverClaimed(batch);
  }

  /** True once the call has stopped. */
  synchronized boolean isDone() {
    return phase == DONE;
  }

  // ---------------------------------------------------------------- decisions (under the lock)

  private void afterAttempt(AttemptRecord attempt, Verdict verdict, long now) {
    Verdict.Kind kind = verdict.kind();
    switch (kind) {
      case OK:
        if (attempt.kind == AttemptRecord.HEDGE && observed) {
          event(ResilienceEvent.Type.HEDGE_WON, now, attempt.number, attempt, 0);
        }
        break;
      case PERMANENT:
        break;
      case THROTTLED:
        hedging = false; // the dependency pushes back: no more hedges for this call
        break;
      default:
        if (canHedge()) {
          sendHedge(now); // a transient failure sends the next hedge at once
        }
    }
    long left = remaining(now);
    long plan = Decide.afterAttempt(kind, inFlight > 0 || planned > 0, Draining.isDraining(), left, attempts,
        policy.attempts(), hedges > 0 && !hedge().retries());
    if (plan == Decide.AWAIT_OTHERS) {
      return; // another attempt is still running; its end decides
    }
    if (Decide.stops(plan)) {
      stop(Decide.reason(plan), now, 0);
      return;
    }
    long delay = Decide.afterWait(
        Decide.backoffNanos(policy.backoff(), policy.backoffMaxNanos, attempts, verdict, time.random(), policy), left);
    if (Decide.stops(delay)) {
      stop(Decide.reason(delay), now, 0);
      return;
    }
    if (!budget.wouldFundAt(criticality, now, time) && refusedBeforeWait(now)) {
      // known now, so the caller does not sleep the backoff only to be refused after it
      return;
    }
    if (observed) {
      notifyRetrying(now, delay, verdict);
    }
    pendingKind = AttemptRecord.RETRY;
    if (delay == 0) {
      admit(AttemptRecord.RETRY, now);
    } else {
      phase = WAITING;
      wakeFor = WAKE_ADMIT;
      Draining.watch(this);
      outbox(FX_WAKE, null, delay, ++wakeToken);
    }
  }

  /**
   * The budget will not fund the retry the call is about to wait for. Rather than sleep the backoff
   * only to be refused after it, the retry is put to the gates now, in their one order, so that the
   * first gate that refuses is the one reported (an open breaker before an empty budget), exactly
   * as after the wait. Returns true when a gate refused and the call has ended. If every gate admits
   * (the budget was refilled meanwhile) or a gate would queue the retry, nothing is kept: what was
   * admitted is given back and the call waits its backoff as usual.
   */
  private boolean refusedBeforeWait(long now) {
    AttemptRecord r = newRecord(AttemptRecord.RETRY, now);
    r.timeoutNanos = remaining(now);
    int refusedBy = Decide.walk(gates, budgetGate, r, 0, Decide.WALK_PROBE, now);
    transitions(r, now);
    if (refusedBy != Decide.ADMITTED) {
      refused(r, gates[refusedBy].refusal(), r.retryAfterNanos, now);
      return true;
    }
    release(r, Gate.NOT_STARTED, now);
    r.state = AttemptRecord.ENDED;
    return false;
  }

  /**
   * Sends the next hedge if every gate admits it. A hedge the budget (or any gate) will not fund is
   * suppressed, not a refusal: the call goes on with the attempts it has, and sends no more hedges.
   */
  private void sendHedge(long now) {
    long left = remaining(now);
    if (Decide.mayStart(Draining.isDraining(), left) != null) {
      return; // no new attempt starts; those running decide
    }
    TokenBucket allowance = policy.hedgeAllowance;
    if (allowance != null && !allowance.trySpendAt(criticality, now, time)) {
      // the extra load asked for is spent: this call goes on with the attempts it has
      hedging = false;
      if (observed) {
        event(ResilienceEvent.Type.HEDGE_SUPPRESSED, now, attempts, null, 0);
      }
      return;
    }
    AttemptRecord r = newRecord(AttemptRecord.HEDGE, now);
    r.timeoutNanos = left;
    int refusedBy = Decide.walk(gates, budgetGate, r, 0, Decide.WALK_HEDGE, now);
    transitions(r, now);
    if (refusedBy != Decide.ADMITTED) {
      // refused, or a permit reserved for later, which is no use to a hedge: give back what was admitted
      release(r, Gate.NOT_STARTED, now);
      r.state = AttemptRecord.ENDED;
      hedging = false;
      if (observed) {
        event(ResilienceEvent.Type.HEDGE_SUPPRESSED, now, attempts, null, 0);
      }
      return;
    }
    hedges++;
    planStart(r, now);
  }

  /** A call that may hedge is starting: it earns its share of a hedge (see {@link Resilience#hedgeAllowance}). */
  static void creditHedgeAllowance(Resilience policy) {
    TokenBucket allowance = policy.hedgeAllowance;
    if (allowance != null && policy.attempts() > 1) {
      allowance.deposit();
    }
  }

  /** Asks the gates, in order, to admit an attempt of {@code kind} at {@code now}. */
  private void admit(int kind, long now) {
    long left = remaining(now);
    StopReason cannot = Decide.mayStart(Draining.isDraining(), left);
    if (cannot != null) {
      stop(cannot, now, 0);
      return;
    }
    AttemptRecord r = newRecord(kind, now);
    r.timeoutNanos = left; // what the gates may use: the time left before the deadline
    admitFrom(r, 0, now);
  }

  private void admitFrom(AttemptRecord r, int from, long now) {
    Gate[] g = gates;
    int i = Decide.walk(g, budgetGate, r, from, Decide.WALK_ADMIT, now);
    transitions(r, now);
    if (i != Decide.ADMITTED) {
      long maxWait = g[i].maxWaitNanos();
      if (maxWait > 0) {
        long bound = Math.min(maxWait, r.timeoutNanos);
        r.state = AttemptRecord.QUEUED;
        pending = r;
        queuedGate = i;
        phase = QUEUED;
        if (bound > 0 && g[i].await(r, i, () -> granted(r))) {
          if (r.granted) {
            continueAfterQueue(r, now); // a permit came free as it queued: handed over at once
            return;
          }
          wakeFor = WAKE_QUEUE;
          Draining.watch(this);
          outbox(FX_WAKE, null, bound, ++wakeToken);
          return;
        }
        phase = RUNNING;
        pending = null;
        queuedGate = -1;
        r.state = AttemptRecord.NEW;
      }
      refused(r, g[i].refusal(), r.retryAfterNanos, now);
      return;
    }
    if (r.waitNanos > 0) {
      // a rate permit reserved for later: wait what is left of it (time queued for a bulkhead counts)
      r.waitNanos = Math.max(0, r.waitNanos - (now - r.admittedNanos));
    }
    if (r.waitNanos > 0) {
      if (r.waitNanos >= r.timeoutNanos) {
        // a permit this far off would start the attempt past the deadline
        r.state = AttemptRecord.NEW;
        release(r, Gate.NOT_STARTED, now);
        stop(StopReason.DEADLINE_EXCEEDED, now, 0);
        return;
      }
      r.state = AttemptRecord.NEW; // admitted, waiting for its reserved permit's time
      pending = r;
      phase = WAITING;
      wakeFor = WAKE_START;
      Draining.watch(this);
      outbox(FX_WAKE, null, r.waitNanos, ++wakeToken);
      return;
    }
    planStart(r, now);
  }

  private void continueAfterQueue(AttemptRecord r, long now) {
    phase = RUNNING;
    pending = null;
    int gate = queuedGate;
    queuedGate = -1;
    r.admitted = gate + 1;
    r.state = AttemptRecord.NEW;
    r.timeoutNanos = remaining(now);
    if (r.timeoutNanos <= 0) {
      release(r, Gate.NOT_STARTED, now);
      stop(StopReason.DEADLINE_EXCEEDED, now, 0);
      return;
    }
    admitFrom(r, gate + 1, now);
  }

  private void queueRefused(AttemptRecord r, long now) {
    phase = RUNNING;
    pending = null;
    int gate = queuedGate;
    queuedGate = -1;
    r.state = AttemptRecord.NEW;
    refused(r, gates[gate].refusal(), r.retryAfterNanos, now);
  }

  /** A gate refused {@code r}: give back what earlier gates admitted, then end the call. */
  private void refused(AttemptRecord r, StopReason reason, long retryAfterNanos, long now) {
    release(r, Gate.NOT_STARTED, now);
    r.state = AttemptRecord.ENDED;
    refuse(reason, retryAfterNanos, now);
  }

  /** Ends the call with a gate's refusal, after the guarded pause (capped by the time left). */
  private void refuse(StopReason reason, long retryAfterNanos, long now) {
    refusalRetryAfterNanos = retryAfterNanos;
    stop(reason, now, Decide.refusalPause(reason, remaining(now)));
  }

  private void planStart(AttemptRecord r, long now) {
    if (pending == r) {
      pending = null;
    }
    r.state = AttemptRecord.PLANNED;
    planned++;
    outbox(FX_START, r, 0, 0);
  }

  /** Ends the call: the one terminal event, leftover attempts cancelled, the budget told. */
  private void stop(StopReason reason, long now, long pause) {
    if (phase == DONE) {
      return;
    }
    phase = DONE;
    stopReason = reason;
    pauseNanos = pause;
    endNanos = now;
    wakeToken++; // every pending wake-up is stale now
    Draining.unwatch(this);
    AttemptRecord p = pending;
    pending = null;
    if (p != null) {
      if (p.state == AttemptRecord.QUEUED && queuedGate >= 0) {
        if (!gates[queuedGate].cancelAwait(p, queuedGate)) {
          p.admitted = queuedGate + 1; // the permit was handed over: it is ours to give back
        }
        p.state = AttemptRecord.ENDED;
        release(p, Gate.NOT_STARTED, now);
      } else if (p.state == AttemptRecord.NEW) {
        p.state = AttemptRecord.ENDED;
        release(p, Gate.NOT_STARTED, now);
      }
    }
    queuedGate = -1;
    // attempts still running end here, cancelled: their permits come back now, their end is
    // reported before the terminal event, and the driver is asked to stop their work
    for (int i = 0; i < recordCount; i++) {
      AttemptRecord r = records[i];
      if (r.state == AttemptRecord.RUNNING) {
        r.state = AttemptRecord.ENDED;
        inFlight--;
        release(r, Gate.CANCELLED, now);
        if (observed) {
          event(ResilienceEvent.Type.ATTEMPT_ENDED, now, r.number, r, 0, null, null);
          if (hedges > 0 && reason != StopReason.CANCELLED) {
            event(ResilienceEvent.Type.HEDGE_DISCARDED, now, r.number, r, 0); // lost the race
          }
        }
        outbox(FX_CANCEL, r, 0, 0);
      }
    }
    budget.callEnded();
    if (observed) {
      event(terminalType(reason), now, attempts, null, pause, lastVerdict, lastFailure, reason);
    }
    outbox(FX_FINISH, null, pause, 0);
  }

  /** Gives back every gate that admitted {@code r}, exactly once. */
  private void release(AttemptRecord r, int how, long now) {
    Decide.release(gates, budgetGate, r, how, now);
    transitions(r, now);
  }

  /** A breaker moved while it admitted or released {@code r}: this call's listeners hear of it. */
  private void transitions(AttemptRecord r, long now) {
    int to = r.breakerTransition;
    if (to >= 0) {
      r.breakerTransition = -1;
      if (observed) {
        Effect e = nextEffect();
        e.kind = FX_EVENT;
        e.type = ResilienceEvent.Type.BREAKER_TRANSITION;
        e.number = r.number;
        e.hedge = r.kind == AttemptRecord.HEDGE;
        e.elapsed = now - startNanos;
        e.duration = 0;
        e.nanos = 0;
        e.verdict = null;
        e.failure = null;
        e.reason = null;
        e.value = CircuitBreaker.State.values()[to];
      }
    }
  }

  private AttemptRecord newRecord(int kind, long now) {
    if (recordCount == records.length) {
      AttemptRecord[] grown = new AttemptRecord[recordCount * 2];
      System.arraycopy(records, 0, grown, 0, recordCount);
      records = grown;
    }
    AttemptRecord r = records[recordCount];
    if (r == null) {
      r = records[recordCount] = new AttemptRecord();
    }
    recordCount++;
    return r.reset(0, kind, criticality, now, policy.markSlots);
  }

  /** Time left before the deadline at {@code now}: 0 or more; Long.MAX_VALUE when there is none. */
  long remaining(long now) {
    return Decide.remaining(deadlineNanos, startNanos, now);
  }

  private Verdict classify(@Nullable Object result, @Nullable Throwable failure) {
    return classify(policy.classifier(), result, failure);
  }

  /** The classifier's verdict; a classifier that throws or returns null makes the attempt permanent. */
  static Verdict classify(Classifier classifier, @Nullable Object result, @Nullable Throwable failure) {
    try {
      Verdict v = classifier.classify(result, failure);
      return v != null ? v : Verdict.PERMANENT;
    } catch (RuntimeException | LinkageError | AssertionError e) {
      return Verdict.PERMANENT;
    }
  }

  /**
   * True when {@code failure} means the caller cancelled, not that the dependency failed: an
   * interrupt or a cancellation. An {@link java.io.InterruptedIOException} counts only when the
   * thread's interrupt flag says so ({@code interrupted}): clients also throw it for their own
   * timeouts (OkHttp's call timeout does), which are transient failures.
   */
  static boolean isCancellation(Throwable failure, boolean interrupted) {
    return failure instanceof InterruptedException
        || failure instanceof java.util.concurrent.CancellationException
        || failure instanceof java.nio.channels.ClosedByInterruptException
        || interrupted && failure instanceof java.io.InterruptedIOException
            && !(failure instanceof java.net.SocketTimeoutException);
  }

  // ---------------------------------------------------------------- the outbox

  private void discardLater(Object value) {
    Effect e = nextEffect();
    e.kind = FX_DISCARD;
    e.value = value;
  }

  private void outbox(int kind, @Nullable AttemptRecord record, long nanos, int token) {
    Effect e = nextEffect();
    e.kind = kind;
    e.record = record;
    e.nanos = nanos;
    e.token = token;
  }

  /**
   * This thread's pool of outbox entries. The last one looked up is kept with the call: a call's
   * inputs and deliveries mostly come on one thread, and then one lookup serves them all. (Read
   * outside the lock too: a pool's owner is final, so a racy read sees the right owner, and only the
   * owner's thread uses it.)
   */
  private Effect.Pool pool() {
    Effect.Pool p = lastPool;
    if (p == null || p.owner != Thread.currentThread()) {
      p = Effect.POOL.get();
      lastPool = p;
    }
    return p;
  }

  private Effect.@Nullable Pool lastPool;

  /** This thread's ambient state, kept with its pool: one thread-local lookup serves both. */
  final Ambient ambientHere() {
    Effect.Pool p = pool();
    Ambient a = p.ambient;
    if (a == null) {
      a = Ambient.get();
      p.ambient = a;
    }
    return a;
  }

  /** A fresh entry at the tail of the outbox (under the lock). */
  private Effect nextEffect() {
    Effect e = Effect.take(pool());
    Effect tail = outTail;
    if (tail == null) {
      outHead = e;
    } else {
      tail.next = e;
    }
    outTail = e;
    return e;
  }

  private void event(ResilienceEvent.Type type, long now, int attempt, @Nullable AttemptRecord record, long delay) {
    event(type, now, attempt, record, delay, null, null, null);
  }

  private void event(ResilienceEvent.Type type, long now, int attempt, @Nullable AttemptRecord record, long delay,
      @Nullable Verdict verdict, @Nullable Throwable failure) {
    event(type, now, attempt, record, delay, verdict, failure, null);
  }

  private void event(ResilienceEvent.Type type, long now, int attempt, @Nullable AttemptRecord record, long delay,
      @Nullable Verdict verdict, @Nullable Throwable failure, @Nullable StopReason reason) {
    Effect e = nextEffect();
    e.kind = FX_EVENT;
    e.type = type;
    e.number = attempt;
    e.hedge = record != null && record.kind == AttemptRecord.HEDGE;
    e.elapsed = now - startNanos;
    e.duration = record != null ? now - record.startNanos : 0;
    e.nanos = delay;
    e.verdict = verdict;
    e.failure = failure;
    e.reason = reason;
    e.record = null;
  }

  private void notifyRetrying(long now, long delay, Verdict verdict) {
    event(ResilienceEvent.Type.RETRYING, now, attempts, null, delay, verdict, lastFailure);
  }

  /**
   * Under the lock, as an input ends: the outbox, if this thread is to deliver it (none is
   * delivering, and there is something to deliver); null otherwise. Taken in the input's own lock,
   * so an input costs one round on the lock, not two.
   */
  private @Nullable Effect claimOutbox() {
    Effect batch = outHead;
    if (delivering || batch == null) {
      return null;
    }
    delivering = true;
    deliverer = Thread.currentThread();
    outHead = null;
    outTail = null;
    return batch;
  }

  /**
   * Delivers the outbox outside the lock, in order: the batch {@link #claimOutbox} handed this
   * thread, then whatever was queued meanwhile. One thread at a time: a thread that finds another
   * delivering leaves its entries to it. A listener or driver that feeds the call an input from
   * inside delivery adds to the outbox and returns; this loop carries it out next. Entries are taken
   * a batch at a time (one lock for everything queued) and go back to this thread's pool.
   */
  private void deliverClaimed(@Nullable Effect batch) {
    if (batch == null) {
      return;
    }
    Effect.Pool pool = pool();
    while (true) {
      try {
        while (batch != null) {
          Effect e = batch;
          batch = e.next;
          perform(e);
          e.release(pool);
        }
      } catch (RuntimeException | Error t) {
        // a driver must not fail; if it does, stop delivering in a sane state and let it surface
        synchronized (this) {
          delivering = false;
          deliverer = null;
        }
        throw t;
      }
      if (onConfinedThread()) {
        batch = nextBatch();
      } else {
        synchronized (this) {
          batch = nextBatch();
        }
      }
      if (batch == null) {
        return;
      }
    }
  }

  /** Under the lock, after a batch: what was queued meanwhile, or null, and then delivery is over. */
  private @Nullable Effect nextBatch() {
    Effect batch = outHead;
    if (batch == null) {
      delivering = false;
      deliverer = null;
      return null;
    }
    outHead = null;
    outTail = null;
    return batch;
  }

  private void perform(Effect e) {
    switch (e.kind) {
      case FX_EVENT:
        dispatch(java.util.Objects.requireNonNull(e.type), e.number, e.hedge, e.elapsed, e.duration, e.nanos, e.verdict, e.failure, e.reason,
            e.value instanceof CircuitBreaker.State ? (CircuitBreaker.State) e.value : null);
        break;
      case FX_START:
        driver.start(this, java.util.Objects.requireNonNull(e.record));
        break;
      case FX_CANCEL:
        driver.cancel(this, java.util.Objects.requireNonNull(e.record));
        break;
      case FX_WAKE:
        driver.wakeAfter(this, e.nanos, e.token);
        break;
      case FX_WAKE_RUNNING:
        driver.wakeWhileRunning(this, e.nanos, e.token);
        break;
      case FX_DISCARD:
        policy.discardUnseen(e.value);
        break;
      default:
        driver.finish(this, e.nanos);
    }
  }

  /** True when the current thread is delivering this call's outbox. */
  synchronized boolean deliveringOnThisThread() {
    return deliverer == Thread.currentThread();
  }

  private void dispatch(ResilienceEvent.Type type, int number, boolean hedge, long elapsed, long duration, long delay,
      @Nullable Verdict verdict, @Nullable Throwable failure, @Nullable StopReason reason,
      CircuitBreaker.@Nullable State breakerState) {
    RetryBudget b = budget;
    observe(observers, policy, b, criticality, type, number, hedge, elapsed, duration, delay, verdict, failure, reason,
        breakerState);
    if (listeners.isEmpty()) {
      return;
    }
    String name = policy.name();
    ResilienceEvent event = new ResilienceEvent(type, name, number, hedge, Duration.ofNanos(Math.max(0, elapsed)),
        type == ResilienceEvent.Type.ATTEMPT_ENDED ? Duration.ofNanos(Math.max(0, duration)) : null,
        type == ResilienceEvent.Type.RETRYING || type.isTerminal() && delay > 0 ? Duration.ofNanos(delay) : null,
        verdict, failure, reason, b.isUnbounded() ? null : b, criticality, breakerState);
    for (ResilienceListener listener : listeners) {
      try {
        listener.onEvent(event);
      } catch (RuntimeException | LinkageError | AssertionError ignored) {
        // a listener must never break a call
      }
    }
  }

  /**
   * What each event means to the allocation-free observers ({@link CallObserver}): the one mapping,
   * used by every call and by the synchronous lane that tells observers of a first attempt that
   * succeeded without setting up a call.
   */
  static void observe(CallObserver[] observers, Resilience policy, RetryBudget b, Criticality criticality,
      ResilienceEvent.Type type, int number, boolean hedge, long elapsed, long duration, long delay,
      @Nullable Verdict verdict, @Nullable Throwable failure, @Nullable StopReason reason,
      CircuitBreaker.@Nullable State breakerState) {
    String name = policy.name();
    for (CallObserver o : observers) {
      try {
        switch (type) {
          case ATTEMPT_STARTED:
            o.attemptStarted(name, b, criticality, number, hedge);
            break;
          case ATTEMPT_ENDED:
            o.attemptEnded(name, b, criticality, number, hedge, verdict, failure, duration);
            break;
          case RETRYING:
            o.retrying(name, b, criticality, number, delay);
            break;
          case HEDGE_STARTED:
          case HEDGE_WON:
          case HEDGE_DISCARDED:
          case HEDGE_SUPPRESSED:
            o.hedged(name, b, criticality, type, number);
            break;
          case BREAKER_TRANSITION:
            if (breakerState != null) {
              o.breakerMoved(name, policy.breaker().orElse(null), breakerState, number);
            }
            break;
          default:
            if (reason != null) {
              // what the caller waited, the guarded pause included
              o.callEnded(name, b, criticality, reason, number, verdict, elapsed + delay);
              o.policyCalled(policy); // so telemetry can watch the instance's breaker, limiters and timing
            }
        }
      } catch (RuntimeException | LinkageError | AssertionError ignored) {
        // an observer must never break a call
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

  /**
   * One outbox entry. Entries are pooled per thread: taken when queued, given back to the pool of
   * the thread that delivered them, so a call allocates none once its threads have warmed up.
   */
  private static final class Effect {
    private static final ThreadLocal<Pool> POOL = ThreadLocal.withInitial(Pool::new);

    /** A thread's spare entries. */
    private static final class Pool {
      final Effect[] spare = new Effect[32];
      int size;
      /** The thread whose pool it is. */
      final Thread owner = Thread.currentThread();
      /** The owner's ambient state, looked up once: it never changes for a thread. */
      @Nullable Ambient ambient;
    }

    @Nullable Effect next;
    int kind;
    @Nullable AttemptRecord record;
    long nanos;
    int token;
    ResilienceEvent.@Nullable Type type;
    int number;
    boolean hedge;
    long elapsed;
    long duration;
    @Nullable Verdict verdict;
    @Nullable Throwable failure;
    @Nullable StopReason reason;
    @Nullable Object value;

    /** A cleared entry from {@code pool} (this thread's), or a new one. */
    static Effect take(Pool pool) {
      int n = pool.size;
      if (n == 0) {
        return new Effect();
      }
      Effect e = pool.spare[--n];
      pool.spare[n] = null;
      pool.size = n;
      return e;
    }

    /** Clears this entry and gives it to {@code pool}, the delivering thread's. */
    void release(Pool pool) {
      next = null;
      record = null;
      verdict = null;
      failure = null;
      reason = null;
      value = null;
      type = null;
      if (pool.size < pool.spare.length) {
        pool.spare[pool.size++] = this;
      }
    }
  }

  // ---------------------------------------------------------------- the outcome

  /** The Retry-After to report: the refusing gate's, or the dependency's if that is later. */
  @Nullable Duration retryAfter() {
    return Decide.retryAfter(refusalRetryAfterNanos, lastVerdict);
  }

  /** The exception the throw style raises for this stopped call, or null when it returns a value. */
  @Nullable Throwable failureToThrow() {
    return failureToThrow(false);
  }

  /**
   * As {@link #failureToThrow()}; Quell's own exceptions carry a stack trace only when
   * {@code thrown} (the synchronous throw style, where it shows the caller where the call was).
   */
  @Nullable Throwable failureToThrow(boolean thrown) {
    StopReason reason = stopReason;
    if (reason == null) {
      throw new IllegalStateException("call has not stopped");
    }
    return Decide.failure(reason, policy, budget, attempts, deadlineNanos, endNanos - startNanos, lastHasValue,
        lastFailure, lastVerdict, refusalRetryAfterNanos, thrown);
  }

  <T> Outcome<T> toOutcome() {
    Throwable failure = failureToThrow();
    @SuppressWarnings("unchecked")
    T value = failure == null && lastHasValue ? (T) lastResult : null;
    StopReason reason = stopReason;
    if (reason == null) {
      throw new IllegalStateException("call has not stopped");
    }
    return new Outcome<>(value, failure == null && lastHasValue, failure, reason, attempts,
        Math.max(0, finishedNanos - startNanos), retryAfter());
  }
}
