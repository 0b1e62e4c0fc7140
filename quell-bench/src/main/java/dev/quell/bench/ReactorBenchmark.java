package dev.quell.bench;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.reactor.QuellReactor;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.time.Duration;
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
import reactor.core.publisher.Mono;

/**
 * What a retry operator costs a {@code Mono}, side by side in one run: the bare {@code Mono} (the
 * baseline), Quell's {@code QuellReactor.of(policy)}, Resilience4j's {@code RetryOperator}, and
 * Reactor's own {@code retryWhen(Retry.max(2))} for scale. Each operator applied with
 * {@code transformDeferred}, as their users do, and subscribed with {@code block()}; the Mono
 * completes on the subscribing thread, so {@code block()} never parks, and its cost (a latch) is
 * the same in every row.
 *
 * <p>Two paths, as in {@link RetryOverheadBenchmark}: <b>success</b> (the work answers at once;
 * Quell runs {@link Resilience#DEFAULT}: the automatic budget, the 30 s deadline, the 10 s attempt
 * timeout; Resilience4j {@code Retry.ofDefaults}) and <b>fail once</b> (the first attempt fails with
 * a preallocated, stackless {@link IOException}, the retry succeeds; no backoff in any of them, and
 * Quell's budget funds one retry per success, for the reason {@link RetryOverheadBenchmark} gives).
 *
 * <p>The operated {@code Mono}s are assembled once per benchmark thread and subscribed once per
 * operation: what is measured is a subscription, with the per-subscription work
 * {@code transformDeferred} does.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ReactorBenchmark {

  /** The policies, built once per run. */
  @State(Scope.Benchmark)
  public static class Policies {
    final Resilience quell = Resilience.DEFAULT;
    /** DEFAULT without the attempt timeout and the deadline: no timer per attempt (what the timers cost). */
    final Resilience quellNoTimers = Resilience.DEFAULT.withoutAttemptTimeout().withoutDeadline();
    final Resilience quellFailOnce = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.of(1.0, 1000));
    final Retry resilience4j = Retry.ofDefaults("success");
    final Retry resilience4jFailOnce = Retry.of("fail-once", RetryConfig.custom()
        .maxAttempts(3)
        .waitDuration(Duration.ZERO)
        .build());
  }

  /** The work and the operated Monos, per benchmark thread. */
  @State(Scope.Thread)
  public static class Work {
    static final IOException FAILURE = new RetryOverheadBenchmark.StacklessIOException("first attempt fails");

    /** Not final, so the JIT cannot fold the result into a constant. */
    String value = "ok";
    boolean failed;

    final Mono<String> success = Mono.fromCallable(this::succeed);
    final Mono<String> failOnce = Mono.fromCallable(this::failOnce);
    final Mono<String> successHidden = success.hide();

    Mono<String> successQuell;
    Mono<String> successQuellNoTimers;
    Mono<String> successResilience4j;
    Mono<String> successReactor;
    Mono<String> failOnceQuell;
    Mono<String> failOnceResilience4j;
    Mono<String> failOnceReactor;

    @org.openjdk.jmh.annotations.Setup
    public void assemble(Policies p) {
      successQuell = success.transformDeferred(QuellReactor.of(p.quell));
      successQuellNoTimers = success.transformDeferred(QuellReactor.of(p.quellNoTimers));
      successResilience4j = success.transformDeferred(RetryOperator.of(p.resilience4j));
      successReactor = success.retryWhen(reactor.util.retry.Retry.max(2));
      failOnceQuell = failOnce.transformDeferred(QuellReactor.of(p.quellFailOnce));
      failOnceResilience4j = failOnce.transformDeferred(RetryOperator.of(p.resilience4jFailOnce));
      failOnceReactor = failOnce.retryWhen(reactor.util.retry.Retry.max(2));
    }

    String succeed() {
      return value;
    }

    /** First attempt fails, the retry succeeds. */
    String failOnce() throws IOException {
      if (!failed) {
        failed = true;
        throw FAILURE;
      }
      failed = false;
      return value;
    }
  }

  /**
   * The bare Mono, hidden so that {@code block()} subscribes to it as it does to the others
   * (without {@code hide()} it would call the {@code Callable} directly, with no subscription).
   */
  @Benchmark
  public @Nullable String successDirect(Work work, CpuClock cpu) {
    return work.successHidden.block();
  }

  @Benchmark
  public @Nullable String successQuell(Work work, CpuClock cpu) {
    return work.successQuell.block();
  }

  /**
   * For scale: the core's asynchronous call alone under the same policy, with work that answers at
   * once and no Reactor at all — what the operator builds on.
   */
  @Benchmark
  public @Nullable Object successCoreRunAsync(Policies policies, Work work, CpuClock cpu) {
    return policies.quell.runAsync(attempt -> java.util.concurrent.CompletableFuture.completedFuture(work.succeed())).join().value();
  }

  /**
   * The core's asynchronous call alone without timers (the policy of {@link #successQuellNoTimers}):
   * with {@link #successCoreRunAsync}, what the attempt timer costs the core itself.
   */
  @Benchmark
  public @Nullable Object successCoreRunAsyncNoTimers(Policies policies, Work work, CpuClock cpu) {
    return policies.quellNoTimers.runAsync(attempt -> java.util.concurrent.CompletableFuture.completedFuture(work.succeed())).join().value();
  }

  /** Quell without timers, to show what the attempt timeout's timer costs on the real clock. */
  @Benchmark
  public @Nullable String successQuellNoTimers(Work work, CpuClock cpu) {
    return work.successQuellNoTimers.block();
  }

  @Benchmark
  public @Nullable String successResilience4j(Work work, CpuClock cpu) {
    return work.successResilience4j.block();
  }

  @Benchmark
  public @Nullable String successReactorRetry(Work work, CpuClock cpu) {
    return work.successReactor.block();
  }

  @Benchmark
  public @Nullable String failOnceQuell(Work work, CpuClock cpu) {
    return work.failOnceQuell.block();
  }

  @Benchmark
  public @Nullable String failOnceResilience4j(Work work, CpuClock cpu) {
    return work.failOnceResilience4j.block();
  }

  @Benchmark
  public @Nullable String failOnceReactorRetry(Work work, CpuClock cpu) {
    return work.failOnceReactor.block();
  }
}
