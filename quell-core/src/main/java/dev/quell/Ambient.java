package dev.quell;

import org.jspecify.annotations.Nullable;

/**
 * Per-thread state of synchronous calls: a stack of frames — one per open {@link ResilienceContext}
 * scope and one per running attempt — plus the first-attempt fast lanes that may be running, and
 * the attempt timers ({@link Watchdog.Slot}) of the synchronous calls driven on this thread, one
 * per nesting level. Nothing here belongs to a call: a call that needs state of its own (it failed,
 * hedged, or listens) allocates it, so no other thread can reach one call's state from the next.
 *
 * <p>Every attempt, whichever driver runs it, publishes the same context to calls nested inside
 * it: the caller's context, with the deadline at the attempt's own end (its timeout, or the time
 * left before the call's deadline if that is sooner) and the caller's criticality label. While the
 * process drains, every context read here is also clamped to the end of the grace.
 *
 * <p>The fast path pushes no frame: the watchdog slot it arms anyway is its frame. Arming records
 * how deep the frame stack was, so {@link #context()} can tell whether the fast attempt or a frame
 * pushed inside it is innermost. (Pushing a frame cost the success path about 6 ns, measured.) A
 * fast attempt reads no clock, so its end is known to nested calls from the watchdog's first
 * sighting of it: at most a tick or two later than its true end.
 *
 * <p>One lookup per call ({@link #get}), through a cache in front of a {@link ThreadLocal}; frames
 * and timers are reused, because only this thread pushes, arms or disarms them (the watchdog's
 * claim on a timer is settled by its stamp).
 */
final class Ambient {
  private static final ThreadLocal<Ambient> CURRENT = ThreadLocal.withInitial(Ambient::new);

  /**
   * A cache in front of {@link #CURRENT}, by thread id: a thread finds its own here in two dependent
   * loads and a compare, where the {@code ThreadLocal} takes five (measured: about 2 ns of a 10 ns
   * call). A place holds the first watched thread that asks for it ({@link #offer}) until the watchdog
   * finds that thread dead ({@link #forget}), so nothing here outlives its thread by more than one
   * of the watchdog's passes; a thread whose place is taken uses the {@code ThreadLocal}. Plain reads
   * and writes: an entry is used only by its owner, who checks {@link #owner} (a final field) first.
   * (A {@code Thread} subclass whose {@code getId()} changes over its life could keep its place
   * after it dies: the cache stays right, that place is lost to it.)
   */
  private static final @Nullable Ambient[] BY_THREAD = new Ambient[1024];

  /** The thread this state is for (made by {@link #CURRENT} on it). */
  private final Thread owner;

  private Ambient() {
    this(Thread.currentThread());
  }

  /** State for {@code owner}; only tests make one for another thread (see {@link #offer}). */
  Ambient(Thread owner) {
    this.owner = owner;
  }

  private Frame[] frames = new Frame[4];
  private int depth;
  /** The first-attempt fast path's slot; armed while a fast attempt runs on this thread. */
  private Watchdog.@Nullable Slot fastSlot;
  /** The frame depth when the fast attempt started: frames above it were pushed inside it. */
  private int fastDepth;
  /** The fast attempt's call may retry. */
  private boolean fastRetries;
  /** Attempt timers of the synchronous calls driven on this thread, by nesting level (see {@link #enter}). */
  private Watchdog.@Nullable Slot[] slots = new Watchdog.Slot[2];
  /** Synchronous calls being driven on this thread: the next call's nesting level. */
  private int levels;
  /** The fast lanes' attempt record: used by this thread alone, and only while a lane holds it. */
  private @Nullable AttemptRecord fastRecord;
  /** A lane holds {@link #fastRecord} (its call's gates are in it). */
  private boolean fastRecordHeld;
  /** The hedged fast lane of this thread (see {@link SyncExecution.HedgedLane}). */
  private SyncExecution.@Nullable HedgedLane hedgedLane;

  static Ambient get() {
    Thread t = Thread.currentThread();
    Ambient a = BY_THREAD[place(t)];
    return a != null && a.owner == t ? a : slowGet(t);
  }

