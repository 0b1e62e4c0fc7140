package dev.quell;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The real clock. Scheduling uses one daemon thread for the whole process, created on first use,
 * with cancelled tasks removed at once so that cancelled timers never pile up.
 */
final class SystemTime implements TimeSource {
  static final SystemTime INSTANCE = new SystemTime();

  private SystemTime() {}

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public void sleep(long nanos) throws InterruptedException {
    if (nanos > 0) {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } else if (Thread.interrupted()) {
      throw new InterruptedException();
    }
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    ScheduledFuture<?> future = Timer.EXECUTOR.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  @Override
  public String toString() {
    return "TimeSource.system()";
  }

  /** True on the shared timer thread, where user work must never run. */
  static boolean onTimerThread() {
    return Thread.currentThread() == Timer.thread;
  }

  /** Holder: the thread exists only once something is scheduled. */
  private static final class Timer {
    static volatile @org.jspecify.annotations.Nullable Thread thread;
    static final ScheduledThreadPoolExecutor EXECUTOR = create();

    private static ScheduledThreadPoolExecutor create() {
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "quell-timer");
        t.setDaemon(true);
        thread = t;
        return t;
      });
      executor.setRemoveOnCancelPolicy(true);
      return executor;
    }
  }
}
