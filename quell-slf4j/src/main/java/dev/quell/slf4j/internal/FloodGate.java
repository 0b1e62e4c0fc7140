package dev.quell.slf4j.internal;

/**
 * Lets one line through per interval and counts the rest. The first event passes at once; later
 * ones pass when the interval since the last line has run out, carrying the count suppressed in
 * between. No timer: a quiet stretch logs nothing, and the count waits for the next event. A lock is
 * fine here: a refused call has just served a 100 ms pause.
 */
final class FloodGate {
  private final long intervalNanos;
  private boolean opened;
  private long lastLogged;
  private long suppressed;

  FloodGate(long intervalNanos) {
    this.intervalNanos = intervalNanos;
  }

  /** At {@code now}: the number suppressed since the last line if this one may be logged, else -1. */
  synchronized long admit(long now) {
    if (!opened || now - lastLogged >= intervalNanos) {
      opened = true;
      lastLogged = now;
      long s = suppressed;
      suppressed = 0;
      return s;
    }
    suppressed++;
    return -1;
  }
}
