package dev.quell;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Process shutdown for outbound calls. Call {@link #begin(Duration)} when the process starts to
 * shut down (a shutdown hook, Spring's context closing): from then on no new attempt starts — not a
 * first attempt, not a retry, not a hedge — and calls end with {@link StopReason#DRAINING}. Calls
 * already in flight keep their running attempt, clamped to the grace: on the real clock, a
 * synchronous attempt still running when the grace ends is interrupted like a timed-out attempt;
 * an asynchronous attempt keeps its own attempt timeout. A call waiting out a backoff (or waiting
 * for a limiter's permit) ends when the grace does, not when its wait would have. Nested calls see
 * the clamped deadline.
 *
 * <p>It latches once: the first {@code begin} wins and later ones are ignored. While not draining,
 * the cost on a call's path is one volatile read.
 */
public final class Draining {
  private static final AtomicReference<@Nullable State> STATE = new AtomicReference<>();
  /**
   * Calls waiting between attempts, to be ended when a grace runs out: striped intrusive lists (the
   * links live in the calls), so watching a call allocates nothing and threads rarely share a lock.
   */
  private static final int STRIPES = 16;
  private static final Object[] LOCKS = new Object[STRIPES];
  private static final @Nullable Call[] HEADS = new Call[STRIPES];

  static {
    for (int i = 0; i < STRIPES; i++) {
      LOCKS[i] = new Object();
    }
  }

  private Draining() {}

  /** Starts draining on the real clock; returns false if draining had already begun. */
  public static boolean begin(Duration grace) {
    return begin(grace, TimeSource.system());
  }

  /**
   * Starts draining with the grace measured on {@code time}; returns false if draining had already
   * begun. A negative grace is none; a grace of a century or more is no limit.
   */
  public static boolean begin(Duration grace, TimeSource time) {
    Objects.requireNonNull(grace, "grace");
    Objects.requireNonNull(time, "time");
    long nanos = Math.max(0, Durations.toNanosSaturated(grace));
    boolean forever = nanos >= ResilienceContext.NO_LIMIT_NANOS;
    State state = new State(time.nanoTime() + (forever ? ResilienceContext.NO_LIMIT_NANOS : nanos), time, forever);
    if (!STATE.compareAndSet(null, state)) {
      return false;
    }
    if (!forever) {
      if (time == TimeSource.system()) {
        Watchdog.INSTANCE.cutOffAt(state.endAt); // in-flight sync attempts end with the grace
      }
      for (Call call : waiting()) {
        endWhenGraceEnds(call, state);
      }
    }
    return true;
  }

  /** True once {@link #begin} has been called. */
  public static boolean isDraining() {
    return STATE.get() != null;
  }

  /** The grace left, or empty when not draining. */
  public static Optional<Duration> graceLeft() {
    State s = STATE.get();
    return s == null ? Optional.empty() : Optional.of(Durations.ofNanosOrForever(s.remainingOn(s.time, s.time.nanoTime())));
  }

  static @Nullable State state() {
    return STATE.get();
  }

  /** A call starts waiting between attempts: end it when a grace runs out. (Under the call's lock.) */
  static void watch(Call call) {
    if (!call.watched) {
      int stripe = (int) (Thread.currentThread().getId() & (STRIPES - 1));
      synchronized (LOCKS[stripe]) {
        Call head = HEADS[stripe];
        call.waitNext = head;
        call.waitPrev = null;
        if (head != null) {
          head.waitPrev = call;
        }
        HEADS[stripe] = call;
        call.waitStripe = stripe;
        call.watched = true;
      }
    }
    State s = STATE.get();
    if (s != null && !s.forever) {
      endWhenGraceEnds(call, s); // draining began before it started to wait
    }
  }

  /** The call no longer waits. (Under the call's lock.) */
  static void unwatch(Call call) {
    if (!call.watched) {
      return;
    }
    int stripe = call.waitStripe;
    synchronized (LOCKS[stripe]) {
      Call prev = call.waitPrev;
      Call next = call.waitNext;
      if (prev == null) {
        HEADS[stripe] = next;
      } else {
        prev.waitNext = next;
      }
      if (next != null) {
        next.waitPrev = prev;
      }
      call.waitPrev = null;
      call.waitNext = null;
      call.watched = false;
    }
  }

  /** A snapshot of the calls waiting now. */
  private static List<Call> waiting() {
    List<Call> all = new ArrayList<>();
    for (int i = 0; i < STRIPES; i++) {
      synchronized (LOCKS[i]) {
        for (Call c = HEADS[i]; c != null; c = c.waitNext) {
          all.add(c);
        }
      }
    }
    return all;
  }

  private static void endWhenGraceEnds(Call call, State s) {
    long left = s.remainingOn(call.time, call.time.nanoTime());
    try {
      call.time.schedule(call::graceEnded, left);
    } catch (RuntimeException e) {
      call.graceEnded(); // a clock that cannot schedule: end the wait now rather than never
    }
  }

  /** For tests in this package only: forgets that draining began. */
  static void resetForTests() {
    STATE.set(null);
    for (Call c : waiting()) {
      synchronized (c) {
        unwatch(c);
      }
    }
    Watchdog.INSTANCE.cutOffAt(Long.MAX_VALUE);
  }

  static final class State {
    private final long endAt;
    private final TimeSource time;
    private final boolean forever;

    State(long endAt, TimeSource time, boolean forever) {
      this.endAt = endAt;
      this.time = time;
      this.forever = forever;
    }

    /** The end of the grace as an instant on {@link #time()}. */
    long endAt() {
      return endAt;
    }

    TimeSource time() {
      return time;
    }

    /** Grace left at {@code clockNow} on {@code clock}, at least 0; Long.MAX_VALUE when it has no limit. */
    long remainingOn(TimeSource clock, long clockNow) {
      if (forever) {
        return Long.MAX_VALUE;
      }
      return Math.max(0, clock == time ? endAt - clockNow : endAt - time.nanoTime());
    }
  }
}