  private static Ambient slowGet(Thread t) {
    Ambient a = CURRENT.get();
    if (a.fastSlot != null) {
      offer(a, t); // watched now, so the watchdog will forget it: it may take a free place
    }
    return a;
  }

  private static int place(Thread t) {
    return (int) t.getId() & (BY_THREAD.length - 1);
  }

  /**
   * Caches {@code a}, the state of {@code t}, if its place is free. Only for a
   * thread with a watched slot: the watchdog frees the place when it finds the thread dead.
   */
  static void offer(Ambient a, Thread t) {
    int i = place(t);
    if (BY_THREAD[i] == null) {
      BY_THREAD[i] = a; // two threads racing for one place: the one that lost uses the ThreadLocal
    }
  }

  /** What the cache holds in {@code t}'s place, whoever's it is. For tests. */
  static @Nullable Ambient cachedAt(Thread t) {
    return BY_THREAD[place(t)];
  }

  /** The calling thread's state, bypassing the cache. For tests. */
  static Ambient uncached() {
    return CURRENT.get();
  }

  /** {@code dead} has died: its place in the cache, if it holds one, is free again. Watchdog only. */
  static void forget(Thread dead) {
    int i = place(dead);
    Ambient a = BY_THREAD[i];
    if (a != null && a.owner == dead) {
      BY_THREAD[i] = null; // (no other thread writes a taken place: offers take free ones only)
    }
  }

  /** One level of the stack. */
  static final class Frame {
    /** An explicitly opened context, or an asynchronous attempt's; null for a synchronous attempt frame. */
    @Nullable ResilienceContext context;
    /** Pushed by an attempt (synchronous or asynchronous), not by a scope the user opened. */
    boolean attempt;
    /** The call this attempt belongs to may retry. */
    boolean retries;
    /** Synchronous attempt frames: the attempt's end as an instant on {@link #time}; no deadline when time is null. */
    long deadlineAt;
    @Nullable TimeSource time;
    @Nullable Criticality criticality;
  }

  /**
   * A synchronous call starts being driven on this thread: returns its nesting level, whose attempt
   * timer ({@link #slotAt}) it may arm. Pair with {@link #exit}. The call's own state is the call's:
   * only the timer, which no other thread arms or disarms, is kept per level.
   */
  int enter() {
    return levels++;
  }

  /** The innermost synchronous call driven on this thread is over. */
  void exit() {
    if (levels > 0) {
      levels--;
    }
  }

  /** The attempt timer of nesting level {@code level} on this thread (made on first use). */
  Watchdog.Slot slotAt(int level) {
    Watchdog.@Nullable Slot[] s = slots;
    if (level >= s.length) {
      s = slots = java.util.Arrays.copyOf(s, Math.max(level + 1, s.length * 2));
    }
    Watchdog.Slot slot = s[level];
    if (slot == null) {
      slot = s[level] = Watchdog.INSTANCE.newSlot();
    }
    return slot;
  }

  /**
   * The fast lanes' record for the gates, held until {@link #releaseFastRecord}. Reached by no
   * other thread: the gates it is handed to keep nothing of it, and a call that takes over copies
   * what it needs. A lane holds it while user code can still run on this thread (a classifier, a
   * backoff, the discard hook), so a call that code makes here gets a record of its own instead:
   * reusing this one would lose the holding call's permits.
   */
  AttemptRecord holdFastRecord() {
    AttemptRecord r = fastRecord;
    if (r == null) {
      r = fastRecord = new AttemptRecord();
    } else if (fastRecordHeld) {
      return new AttemptRecord(); // a call made from inside a lane's call: rare, and its own
    }
    fastRecordHeld = true;
    return r;
  }

  /** The lane that held {@code r} ({@link #holdFastRecord}) is done with it. */
  void releaseFastRecord(AttemptRecord r) {
    if (r == fastRecord) {
      fastRecordHeld = false;
    }
  }

  /** This thread's hedged fast lane. */
  SyncExecution.HedgedLane hedgedLane() {
    SyncExecution.HedgedLane lane = hedgedLane;
    if (lane == null) {
      lane = hedgedLane = new SyncExecution.HedgedLane(Thread.currentThread());
    }
    return lane;
  }

