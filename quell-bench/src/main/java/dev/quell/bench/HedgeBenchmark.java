package dev.quell.bench;

import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.bench.RetryOverheadBenchmark.Work;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What hedging costs a call that does not need a hedge: the success path of {@code execute} with a
 * hedge configured but never triggered (the work answers at once, long before any hedge delay),
 * next to the same call without a hedge.
 *
 * <ul>
 *   <li>{@code successDefault}: {@link Resilience#DEFAULT}, no hedge.
 *   <li>{@code successHedgeAfter}: {@code DEFAULT.withHedge(Hedge.after(50 ms))}.
 *   <li>{@code successHedgeMaxExtraLoad}: {@code DEFAULT.withHedge(Hedge.maxExtraLoad(0.05))}: the
 *       delay follows the policy's live latency histogram, so every success is also recorded in it.
 * </ul>
 *
 * <p>Resilience4j 2.4.0 has no hedge of this shape to put beside them: its repository holds a
 * {@code resilience4j-hedge} module, but it is not published with 2.4.0 (nor included in
 * {@code resilience4j-all}), and it decorates only asynchronous work (a {@code CompletionStage}
 * supplier, or a {@code Callable} submitted to an executor), not a call on the caller's thread.
 * Failsafe 3.3.2 has no hedging policy.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HedgeBenchmark {

  /**
   * The policies, built once per run. Each hedge gets an executor that counts what it is handed (a
   * hedge's wake-up when its delay has passed, and the hedge itself) and passes it on to a pool like
   * Quell's default; it is used only once a hedge is due, so the path measured is the default one.
   * The counts are printed after each iteration: a hedge sent during the measurement means the
   * benchmark did not measure the untriggered path alone.
   */
  @State(Scope.Benchmark)
  public static class Policies {
    final CountingExecutor afterExecutor = new CountingExecutor();
    final CountingExecutor maxExtraLoadExecutor = new CountingExecutor();
    final Resilience unhedged = Resilience.DEFAULT;
    final Resilience hedgedAfter = Resilience.DEFAULT
        .withHedge(Hedge.after(Duration.ofMillis(50)).withExecutor(afterExecutor));
    final Resilience hedgedMaxExtraLoad = Resilience.DEFAULT
        .withHedge(Hedge.maxExtraLoad(0.05).withExecutor(maxExtraLoadExecutor));

    /** Prints how many hedge tasks were handed to each executor so far. */
    @TearDown(Level.Iteration)
    public void report() {
      System.out.println("hedge tasks so far: after(50 ms) " + afterExecutor.handed.sum()
          + ", maxExtraLoad(0.05) " + maxExtraLoadExecutor.handed.sum()
          + " (" + hedgedMaxExtraLoad.timing().map(t -> "hedge delay " + t.hedgeDelay().orElse(null)).orElse("") + ")");
    }

    /** Stops the pool. */
    @TearDown(Level.Trial)
    public void stop() {
      afterExecutor.pool.shutdown();
      maxExtraLoadExecutor.pool.shutdown();
    }
  }

  /** Counts the tasks it runs, on daemon threads that go after a minute idle (as Quell's default pool). */
  static final class CountingExecutor implements Executor {
    final LongAdder handed = new LongAdder();
    final ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
        new SynchronousQueue<>(), task -> {
          Thread t = new Thread(task, "bench-hedge");
          t.setDaemon(true);
          return t;
        });

    @Override
    public void execute(Runnable task) {
      handed.increment();
      pool.execute(task);
    }
  }

  /** One read of the monotonic clock, for scale. */
  @Benchmark
  public long clockRead(CpuClock cpu) {
    return System.nanoTime();
  }

  @Benchmark
  public @Nullable String successDefault(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.unhedged.execute(work.success);
  }

  @Benchmark
  public @Nullable String successHedgeAfter(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.hedgedAfter.execute(work.success);
  }

  @Benchmark
  public @Nullable String successHedgeMaxExtraLoad(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.hedgedMaxExtraLoad.execute(work.success);
  }
}
