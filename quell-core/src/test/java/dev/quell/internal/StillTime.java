package dev.quell.internal;

import dev.quell.TimeSource;
import java.util.Random;
import java.util.random.RandomGenerator;

/** A clock that never moves, with seeded jitter: token counts and delays are the same on every run. */
final class StillTime implements TimeSource {
  private final Random random = new Random(42);

  @Override
  public long nanoTime() {
    return 1_000_000_000L;
  }

  @Override
  public void sleep(long nanos) {}

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    return () -> true;
  }

  @Override
  public RandomGenerator random() {
    return random;
  }
}
