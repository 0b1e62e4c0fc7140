package dev.quell;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A clock for budget unit tests: it only moves when told. Scheduling is not needed by budgets. */
final class ManualClock implements TimeSource {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  @Override
  public long nanoTime() {
    return now.get();
  }

  void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  @Override
  public void sleep(long nanos) {
    now.addAndGet(nanos);
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    throw new UnsupportedOperationException("budgets never schedule");
  }
}
