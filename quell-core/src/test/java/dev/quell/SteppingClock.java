package dev.quell;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock for limiter tests: it only moves when told, may start anywhere (near {@code Long.MAX_VALUE}
 * to test wrap-around), and moves by nanoseconds. Limiters never sleep or schedule.
 */
final class SteppingClock implements TimeSource {
  private final AtomicLong now;

  SteppingClock() {
    this(1_000_000_000L);
  }

  SteppingClock(long start) {
    this.now = new AtomicLong(start);
  }

  @Override
  public long nanoTime() {
    return now.get();
  }

  long advance(long nanos) {
    return now.addAndGet(nanos);
  }

  long advance(Duration d) {
    return advance(d.toNanos());
  }

  @Override
  public void sleep(long nanos) {
    throw new UnsupportedOperationException("limiters never sleep");
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    throw new UnsupportedOperationException("limiters never schedule");
  }
}
