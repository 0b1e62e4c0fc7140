package dev.quell;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Where Quell reads time, waits, schedules, and draws jitter. Every time-dependent decision in the
 * library goes through one of these, so a test or a simulation can substitute a virtual clock
 * (see {@code dev.quell.test.VirtualTime}) and run in milliseconds, deterministically.
 *
 * <p>Implementations must be thread-safe. {@link #nanoTime()} must be monotonic.
 */
public interface TimeSource {

  /** The real clock: {@link System#nanoTime()}, {@link Thread#sleep}, and one shared daemon timer thread. */
  static TimeSource system() {
    return SystemTime.INSTANCE;
  }

  /** Monotonic time in nanoseconds; only differences are meaningful. */
  long nanoTime();

  /**
   * Blocks the calling thread for {@code nanos}. A virtual clock advances instead of blocking.
   *
   * @throws InterruptedException if the thread is interrupted while waiting
   */
  void sleep(long nanos) throws InterruptedException;

  /**
   * Runs {@code task} once, {@code delayNanos} from now, on a thread of the time source's choosing
   * (the real clock uses one shared daemon thread, so tasks must be short). The returned handle
   * cancels the task if it has not started.
   */
  Scheduled schedule(Runnable task, long delayNanos);

  /**
   * The random source for jitter. The real clock uses {@link ThreadLocalRandom}; a virtual clock
   * built with a seed returns a seeded generator so that a run repeats exactly. Only ever called
   * from the thread making the decision.
   */
  default RandomGenerator random() {
    return ThreadLocalRandom.current();
  }

  /** Convenience for {@link #sleep(long)} with a {@link Duration}. */
  default void sleep(Duration duration) throws InterruptedException {
    sleep(duration.toNanos());
  }

  /** A task scheduled on a {@link TimeSource}. */
  interface Scheduled {
    /**
     * Cancels the task.
     *
     * @return {@code true} if the task had not run and now never will
     */
    boolean cancel();
  }
}
