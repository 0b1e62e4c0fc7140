package dev.quell;

import org.jspecify.annotations.Nullable;

/**
 * Per-thread state of synchronous calls: a stack of frames — one per open {@link ResilienceContext}
 * scope and one per running attempt — plus the first-attempt fast path that may be running, and a
 * pool of {@link Call} objects for the synchronous calls running on this thread (one per nesting
 * level), so a synchronous call allocates no call state of its own.
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
 * <p>One {@link ThreadLocal} lookup per call; frames, slots and calls are reused.
 */
final class Ambient {
  private static final ThreadLocal<Ambient> CURRENT = ThreadLocal.withInitial(Ambient::new);

  private Frame[] frames = new Frame[4];
  private int depth;
  /** The first-attempt fast path's slot; armed while a fast attempt runs on this thread. */
  private Watchdog.@Nullable Slot fastSlot;
  /** The frame depth when the fast attempt started: frames above it were pushed inside it. */
  private int fastDepth;
  /** The fast attempt's call may retry. */
  private boolean fastRetries;
  /** Pooled synchronous drivers (each with its call object), by nesting level. */
  private SyncExecution[] drivers = new SyncExecution[2];
  private int activeDrivers;

  static Ambient get() {
    return CURRENT.get();
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

  /** A driver and call object for a synchronous call on this thread; give it back with {@link #releaseDriver}. */
  SyncExecution acquireDriver() {
    if (activeDrivers == drivers.length) {
      SyncExecution[] grown = new SyncExecution[activeDrivers * 2];
      System.arraycopy(drivers, 0, grown, 0, activeDrivers);
      drivers = grown;
    }
    SyncExecution d = drivers[activeDrivers];
    if (d == null) {
      d = drivers[activeDrivers] = new SyncExecution();
    }
    activeDrivers++;
    return d;
  }

  /** Gives back the innermost driver. */
  void releaseDriver(SyncExecution driver) {
    driver.call.clear();
    if (activeDrivers > 0 && drivers[activeDrivers - 1] == driver) {
      activeDrivers--;
    }
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