  /** Arms the fast path's slot for its attempt; the caller must check {@link #inFastAttempt()} first. */
  Watchdog.Slot armFast(long timeoutNanos, boolean retries) {
    return armFast(timeoutNanos, retries, Long.MAX_VALUE, null);
  }

  /** As {@link #armFast(long, boolean)}, with a hedge task the watchdog runs once after {@code hedgeNanos}. */
  Watchdog.Slot armFast(long timeoutNanos, boolean retries, long hedgeNanos, @Nullable Runnable hedgeTask) {
    Watchdog.Slot s = fastSlot;
    if (s == null) {
      s = fastSlot = Watchdog.INSTANCE.newSlot();
      offer(this, owner); // (armed by its own thread only)
    }
    fastDepth = depth;
    fastRetries = retries;
    return s.arm(timeoutNanos, hedgeNanos, hedgeTask);
  }

  /** True while a fast-path attempt runs on this thread. */
  boolean inFastAttempt() {
    Watchdog.Slot s = fastSlot;
    return s != null && s.isArmed();
  }

  /** The number of frames. */
  int depth() {
    return depth;
  }

  Frame push() {
    if (depth == frames.length) {
      Frame[] grown = new Frame[depth * 2];
      System.arraycopy(frames, 0, grown, 0, depth);
      frames = grown;
    }
    Frame f = frames[depth];
    if (f == null) {
      f = frames[depth] = new Frame();
    }
    depth++;
    return f;
  }

  /** Pushes a synchronous attempt's frame: its end on {@code time} (null: no deadline) and the label it publishes. */
  Frame pushAttempt(long deadlineAt, @Nullable TimeSource time, @Nullable Criticality criticality, boolean retries) {
    Frame f = push();
    f.context = null;
    f.attempt = true;
    f.retries = retries;
    f.deadlineAt = deadlineAt;
    f.time = time;
    f.criticality = criticality;
    return f;
  }

  void pop(Frame frame) {
    // pop down to and including this frame, in case an inner scope was not closed
    while (depth > 0) {
      Frame top = frames[--depth];
      top.context = null;
      top.time = null;
      top.criticality = null;
      top.attempt = false;
      top.retries = false;
      if (top == frame) {
        return;
      }
    }
  }

  /** The innermost context, materialized if it is an attempt and clamped to a drain's grace; null when there is none. */
  @Nullable ResilienceContext context() {
    ResilienceContext c;
    Watchdog.Slot fast = fastSlot;
    if (fast != null && fast.isArmed() && fastDepth == depth) {
      // the fast attempt is innermost: it ends min(attempt timeout, time left) after it began
      c = depth == 0 ? ResilienceContext.EMPTY : contextAt(depth - 1);
      if (fast.timeoutNanos() != Long.MAX_VALUE) {
        TimeSource t = TimeSource.system();
        c = c.withDeadlineAt(fast.startEstimate(t.nanoTime()) + fast.timeoutNanos(), t);
      }
    } else if (depth == 0) {
      c = null;
    } else {
      c = contextAt(depth - 1);
    }
    Draining.State draining = Draining.state();
    if (draining != null) {
      // nested work ends with the grace
      c = (c == null ? ResilienceContext.EMPTY : c).withDeadlineAt(draining.endAt(), draining.time());
    }
    return c;
  }

  private ResilienceContext contextAt(int index) {
    Frame f = frames[index];
    ResilienceContext explicit = f.context;
    if (explicit != null) {
      return explicit;
    }
    ResilienceContext c = ResilienceContext.EMPTY;
    TimeSource t = f.time;
    if (t != null) {
      c = c.withDeadlineAt(f.deadlineAt, t);
    }
    if (f.criticality != null) {
      c = c.withCriticality(f.criticality);
    }
    return c;
  }

  /** True when the innermost attempt belongs to a call that may retry. */
  boolean insideRetryingCall() {
    boolean inFast = inFastAttempt();
    for (int i = depth - 1; i >= 0; i--) {
      if (inFast && i < fastDepth) {
        return fastRetries;
      }
      Frame f = frames[i];
      if (f.attempt) {
        return f.retries;
      }
    }
    return inFast && fastRetries;
  }
}
