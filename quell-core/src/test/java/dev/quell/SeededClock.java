package dev.quell;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * A clock for breaker unit tests: it moves only when told, may start anywhere (near
 * {@code Long.MAX_VALUE} too), and draws jitter from a seeded, thread-safe random source, or from
 * one the test supplies.
 */
final class SeededClock implements TimeSource {
  private final AtomicLong now;
  private volatile RandomGenerator random;

  SeededClock() {
    this(1_000_000_000L, 42);
  }

  SeededClock(long start, long seed) {
    this.now = new AtomicLong(start);
    this.random = new Random(seed);
  }

  @Override
  public long nanoTime() {
    return now.get();
  }

  void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  void advanceNanos(long nanos) {
    now.addAndGet(nanos);
  }

  void useRandom(RandomGenerator random) {
    this.random = random;
  }

  @Override
  public RandomGenerator random() {
    return random;
  }

  @Override
  public void sleep(long nanos) {
    now.addAndGet(nanos);
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    throw new UnsupportedOperationException("breakers never schedule");
  }
}
