package dev.quell.grpc;

import io.grpc.Deadline;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** Deadline arithmetic for the wire: plain functions over plain values. */
final class Deadlines {
  private Deadlines() {}

  /**
   * The deadline to put on the wire for an attempt that may run {@code boundNanos} (Long.MAX_VALUE
   * for no bound of ours): {@code boundNanos} from now on {@code ticker}, unless {@code caller}'s
   * own deadline ends first, in which case {@code caller} itself is returned, unchanged. Null only
   * when neither bounds the call.
   */
  static @Nullable Deadline wire(@Nullable Deadline caller, long boundNanos, Deadline.Ticker ticker) {
    if (boundNanos == Long.MAX_VALUE) {
      return caller;
    }
    // compare by time remaining, never with Deadline.minimum: a caller's deadline on another ticker would throw
    if (caller != null && caller.timeRemaining(TimeUnit.NANOSECONDS) <= boundNanos) {
      return caller;
    }
    return Deadline.after(Math.max(0, boundNanos), TimeUnit.NANOSECONDS, ticker);
  }

  /** The earlier of two deadlines, either of which may be absent. */
  static @Nullable Deadline earlier(@Nullable Deadline a, @Nullable Deadline b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    return a.timeRemaining(TimeUnit.NANOSECONDS) <= b.timeRemaining(TimeUnit.NANOSECONDS) ? a : b;
  }

  /** {@code d} in nanoseconds, Long.MAX_VALUE for a duration too long to count (such as {@code FOREVER}'s). */
  static long nanos(Duration d) {
    if (d.isNegative()) {
      return 0;
    }
    try {
      return d.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }
}
