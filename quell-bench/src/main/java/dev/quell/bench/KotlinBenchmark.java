package dev.quell.bench;

import dev.quell.Attempt;
import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.kotlin.SuspendKt;
import io.github.resilience4j.kotlin.retry.RetryKt;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.kotlin.timelimiter.TimeLimiterKt;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlin.jvm.functions.Function1;
import kotlin.jvm.functions.Function2;
import kotlinx.coroutines.BuildersKt;
import kotlinx.coroutines.CoroutineScope;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A suspend call under Quell ({@code executeSuspend}, quell-kotlin) beside the same call under
 * Resilience4j's Kotlin extension ({@code Retry.executeSuspendFunction}, resilience4j-kotlin), in one
 * run: the success path and fail-once, as {@link RetryOverheadBenchmark} measures the blocking calls.
 *
 * <p>Written in Java so quell-bench needs no Kotlin compiler: each benchmark enters a coroutine with
 * {@code runBlocking} (the bridge any blocking caller uses) and calls the suspend function through its
 * compiled signature (the block is a {@code Function1}/{@code Function2} whose last parameter is the
 * continuation). The block never suspends; it returns its value, or throws, at once. The bridge's own
 * cost is {@link #runBlockingOnly}: subtract it from the others to compare the libraries alone.
 *
 * <p>The policies are those of {@link RetryOverheadBenchmark}: Quell {@link Resilience#DEFAULT}
 * (automatic budget, 30 s deadline, 10 s attempt timeout) for success, and for fail-once zero
 * backoff with a budget that funds one retry per success ({@code RetryBudget.of(1.0, 1000)}); Resilience4j
 * {@code Retry.ofDefaults} for success and 3 attempts with {@code waitDuration(0)} for fail-once.
 * The failure is one preallocated stackless {@link IOException}. Every row also reports
 * {@link CpuClock}'s {@code cpuMicros} and {@code wallMicros}, as {@link ReactorBenchmark}'s do.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class KotlinBenchmark {

  /** The policies, built once per run. */
  @State(Scope.Benchmark)
  public static class Policies {
    final Resilience quell = Resilience.DEFAULT;
    /** DEFAULT without the attempt timeout and the deadline: no timer per attempt (what the timers cost). */
    final Resilience quellNoTimers = Resilience.DEFAULT.withoutAttemptTimeout().withoutDeadline();
    final Resilience quellFailOnce = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.of(1.0, 1000));
    /** Fail-once with what Resilience4j's operator does not do taken off: no budget, no deadline, no attempt timeout. */
    final Resilience quellFailOnceBare = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE)
        .withoutAttemptTimeout().withoutDeadline();
    final Retry resilience4j = Retry.ofDefaults("kotlin-success");
    final Retry resilience4jFailOnce = Retry.of("kotlin-fail-once", RetryConfig.custom()
        .maxAttempts(3)
        .waitDuration(Duration.ZERO)
        .build());
  }

  /** The work, one per benchmark thread, as suspend lambdas in their compiled form. */
  @State(Scope.Thread)
  public static class Work {
    static final IOException FAILURE = new RetryOverheadBenchmark.StacklessIOException("first attempt fails");

    /** Not final, so the JIT cannot fold the result into a constant. */
    String value = "ok";
    boolean failed;

    /** {@code suspend (Attempt) -> String}, for Quell. */
    final Function2<Attempt, Continuation<? super String>, Object> quellSuccess = (attempt, c) -> value;
    final Function2<Attempt, Continuation<? super String>, Object> quellFailOnce = (attempt, c) -> failOnce();

    /** {@code suspend () -> String}, for Resilience4j. */
    final Function1<Continuation<? super String>, Object> r4jSuccess = c -> value;
    final Function1<Continuation<? super String>, Object> r4jFailOnce = c -> failOnce();

    /**
     * Resilience4j's way to give each attempt a timeout, as Quell's {@code DEFAULT} does (10 s):
     * the attempt under resilience4j-kotlin's {@code TimeLimiter.executeSuspendFunction}.
     */
    final TimeLimiter timeLimiter = TimeLimiter.of(TimeLimiterConfig.custom().timeoutDuration(Duration.ofSeconds(10))
        .build());
    final Function1<Continuation<? super String>, Object> r4jTimedSuccess =
        c -> TimeLimiterKt.executeSuspendFunction(timeLimiter, r4jSuccess, c);
    final Function1<Continuation<? super String>, Object> r4jTimedFailOnce =
        c -> TimeLimiterKt.executeSuspendFunction(timeLimiter, r4jFailOnce, c);

    /** First attempt throws, the retry returns (alternating per invocation). */
    String failOnce() {
      if (!failed) {
        failed = true;
        throw sneaky(FAILURE);
      }
      failed = false;
      return value;
    }
  }

  /** Throws a checked exception from a Kotlin function type, as Kotlin code does without a throws clause. */
  @SuppressWarnings("unchecked")
  static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
    throw (E) t;
  }

  /**
   * The continuation of a caller that is itself compiled suspend code, for the rows without a
   * bridge: the block never suspends, so neither does the call, which returns its value (or throws)
   * straight back and never resumes this.
   */
  static final Continuation<Object> CALLER = new Continuation<>() {
    @Override
    public kotlin.coroutines.CoroutineContext getContext() {
      return EmptyCoroutineContext.INSTANCE;
    }

    @Override
    public void resumeWith(Object result) {
      throw new IllegalStateException("the call suspended: the row measures something else than it says");
    }
  };

  private static <T> T block(Function2<CoroutineScope, Continuation<? super T>, Object> body)
      throws InterruptedException {
    return BuildersKt.runBlocking(EmptyCoroutineContext.INSTANCE, body);
  }

  // ------------------------------------------------------------------ the bridge alone

  @Benchmark
  public String runBlockingOnly(Work work, CpuClock cpu) throws InterruptedException {
    return block((scope, c) -> work.value);
  }

  // ------------------------------------------------------------------ success

  @Benchmark
  public String successQuell(Policies p, Work work, CpuClock cpu) throws InterruptedException {
    return block((scope, c) -> SuspendKt.executeSuspend(p.quell, work.quellSuccess, c));
  }

  /** Quell without timers, to show what the attempt timeout's timer costs on the real clock. */
  @Benchmark
  public String successQuellNoTimers(Policies p, Work work, CpuClock cpu) throws InterruptedException {
    return block((scope, c) -> SuspendKt.executeSuspend(p.quellNoTimers, work.quellSuccess, c));
  }

  /**
   * For scale: the core's asynchronous call alone under {@code DEFAULT}, with work that answers at
   * once, and no coroutine at all (no bridge either): what {@code executeSuspend} builds on.
   */
  @Benchmark
  public String successCoreExecuteAsync(Policies p, Work work, CpuClock cpu) {
    return p.quell.<String>executeAsync(attempt -> CompletableFuture.completedFuture(work.value)).join();
  }

  @Benchmark
  public String successResilience4j(Policies p, Work work, CpuClock cpu) throws InterruptedException {
    return block((scope, c) -> RetryKt.executeSuspendFunction(p.resilience4j, work.r4jSuccess, c));
  }

  // ------------------------------------------------------------------ no bridge: suspend code calling suspend code

  /** {@link #successQuell} without {@code runBlocking}: the library's own cost, called from suspend code. */
  @Benchmark
  public @Nullable Object successQuellInCoroutine(Policies p, Work work, CpuClock cpu) {
    return SuspendKt.executeSuspend(p.quell, work.quellSuccess, CALLER);
  }

  @Benchmark
  public Object successResilience4jInCoroutine(Policies p, Work work, CpuClock cpu) {
    return RetryKt.executeSuspendFunction(p.resilience4j, work.r4jSuccess, CALLER);
  }

  @Benchmark
  public @Nullable Object failOnceQuellInCoroutine(Policies p, Work work, CpuClock cpu) {
    return SuspendKt.executeSuspend(p.quellFailOnce, work.quellFailOnce, CALLER);
  }

  /** {@link #failOnceQuellInCoroutine} with no budget, deadline or attempt timeout: what those cost per retry. */
  @Benchmark
  public @Nullable Object failOnceQuellBareInCoroutine(Policies p, Work work, CpuClock cpu) {
    return SuspendKt.executeSuspend(p.quellFailOnceBare, work.quellFailOnce, CALLER);
  }

  /** {@link #successResilience4jInCoroutine} with each attempt under a 10 s {@code TimeLimiter}, as Quell's attempts are. */
  @Benchmark
  public Object successResilience4jTimedInCoroutine(Policies p, Work work, CpuClock cpu) {
    return RetryKt.executeSuspendFunction(p.resilience4j, work.r4jTimedSuccess, CALLER);
  }

  /** {@link #failOnceResilience4jInCoroutine} with each attempt under a 10 s {@code TimeLimiter}. */
  @Benchmark
  public Object failOnceResilience4jTimedInCoroutine(Policies p, Work work, CpuClock cpu) {
    return RetryKt.executeSuspendFunction(p.resilience4jFailOnce, work.r4jTimedFailOnce, CALLER);
  }

  @Benchmark
  public Object failOnceResilience4jInCoroutine(Policies p, Work work, CpuClock cpu) {
    return RetryKt.executeSuspendFunction(p.resilience4jFailOnce, work.r4jFailOnce, CALLER);
  }

  // ------------------------------------------------------------------ fail once, then succeed

  @Benchmark
  public String failOnceQuell(Policies p, Work work, CpuClock cpu) throws InterruptedException {
    return block((scope, c) -> SuspendKt.executeSuspend(p.quellFailOnce, work.quellFailOnce, c));
  }

  @Benchmark
  public String failOnceResilience4j(Policies p, Work work, CpuClock cpu) throws InterruptedException {
    return block((scope, c) -> RetryKt.executeSuspendFunction(p.resilience4jFailOnce, work.r4jFailOnce, c));
  }
}
