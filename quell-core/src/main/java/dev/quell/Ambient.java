package dev.quell;

import dev.quell.internal.Watchdog;
import org.jspecify.annotations.Nullable;

/**
 * Per-thread state of synchronous calls: a stack of frames, one per open {@link ResilienceContext}
 * scope and one per running attempt. It lets an attempt publish its call's deadline and
 * criticality to calls nested inside it without allocating, and gives each nesting level its own
 * watchdog slot so a nested call's attempt timer never disturbs the outer one.
 *
 * <p>One {@link ThreadLocal} lookup per call; frames and slots are reused.
 */
final class Ambient {
  private static final ThreadLocal<Ambient> CURRENT = ThreadLocal.withInitial(Ambient::new);

  private Frame[] frames = new Frame[4];
  private int depth;

  static Ambient get() {
    return CURRENT.get();
  }

  /** One level of the stack. */
  static final class Frame {
    /** An explicitly opened context, or null for an attempt frame. */
    @Nullable ResilienceContext context;
    /** Attempt frames: the call's deadline on {@link #time}, or Long.MAX_VALUE. */
    long deadlineNanos;
    /** Attempt frames whose call start is not known yet (fast path): the deadline's length from the attempt's start. */
    long deadlineLength;
    @Nullable TimeSource time;
    @Nullable Criticality criticality;
    /** The call this attempt belongs to may retry. */
    boolean retries;
    private Watchdog.@Nullable Slot slot;

    Watchdog.Slot slot() {
      Watchdog.Slot s = slot;
      if (s == null) {
        s = slot = Watchdog.INSTANCE.newSlot();
      }
      return s;
    }
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

  void pop(Frame frame) {
    // pop down to and including this frame, in case an inner scope was not closed
    while (depth > 0) {
      Frame top = frames[--depth];
      top.context = null;
      top.time = null;
      top.criticality = null;
      if (top == frame) {
        return;
      }
    }
  }

  @Nullable Frame top() {
    return depth == 0 ? null : frames[depth - 1];
  }

  /** The innermost context, materialized if it is an attempt frame; null when there is none. */
  @Nullable ResilienceContext context() {
    Frame f = top();
    if (f == null) {
      return null;
    }
    if (f.context != null) {
      return f.context;
    }
    TimeSource t = f.time;
    ResilienceContext c = ResilienceContext.EMPTY;
    if (t != null) {
      long deadline = f.deadlineNanos;
      if (deadline == Long.MAX_VALUE && f.deadlineLength != Long.MAX_VALUE) {
        long now = t.nanoTime();
        deadline = Call.saturatedAdd(f.slot != null ? f.slot.startEstimate(now) : now, f.deadlineLength);
      }
      if (deadline != Long.MAX_VALUE) {
        c = c.withDeadlineAt(deadline, t);
      }
    }
    Draining.State draining = Draining.state();
    if (draining != null && t != null) {
      c = c.withDeadlineAt(draining.endOn(t, t.nanoTime()), t); // nested work ends with the grace
    }
    if (f.criticality != null) {
      c = c.withCriticality(f.criticality);
    }
    return c;
  }

  /** True when the innermost attempt frame belongs to a call that may retry. */
  boolean insideRetryingCall() {
    for (int i = depth - 1; i >= 0; i--) {
      Frame f = frames[i];
      if (f.context == null) {
        return f.retries;
      }
    }
    return false;
  }
}
