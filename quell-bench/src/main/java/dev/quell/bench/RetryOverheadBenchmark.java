package dev.quell.bench;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.failsafe.RetryPolicy;
import dev.failsafe.function.CheckedSupplier;
import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
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
 * What a retry library costs per call, measured side by side in one run: a direct call (the
 * baseline), Quell, Resilience4j {@code Retry} and Failsafe {@code RetryPolicy}.
 *
 * <p>Two paths:
 * <ul>
 *   <li><b>success</b> ({@code success*}): the work returns a value at once. This is the path nearly
 *       every call takes, so it is the one that must cost next to nothing. Quell runs
 *       {@link Resilience#DEFAULT} with everything on: the automatic retry budget, the 30 s deadline
 *       and the 10 s attempt timeout. Resilience4j runs {@code Retry.ofDefaults} (3 attempts),
 *       Failsafe a {@code RetryPolicy} with 2 retries (3 attempts).
 *   <li><b>fail once</b> ({@code failOnce*}): the first attempt throws an {@link IOException}, the
 *       second returns a value. Backoff is zero in every library (Quell {@link Backoff#NONE},
 *       Resilience4j {@code waitDuration(0)}, Failsafe's default delay, which is zero;
 *       its {@code withDelay} refuses {@code Duration.ZERO}), so the
 *       numbers are the bookkeeping of a retry, not a sleep.
 * </ul>
 *
 * <p><b>Why the fail-once Quell policy has its own budget.</b> On this path every call retries once:
 * retries are 100% of traffic. The default automatic budget funds retries from 10% of successes (plus
 * a small floor), so after it drains it correctly refuses almost every retry, and the benchmark
 * would measure the refusal (with its guarded 100 ms pause), not a retry. The fail-once policy
 * therefore uses {@code RetryBudget.of(1.0, 1000)}: fraction 1.0 means each success deposits exactly
 * the token its retry spent, so the budget stays funded and every call retries once, as the other
 * libraries (which have no budget) do. The budget's work is still measured: every retry spends a
 * token and every success deposits one.
 *
 * <p>Policies are built once, in a {@link Scope#Benchmark} state, as an application keeps them in a
 * field. The work and its fail-once flag live in a per-thread state, so several benchmark threads
 * never share the flag. The failure is one preallocated {@link IOException} without a stack trace:
 * filling in a fresh stack trace costs microseconds, the same in every library, and would hide the
 * differences this benchmark is about. Every method returns its result so JMH consumes it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RetryOverheadBenchmark {

  /** The policies, built once per run. */
  @State(Scope.Benchmark)
  public static class Policies {
    /** Budget, deadline and attempt timeout all on. */
    final Resilience quell = Resilience.DEFAULT;

    /**
     * Zero backoff, and a budget that funds one retry per success (see the class comment): fraction
     * 1.0, floor 1000 per second.
     */
    final Resilience quellFailOnce = Resilience.DEFAULT
        .withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.of(1.0, 1000));

    /** Default config: 3 attempts. */
    final Retry resilience4j = Retry.ofDefaults("success");

    /** 3 attempts, no wait. */
    final Retry resilience4jFailOnce = Retry.of("fail-once", RetryConfig.custom()
        .maxAttempts(3)
        .waitDuration(Duration.ZERO)
        .build());

    /** 2 retries (3 attempts). */
    final FailsafeExecutor<String> failsafe = Failsafe.with(RetryPolicy.<String>builder()
        .withMaxRetries(2)
        .build());

    /** 2 retries, no delay: Failsafe's default delay is zero, and {@code withDelay} refuses zero. */
    final RetryPolicy<String> failsafeFailOncePolicy = RetryPolicy.<String>builder()
        .withMaxRetries(2)
        .build();
    final FailsafeExecutor<String> failsafeFailOnce = Failsafe.with(failsafeFailOncePolicy);
  }

  /** The work being protected, one per benchmark thread. */
  @State(Scope.Thread)
  public static class Work {
    /** The failure of the first attempt; preallocated and stackless (see the class comment). */
    static final IOException FAILURE = new StacklessIOException("first attempt fails");

    /** Not final, so the JIT cannot fold the result into a constant. */
    String value = "ok";

    /** Whether the current fail-once call has already failed its first attempt. */
    boolean failed;

    final Callable<String> success = this::succeed;
    final CheckedSupplier<String> successSupplier = this::succeed;
    final Callable<String> failOnce = this::failOnce;
    final CheckedSupplier<String> failOnceSupplier = this::failOnce;

    String succeed() {
      return value;
    }

    /** Throws on every other invocation, starting with the first: first attempt fails, the retry succeeds. */
    String failOnce() throws IOException {
      if (!failed) {
        failed = true;
        throw FAILURE;
      }
      failed = false;
      return value;
    }
  }

  // ------------------------------------------------------------------ for scale

  /** One read of the monotonic clock: what Quell keeps off the success path (see {@code docs/benchmarks.md}). */
  @Benchmark
  public long clockRead(CpuClock cpu) {
    return System.nanoTime();
  }

  // ------------------------------------------------------------------ success path

  @Benchmark
  public String successDirect(Work work, CpuClock cpu) {
    return work.succeed();
  }

  @Benchmark
  public @Nullable String successQuell(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.quell.execute(work.success);
  }

  @Benchmark
  public String successResilience4j(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.resilience4j.executeCallable(work.success);
  }

  @Benchmark
  public String successFailsafe(Policies policies, Work work, CpuClock cpu) {
    return policies.failsafe.get(work.successSupplier);
  }

  // ------------------------------------------------------------------ fail once, then succeed

  /** The baseline: a hand-written single retry. */
  @Benchmark
  public String failOnceDirect(Work work, CpuClock cpu) throws IOException {
    try {
      return work.failOnce();
    } catch (IOException first) {
      return work.failOnce();
    }
  }

  @Benchmark
  public @Nullable String failOnceQuell(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.quellFailOnce.execute(work.failOnce);
  }

  @Benchmark
  public String failOnceResilience4j(Policies policies, Work work, CpuClock cpu) throws Exception {
    return policies.resilience4jFailOnce.executeCallable(work.failOnce);
  }

  @Benchmark
  public String failOnceFailsafe(Policies policies, Work work, CpuClock cpu) {
    return policies.failsafeFailOnce.get(work.failOnceSupplier);
  }

  /** An I/O failure that skips the stack walk, so throwing it costs the same in every library. */
  static final class StacklessIOException extends IOException {
    StacklessIOException(String message) {
      super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
