package dev.quell;

import dev.quell.internal.Watchdog;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Process shutdown for outbound calls. Call {@link #begin(Duration)} when the process starts to
 * shut down (a shutdown hook, Spring's context closing): from then on no new attempt starts — not a
 * first attempt, not a retry, not a hedge — and calls end with {@link StopReason#DRAINING}. Calls
 * already in flight keep their running attempt, clamped to the grace: on the real clock, a
 * synchronous attempt still running when the grace ends is interrupted like a timed-out attempt;
 * an asynchronous attempt keeps its own attempt timeout. Nested calls see the clamped deadline.
 *
 * <p>It latches once: the first {@code begin} wins and later ones are ignored. While not draining,
 * the cost on a call's path is one volatile read.
 */
public final class Draining {
  private static final AtomicReference<@Nullable State> STATE = new AtomicReference<>();

  private Draining() {}

  /** Starts draining on the real clock; returns false if draining had already begun. */
  public static boolean begin(Duration grace) {
    return begin(grace, TimeSource.system());
  }

  /** Starts draining with the grace measured on {@code time}; returns false if draining had already begun. */
  public static boolean begin(Duration grace, TimeSource time) {
    Objects.requireNonNull(grace, "grace");
    Objects.requireNonNull(time, "time");
    long end = Call.saturatedAdd(time.nanoTime(), Math.max(0, grace.toNanos()));
    if (!STATE.compareAndSet(null, new State(end, time))) {
      return false;
    }
    if (time == TimeSource.system()) {
      Watchdog.INSTANCE.cutOffAt(end); // in-flight sync attempts end with the grace
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
    return s == null ? Optional.empty() : Optional.of(Duration.ofNanos(Math.max(0, s.end - s.time.nanoTime())));
  }

  static @Nullable State state() {
    return STATE.get();
  }

  /** For tests in this package only: forgets that draining began. */
  static void resetForTests() {
    STATE.set(null);
    Watchdog.INSTANCE.cutOffAt(Long.MAX_VALUE);
  }

  static final class State {
    final long end;
    final TimeSource time;

    State(long end, TimeSource time) {
      this.end = end;
      this.time = time;
    }

    /** The end of the grace as an instant on {@code clock}. */
    long endOn(TimeSource clock, long clockNow) {
      return clock == time ? end : Call.saturatedAdd(clockNow, Math.max(0, end - time.nanoTime()));
    }
  }
}
