package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Each Kotlin benchmark returns the work's value, and the fail-once ones really retry once. */
class KotlinBenchmarkTest {
  private final KotlinBenchmark benchmark = new KotlinBenchmark();
  private final KotlinBenchmark.Policies policies = new KotlinBenchmark.Policies();
  private final KotlinBenchmark.Work work = new KotlinBenchmark.Work();
  private final CpuClock cpu = new CpuClock();

  @Test
  void everyBenchmarkReturnsTheValue() throws Exception {
    assertThat(benchmark.runBlockingOnly(work, cpu)).isEqualTo("ok");
    assertThat(benchmark.successQuell(policies, work, cpu)).isEqualTo("ok");
    assertThat(benchmark.successResilience4j(policies, work, cpu)).isEqualTo("ok");
    assertThat(benchmark.successQuellNoTimers(policies, work, cpu)).isEqualTo("ok");
    assertThat(benchmark.successCoreExecuteAsync(policies, work, cpu)).isEqualTo("ok");
    // without the bridge: the call never suspends (CALLER would throw if it were resumed)
    assertThat(benchmark.successQuellInCoroutine(policies, work, cpu)).isEqualTo("ok");
    assertThat(benchmark.successResilience4jInCoroutine(policies, work, cpu)).isEqualTo("ok");
    assertThat(benchmark.successResilience4jTimedInCoroutine(policies, work, cpu)).isEqualTo("ok");
  }

  @Test
  void failOnceRetriesOnceInBothLibraries() throws Exception {
    for (int i = 0; i < 100; i++) {
      assertThat(benchmark.failOnceQuell(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.failOnceResilience4j(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.failOnceQuellInCoroutine(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.failOnceQuellBareInCoroutine(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.failOnceResilience4jInCoroutine(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.failOnceResilience4jTimedInCoroutine(policies, work, cpu)).isEqualTo("ok");
    }
    assertThat(policies.quellFailOnce.budget().tokens()).as("every retry funded, every success refunds it")
        .isEqualTo(policies.quellFailOnce.budget().capacity());
    assertThat(policies.resilience4jFailOnce.getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt()).isEqualTo(300);
  }
}
