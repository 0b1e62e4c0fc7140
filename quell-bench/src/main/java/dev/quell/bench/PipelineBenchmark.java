package dev.quell.bench;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.failsafe.RetryPolicy;
import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.bench.RetryOverheadBenchmark.Work;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.decorators.Decorators;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A call through a whole pipeline — retries, circuit breaker, rate limiter and bulkhead — in Quell,
 * Resilience4j and Failsafe, side by side in one run; and, first, what a closed breaker and a
 * concurrency limit add to Quell's plain success path, next to Resilience4j's bare {@code Retry}.
 *
 * <p>The pipelines are built to be as alike as the three APIs allow; {@code docs/benchmarks.md}
 * lists the settings of each and where they differ:
 * <ul>
 *   <li>Quell: one policy, {@code Resilience.DEFAULT} (3 attempts, retry budget, 30 s deadline,
 *       10 s attempt timeout) with a breaker, {@code Limiter.rate} and {@code Limiter.concurrency}.
 *       Its gates are asked before every attempt in a fixed order: breaker, rate, concurrency.
 *   <li>Resilience4j: {@code Decorators} with Retry outermost, then CircuitBreaker, RateLimiter and
 *       Bulkhead around the work — the same order, every attempt passing all three.
 *   <li>Failsafe: {@code Failsafe.with(retryPolicy, circuitBreaker, rateLimiter, bulkhead)}, which
 *       composes them in that order, outermost first.
 * </ul>
 *
 * <p>Every breaker judges a failure rate of at least 90% over the last 30 seconds once it holds 20
 * calls: on the fail-once path half of all attempts fail, and a 50% threshold (the defaults of Quell
 * and Resilience4j) would open the breakers and measure refusals. Every rate limiter admits a
 * million calls per millisecond, far more than one thread can make, so it never refuses here; it
 * still does its bookkeeping on every attempt. Every bulkhead admits 100 at once and never waits.
 * Backoff is zero everywhere, so the fail-once numbers are bookkeeping, not sleeping.
 *
 * <p>The work and the failure are those of {@link RetryOverheadBenchmark}: one value, and one
 * preallocated stackless {@link java.io.IOException} thrown by every other invocation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PipelineBenchmark {

  /** The bulkheads' limit in every library. */
  static final int BULKHEAD = 100;

  /** The breakers' failure-rate threshold, in percent (Quell takes a share: 0.9). */
  static final int FAILURE_RATE_PERCENT = 90;

  /** The breakers' minimum number of calls before the rate is judged. */
  static final int MINIMUM_CALLS = 20;

  /** The breakers' sliding window. */
  static final Duration WINDOW = Duration.ofSeconds(30);

  /** How long an open breaker waits before it lets a probe through (never reached here). */
  static final Duration BREAK = Duration.ofSeconds(5);

  /** Rate limiters: this many permits per {@link #RATE_PERIOD}; a million a millisecond. */
  static final int RATE_PERMITS = 1_000_000;

  static final Duration RATE_PERIOD = Duration.ofMillis(1);

  /** The policies, built once per run as an application keeps them in fields. */
  @State(Scope.Benchmark)
  public static class Policies {
    // ---- item 1: Quell's success path with a closed breaker and a concurrency limit

    /** Budget, deadline and attempt timeout on; no breaker, no limiter. */
    final Resilience quellDefault = Resilience.DEFAULT;

    /** {@code DEFAULT} plus a breaker with the default configuration and a bulkhead. */
    final Resilience quellBreakerAndLimit = Resilience.DEFAULT
        .withBreaker(CircuitBreaker.Config.DEFAULT)
        .withLimiter(Limiter.concurrency(BULKHEAD));

    /** Resilience4j's bare retry with its defaults (3 attempts), the baseline of the issue. */
    final Retry resilience4jRetry = Retry.ofDefaults("bare");

    /** Resilience4j with the same three as {@link #quellBreakerAndLimit}: its default retry, breaker and bulkhead. */
    final Retry resilience4jGuardedRetry = Retry.ofDefaults("guarded");
    final io.github.resilience4j.circuitbreaker.CircuitBreaker resilience4jBreaker =
        io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("guarded");
    final Bulkhead resilience4jBulkhead = Bulkhead.of("guarded", BulkheadConfig.custom()
        .maxConcurrentCalls(BULKHEAD)
        .maxWaitDuration(Duration.ZERO)
        .build());

    // ---- item 2: the whole pipeline, success path

    final Resilience quellPipeline = quellPipeline(Resilience.DEFAULT);

    final Pipeline4j resilience4jPipeline = new Pipeline4j("success");

    final PipelineFailsafe failsafePipeline = new PipelineFailsafe();

    // ---- item 2: the whole pipeline, fail-once path (its own instances: its breakers see failures)

    /** As above, with zero backoff and a budget that funds a retry per success (see {@link RetryOverheadBenchmark}). */
    final Resilience quellPipelineFailOnce = quellPipeline(Resilience.DEFAULT
        .withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.of(1.0, 1000)));

    final Pipeline4j resilience4jPipelineFailOnce = new Pipeline4j("fail-once");

    final PipelineFailsafe failsafePipelineFailOnce = new PipelineFailsafe();

    static Resilience quellPipeline(Resilience base) {
      return base
          .withBreaker(CircuitBreaker.Config.DEFAULT
              .withFailureRate(FAILURE_RATE_PERCENT / 100.0)
              .withMinimumCalls(MINIMUM_CALLS)
              .withWindow(WINDOW)
              .withBreakDuration(BREAK))
          .withLimiter(Limiter.rate(RATE_PERMITS * 1000.0, RATE_PERMITS))   // a million a millisecond, burst a million
          .withLimiter(Limiter.concurrency(BULKHEAD));
    }
  }

  /** Failsafe's four, with their own instances, composed outermost first. */
  static final class PipelineFailsafe {
    final RetryPolicy<String> retry = RetryPolicy.<String>builder()
        .withMaxRetries(2)                                           // 3 attempts; the default delay is zero
        .build();
    final dev.failsafe.CircuitBreaker<String> breaker = dev.failsafe.CircuitBreaker.<String>builder()
        .withFailureRateThreshold(FAILURE_RATE_PERCENT, MINIMUM_CALLS, WINDOW)
        .withDelay(BREAK)
        .build();
    final dev.failsafe.RateLimiter<String> rateLimiter = dev.failsafe.RateLimiter
        .<String>burstyBuilder(RATE_PERMITS, RATE_PERIOD)
        .build();                                                    // never waits (maxWaitTime zero)
    final dev.failsafe.Bulkhead<String> bulkhead = dev.failsafe.Bulkhead.<String>builder(BULKHEAD)
        .build();                                                    // never waits (maxWaitTime zero)
    final FailsafeExecutor<String> executor = Failsafe.with(retry, breaker, rateLimiter, bulkhead);
  }

  /** Resilience4j's four, with its own instances. */
  static final class Pipeline4j {
    final Retry retry;
    final io.github.resilience4j.circuitbreaker.CircuitBreaker breaker;
    final RateLimiter rateLimiter;
    final Bulkhead bulkhead;

    Pipeline4j(String name) {
      retry = Retry.of(name, RetryConfig.custom()
          .maxAttempts(3)
          .waitDuration(Duration.ZERO)
          .build());
      breaker = io.github.resilience4j.circuitbreaker.CircuitBreaker.of(name, CircuitBreakerConfig.custom()
          .failureRateThreshold(FAILURE_RATE_PERCENT)
          .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.TIME_BASED)
          .slidingWindowSize((int) WINDOW.toSeconds())
          .minimumNumberOfCalls(MINIMUM_CALLS)
          .waitDurationInOpenState(BREAK)
          .build());
      rateLimiter = RateLimiter.of(name, RateLimiterConfig.custom()
          .limitForPeriod(RATE_PERMITS)
          .limitRefreshPeriod(RATE_PERIOD)
          .timeoutDuration(Duration.ZERO)
          .build());
      bulkhead = Bulkhead.of(name, BulkheadConfig.custom()
          .maxConcurrentCalls(BULKHEAD)
          .maxWaitDuration(Duration.ZERO)
          .build());
    }

    /** Retry outermost, the bulkhead innermost: Resilience4j's documented order for these four. */
    <T> Decorators.DecorateCallable<T> decorate(Callable<T> work) {
      return Decorators.ofCallable(work)
          .withBulkhead(bulkhead)
          .withRateLimiter(rateLimiter)
          .withCircuitBreaker(breaker)
          .withRetry(retry);
    }
  }

  /**
   * Resilience4j's pipelines decorated once per thread around that thread's work, as an application
   * does when the work is the same on every call. Decorating on every call instead is measured
   * separately ({@code *Resilience4jDecoratedPerCall}).
   */
  @State(Scope.Thread)
  public static class Decorated {
    Callable<String> success;
    Callable<String> failOnce;
    /** Retry, breaker and bulkhead around the success, like {@code quellBreakerAndLimit}. */
    Callable<String> guardedSuccess;

    /** Decorates this thread's work. */
    @Setup(Level.Trial)
    public void setUp(Policies policies, Work work) {
      guardedSuccess = Decorators.ofCallable(work.success)
          .withBulkhead(policies.resilience4jBulkhead)
          .withCircuitBreaker(policies.resilience4jBreaker)
          .withRetry(policies.resilience4jGuardedRetry)
          .decorate();
      success = policies.resilience4jPipeline.decorate(work.success).decorate();
      failOnce = policies.resilience4jPipelineFailOnce.decorate(work.failOnce).decorate();
    }
  }

  // ------------------------------------------------------------------ for scale

  /** One read of the monotonic clock. */
  @Benchmark
  public long clockRead(CpuClock cpu) {
    return System.nanoTime();
  }

  /** An uncontended atomic add, the unit an exact bulkhead (two) and a counting breaker (one) pay per call. */
  @State(Scope.Thread)
  public static class Counter {
    final java.util.concurrent.atomic.AtomicLong value = new java.util.concurrent.atomic.AtomicLong();
  }

  /** One uncontended atomic add. */
  @Benchmark
  public long atomicAdd(Counter counter, CpuClock cpu) {
    return counter.value.incrementAndGet();
  }

  // ------------------------------------------------------------------ item 1: breaker and limit on the success path

  @Benchmark
  public @Nullable String successQuellDefault(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.quellDefault.execute(work.success);
  }

  @Benchmark
  public @Nullable String successQuellBreakerAndLimit(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.quellBreakerAndLimit.execute(work.success);
  }

  @Benchmark
  public String successResilience4jRetry(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.resilience4jRetry.executeCallable(work.success);
  }

  /** Like for like: Resilience4j's default retry, breaker and a bulkhead, decorated once. */
  @Benchmark
  public String successResilience4jRetryBreakerAndBulkhead(Decorated decorated, CpuClock cpu) throws Exception {
    return decorated.guardedSuccess.call();
  }

  // ------------------------------------------------------------------ item 2: the pipeline, success

  @Benchmark
  public @Nullable String pipelineSuccessQuell(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.quellPipeline.execute(work.success);
  }

  @Benchmark
  public String pipelineSuccessResilience4j(Decorated decorated, CpuClock cpu) throws Exception {
    return decorated.success.call();
  }

  @Benchmark
  public String pipelineSuccessResilience4jDecoratedPerCall(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.resilience4jPipeline.decorate(work.success).call();
  }

  @Benchmark
  public String pipelineSuccessFailsafe(Policies policies, Work work, CpuClock cpu) {
    return policies.failsafePipeline.executor.get(work.successSupplier);
  }

  // ------------------------------------------------------------------ item 2: the pipeline, fail once

  @Benchmark
  public @Nullable String pipelineFailOnceQuell(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.quellPipelineFailOnce.execute(work.failOnce);
  }

  @Benchmark
  public String pipelineFailOnceResilience4j(Decorated decorated, CpuClock cpu) throws Exception {
    return decorated.failOnce.call();
  }

  @Benchmark
  public String pipelineFailOnceFailsafe(Policies policies, Work work, CpuClock cpu) {
    return policies.failsafePipelineFailOnce.executor.get(work.failOnceSupplier);
  }
}
