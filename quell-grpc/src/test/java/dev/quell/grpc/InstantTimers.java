package dev.quell.grpc;

import dev.quell.TimeSource;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.random.RandomGenerator;
import java.util.SplittableRandom;

/**
 * A virtual clock that never moves and runs every timer at once, on another thread. For policies
 * with no attempt timeout and no deadline, the only timers are backoff delays and the guarded
 * rejection pause: this clock plays them out instantly, and a budget's floor never refills, so
 * budget tests count tokens, not milliseconds.
 */
final class InstantTimers implements TimeSource {
  private final Executor executor = ForkJoinPool.commonPool();
  private final SplittableRandom random = new SplittableRandom(42);

  @Override
  public long nanoTime() {
    return 0;
  }

  @Override
  public void sleep(long nanos) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    executor.execute(task);
    return () -> false;
  }

  @Override
  public synchronized RandomGenerator random() {
    return random;
  }
}
