package dev.quell.test;

import java.time.Duration;

/** Small helpers the kit's classes share. */
final class KitSupport {
  private KitSupport() {}

  /** Rethrows {@code t} unchanged, checked or not, from code whose signature cannot declare it. */
  @SuppressWarnings("unchecked")
  static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  /** {@code d} in nanoseconds, or {@code Long.MAX_VALUE} when it is too long to count in them. */
  static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }
}
