package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.RetryBudget;
import dev.quell.bench.RetryOverheadBenchmark.Work;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each pipeline benchmark, called by hand, returns the work's value and measures what it says: on
 * the fail-once path every library retries once and no breaker opens, no limiter refuses, so the
 * benchmark cannot quietly measure a refusal.
 */
class PipelineBenchmarkTest {
  private final CpuClock cpu = new CpuClock();
  private final PipelineBenchmark benchmark = new PipelineBenchmark();
  private PipelineBenchmark.Policies policies;
  private Work work;
  private PipelineBenchmark.Decorated decorated;

  @BeforeEach
  void setUp() {
    policies = new PipelineBenchmark.Policies();
    work = new Work();
    decorated = new PipelineBenchmark.Decorated();
    decorated.setUp(policies, work);
  }

  @Test
  void successPathsReturnTheValueInEveryLibrary() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(benchmark.successQuellDefault(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successQuellBreakerAndLimit(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successResilience4jRetry(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successResilience4jRetryBreakerAndBulkhead(decorated, cpu)).isEqualTo("ok");
      assertThat(benchmark.pipelineSuccessQuell(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.pipelineSuccessResilience4j(decorated, cpu)).isEqualTo("ok");
      assertThat(benchmark.pipelineSuccessResilience4jDecoratedPerCall(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.pipelineSuccessFailsafe(policies, work, cpu)).isEqualTo("ok");
    }
    PipelineBenchmark.Counter counter = new PipelineBenchmark.Counter();
    assertThat(benchmark.atomicAdd(counter, cpu)).isEqualTo(1);
    assertThat(benchmark.atomicAdd(counter, cpu)).isEqualTo(2);
    long first = benchmark.clockRead(cpu);
    assertThat(benchmark.clockRead(cpu)).isGreaterThanOrEqualTo(first);
  }

  @Test
  void theBreakerAndLimitPolicyHasTheDefaultBreakerAndABulkheadBesideDefaults() {
    assertThat(policies.quellBreakerAndLimit.breakerConfig()).contains(CircuitBreaker.Config.DEFAULT);
    assertThat(policies.quellBreakerAndLimit.limiters()).singleElement()
        .satisfies(l -> assertThat(l.limit()).isEqualTo(PipelineBenchmark.BULKHEAD));
    assertThat(policies.quellBreakerAndLimit.budget()).isNotSameAs(RetryBudget.NONE);
    assertThat(policies.quellBreakerAndLimit.attemptTimeout()).isPresent();
    assertThat(policies.quellBreakerAndLimit.deadline()).isPresent();
  }

  @Test
  void everySuccessPassesEveryGateAndGivesItsPermitsBack() throws Exception {
    for (int i = 0; i < 1_000; i++) {
      benchmark.successQuellBreakerAndLimit(policies, work, cpu);
      benchmark.successResilience4jRetryBreakerAndBulkhead(decorated, cpu);
      benchmark.pipelineSuccessQuell(policies, work, cpu);
      benchmark.pipelineSuccessResilience4j(decorated, cpu);
      benchmark.pipelineSuccessFailsafe(policies, work, cpu);
    }
    assertThat(policies.quellBreakerAndLimit.breaker().orElseThrow().metrics().calls()).isEqualTo(1_000);
    assertThat(policies.quellBreakerAndLimit.limiters().get(0).inFlight()).isZero();
    assertThat(policies.resilience4jBreaker.getMetrics().getNumberOfSuccessfulCalls())
        .as("Resilience4j's default count window holds the last 100").isEqualTo(100);
    assertThat(policies.resilience4jBulkhead.getMetrics().getAvailableConcurrentCalls())
        .isEqualTo(PipelineBenchmark.BULKHEAD);
    assertThat(policies.quellPipeline.breaker().orElseThrow().metrics().calls()).isEqualTo(1_000);
    assertThat(policies.quellPipeline.limiters()).allSatisfy(l -> assertThat(l.inFlight()).isZero());
    assertThat(policies.resilience4jPipeline.breaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1_000);
    assertThat(policies.resilience4jPipeline.bulkhead.getMetrics().getAvailableConcurrentCalls())
        .isEqualTo(PipelineBenchmark.BULKHEAD);
    assertThat(policies.failsafePipeline.breaker.isClosed()).isTrue();
  }

  @Test
  void failOnceRetriesOnceInEveryLibraryAndNoBreakerOpensNorLimiterRefuses() throws Exception {
    int calls = 1_000;
    for (int i = 0; i < calls; i++) {
      assertThat(benchmark.pipelineFailOnceQuell(policies, work, cpu)).isEqualTo("ok");
      assertThat(work.failed).as("the retry succeeded and reset the flag").isFalse();
      assertThat(benchmark.pipelineFailOnceResilience4j(decorated, cpu)).isEqualTo("ok");
      assertThat(work.failed).isFalse();
      assertThat(benchmark.pipelineFailOnceFailsafe(policies, work, cpu)).isEqualTo("ok");
      assertThat(work.failed).isFalse();
    }
    // Quell: two attempts a call, half of them failed, nothing refused, the budget still full
    CircuitBreaker.Metrics quell = policies.quellPipelineFailOnce.breaker().orElseThrow().metrics();
    assertThat(quell.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(quell.calls()).isEqualTo(2L * calls);
    assertThat(quell.failedCalls()).isEqualTo(calls);
    assertThat(quell.refusals()).isZero();
    RetryBudget budget = policies.quellPipelineFailOnce.budget();
    assertThat(budget.tokens()).isGreaterThanOrEqualTo(budget.capacity() - 1);
    for (Limiter limiter : policies.quellPipelineFailOnce.limiters()) {
      assertThat(limiter.inFlight()).isZero();
    }
    // Resilience4j: the same two attempts a call through its breaker, closed, nothing refused
    var r4j = policies.resilience4jPipelineFailOnce;
    assertThat(r4j.breaker.getState()).isEqualTo(State.CLOSED);
    assertThat(r4j.breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(calls);
    assertThat(r4j.breaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(calls);
    assertThat(r4j.breaker.getMetrics().getNumberOfNotPermittedCalls()).isZero();
    assertThat(r4j.retry.getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt()).isEqualTo(calls);
    assertThat(r4j.bulkhead.getMetrics().getAvailableConcurrentCalls()).isEqualTo(PipelineBenchmark.BULKHEAD);
    // Failsafe: closed
    assertThat(policies.failsafePipelineFailOnce.breaker.isClosed()).isTrue();
  }

  @Test
  void everyLibraryGetsTheSameLimits() {
    var r4j = policies.resilience4jPipeline;
    assertThat(r4j.retry.getRetryConfig().getMaxAttempts()).isEqualTo(3);
    assertThat(r4j.retry.getRetryConfig().getIntervalBiFunction().apply(1, null)).isZero();
    assertThat(r4j.breaker.getCircuitBreakerConfig().getFailureRateThreshold()).isEqualTo(90f);
    assertThat(r4j.breaker.getCircuitBreakerConfig().getMinimumNumberOfCalls()).isEqualTo(20);
    assertThat(r4j.rateLimiter.getRateLimiterConfig().getTimeoutDuration()).isEqualTo(Duration.ZERO);
    assertThat(r4j.bulkhead.getBulkheadConfig().getMaxWaitDuration()).isEqualTo(Duration.ZERO);

    var failsafe = policies.failsafePipeline;
    assertThat(failsafe.retry.getConfig().getMaxAttempts()).isEqualTo(3);
    assertThat(failsafe.retry.getConfig().getDelay()).isEqualTo(Duration.ZERO);
    assertThat(failsafe.breaker.getConfig().getFailureRateThreshold()).isEqualTo(90);
    assertThat(failsafe.breaker.getConfig().getFailureExecutionThreshold()).isEqualTo(20);
    assertThat(failsafe.rateLimiter.getConfig().getMaxWaitTime()).isEqualTo(Duration.ZERO);
    assertThat(failsafe.bulkhead.getConfig().getMaxWaitTime()).isEqualTo(Duration.ZERO);

    var quell = policies.quellPipeline;
    assertThat(quell.attempts()).isEqualTo(3);
    assertThat(quell.breakerConfig().orElseThrow().failureRate()).isEqualTo(0.9);
    assertThat(quell.breakerConfig().orElseThrow().minimumCalls()).isEqualTo(20);
    assertThat(quell.limiters()).extracting(Limiter::limit)
        .containsExactlyInAnyOrder(PipelineBenchmark.RATE_PERMITS, PipelineBenchmark.BULKHEAD);
  }
}
