package dev.quell;

import static dev.quell.Attempts.attempt;

import dev.quell.Limiter.AdaptiveConfig;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen;
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions;
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * Linearizability of the lock-free limiters and of the concurrent budget, checked by Lincheck against
 * their own sequential behaviour. The rate limiter's clock moves, so refill, the clamp at a full bucket
 * and waits for reserved permits are all explored. (The bulkhead's wait queue is lock-based; its races
 * are in {@code LimiterConcurrencyTest} and its order in {@code LimiterProperties}.)
 */
class LimiterLincheckTest {

  private static final long BASE = 1_000_000_000L;
  private static final long MS = 1_000_000L;

  /**
   * A rate limiter of 10 a second (one permit per 100 ms), burst 2, waits up to 250 ms. The core hands
   * every gate its own reading of the clock, which may be older than another thread's, so each
   * operation takes its reading as an argument: the generator moves it back and forth across 400 ms,
   * through refill, the clamp at a full bucket, reservations and deadline refusals.
   */
  @Param(name = "t", gen = IntGen.class, conf = "0:8")
  @Param(name = "k", gen = IntGen.class, conf = "-3:14")
  public static class RateOps {
    private final RateLimiter limiter = (RateLimiter) Limiter.rate(10, 2, Duration.ofMillis(250), new SteppingClock(BASE));

    /** The wait in ms if admitted, else minus one minus the Retry-After in ms. */
    @Operation
    public long tryAdmit(@Param(name = "t") int t) {
      return admit(limiter, BASE + t * 50 * MS, Long.MAX_VALUE);
    }

    /** The same with 150 ms left before the call's deadline. */
    @Operation
    public long tryAdmitBeforeADeadline(@Param(name = "t") int t) {
      return admit(limiter, BASE + t * 50 * MS, 150 * MS);
    }

    /**
     * The admission that left the bucket empty at {@code BASE + 50·k ms} never started: its token goes
     * back if it is still the latest. (An admission's mark is that instant; the generator names it.)
     */
    @Operation
    public void refund(@Param(name = "k") int k) {
      AttemptRecord a = attempt(BASE);
      a.marks[0] = BASE + k * 50 * MS;
      limiter.gate().release(a, 0, Gate.NOT_STARTED, BASE);
    }

    @Operation
    public int tokens(@Param(name = "t") int t) {
      return limiter.tokensAt(BASE + t * 50 * MS);
    }
  }

  static long admit(Limiter limiter, long now, long remaining) {
    AttemptRecord a = attempt(now, remaining);
    if (limiter.gate().tryAdmit(a, 0, now)) {
      return a.waitNanos / MS;
    }
    return -1 - a.retryAfterNanos / MS;
  }

  /**
   * The same limiter on a clock that one operation advances. Every other operation reads the clock
   * and acts on it under a shared read lock, so the clock never moves during an operation — as if
   * each thread read it at its linearization point — while those operations still run concurrently
   * with one another.
   */
  @Param(name = "steps", gen = IntGen.class, conf = "1:3")
  public static class RateOnAMovingClockOps {
    private final SteppingClock clock = new SteppingClock(BASE);
    private final Limiter limiter = Limiter.rate(10, 2, Duration.ofMillis(250), clock);
    private final ReentrantReadWriteLock tick = new ReentrantReadWriteLock();

    @Operation
    public void advance(@Param(name = "steps") int steps) {
      tick.writeLock().lock();
      try {
        clock.advance(steps * 50 * MS);
      } finally {
        tick.writeLock().unlock();
      }
    }

    @Operation
    public long tryAdmit() {
      tick.readLock().lock();
      try {
        return admit(limiter, clock.nanoTime(), Long.MAX_VALUE);
      } finally {
        tick.readLock().unlock();
      }
    }


    @Operation
    public int available() {
      tick.readLock().lock();
      try {
        return limiter.available();
      } finally {
        tick.readLock().unlock();
      }
    }
  }

  /**
   * A bulkhead of 2 without a wait. A release with nothing in flight is a no-op, so operations need
   * no bookkeeping beside the limiter (bookkeeping outside it would not be atomic with it).
   */
  public static class BulkheadOps {
    private final Limiter limiter = Limiter.concurrency(2);

    @Operation
    public boolean tryAdmit() {
      return limiter.gate().tryAdmit(attempt(0), 0, 0);
    }

    @Operation
    public void release() {
      limiter.gate().release(attempt(0), 0, Gate.SUCCEEDED, 0);
    }

    @Operation
    public int available() {
      return limiter.available();
    }
  }

  /**
   * Loss-based AIMD from 2 in [1, 4], halving on loss. Each release says how the attempt ended and how
   * many were in flight when it was admitted (the record's mark).
   */
  @Param(name = "how", gen = IntGen.class, conf = "0:6")
  @Param(name = "sample", gen = IntGen.class, conf = "1:4")
  public static class AdaptiveOps {
    private final AdaptiveLimiter limiter = (AdaptiveLimiter) Limiter.adaptive(
        AdaptiveConfig.loss().withMinLimit(1).withInitialLimit(2).withMaxLimit(4).withBackoffRatio(0.5));

    @Operation
    public boolean tryAdmit() {
      return limiter.gate().tryAdmit(attempt(0), 0, 0);
    }

    @Operation
    public void release(@Param(name = "how") int how, @Param(name = "sample") int sample) {
      AttemptRecord a = attempt(0);
      a.marks[0] = sample;
      limiter.gate().release(a, 0, how, 0);
    }

    @Operation
    public double limit() {
      return limiter.exactLimit();
    }

    @Operation
    public int available() {
      return limiter.available();
    }
  }

  /** Envoy's budget at 50%, minimum 1. */
  public static class ConcurrentBudgetOps {
    private final RetryBudget budget = RetryBudget.concurrent(0.5, 1);

    @Operation
    public void callStarted() {
      budget.callStarted();
    }

    @Operation
    public void callEnded() {
      budget.callEnded();
    }

    @Operation
    public boolean trySpend() {
      return budget.trySpend();
    }

    @Operation
    public boolean trySpendSheddable() {
      return budget.trySpend(Criticality.SHEDDABLE);
    }

    @Operation
    public void additionalEnded() {
      budget.additionalEnded();
    }

    @Operation
    public double tokens() {
      return budget.tokens();
    }
  }

  @Test
  void rateLimiterIsLinearizableUnderModelChecking() {
    LinChecker.check(RateOps.class, new ModelCheckingOptions().iterations(15).invocationsPerIteration(200));
  }

  @Test
  void rateLimiterIsLinearizableUnderStress() {
    LinChecker.check(RateOps.class, new StressOptions().iterations(10).invocationsPerIteration(500));
  }

  @Test
  void rateLimiterOnAMovingClockIsLinearizable() {
    LinChecker.check(RateOnAMovingClockOps.class, new ModelCheckingOptions().iterations(10).invocationsPerIteration(150));
  }

  @Test
  void bulkheadIsLinearizable() {
    LinChecker.check(BulkheadOps.class, new ModelCheckingOptions().iterations(10).invocationsPerIteration(200));
  }

  @Test
  void adaptiveLimitIsLinearizable() {
    LinChecker.check(AdaptiveOps.class, new ModelCheckingOptions().iterations(12).invocationsPerIteration(200));
  }

  @Test
  void concurrentBudgetIsLinearizable() {
    LinChecker.check(ConcurrentBudgetOps.class, new ModelCheckingOptions().iterations(15).invocationsPerIteration(200));
  }
}
