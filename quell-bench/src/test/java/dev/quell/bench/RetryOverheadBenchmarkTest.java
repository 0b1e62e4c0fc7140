package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.RetryBudget;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each benchmark method, called a few times by hand, returns the work's value: a benchmark that
 * measures a failure (a refused retry, a misconfigured policy) fails the build instead of
 * producing a fast, wrong number. Runs in milliseconds; the benchmarks themselves run only from
 * {@code benchmarks.jar}.
 */
class RetryOverheadBenchmarkTest {
  private final CpuClock cpu = new CpuClock();
  private final RetryOverheadBenchmark benchmark = new RetryOverheadBenchmark();
  private RetryOverheadBenchmark.Policies policies;
  private RetryOverheadBenchmark.Work work;

  @BeforeEach
  void setUp() {
    policies = new RetryOverheadBenchmark.Policies();
    work = new RetryOverheadBenchmark.Work();
  }

  @Test
  void successPathReturnsTheValueInEveryLibrary() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(benchmark.successDirect(work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successQuell(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successResilience4j(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successFailsafe(policies, work, cpu)).isEqualTo("ok");
    }
  }

  @Test
  void clockReadIsMonotonic() {
    long first = benchmark.clockRead(cpu);
    assertThat(benchmark.clockRead(cpu)).isGreaterThanOrEqualTo(first);
  }

  @Test
  void failOncePathRetriesOnceAndReturnsTheValueInEveryLibrary() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(benchmark.failOnceDirect(work, cpu)).isEqualTo("ok");
      assertThat(work.failed).as("the retry succeeded and reset the flag").isFalse();
      assertThat(benchmark.failOnceQuell(policies, work, cpu)).isEqualTo("ok");
      assertThat(work.failed).isFalse();
      assertThat(benchmark.failOnceResilience4j(policies, work, cpu)).isEqualTo("ok");
      assertThat(work.failed).isFalse();
      assertThat(benchmark.failOnceFailsafe(policies, work, cpu)).isEqualTo("ok");
      assertThat(work.failed).isFalse();
    }
  }

  @Test
  void failOnceBudgetFundsOneRetryPerSuccessWithoutDraining() throws Exception {
    double capacity = policies.quellFailOnce.budget().capacity();
    for (int i = 0; i < 1_000; i++) {
      assertThat(benchmark.failOnceQuell(policies, work, cpu)).isEqualTo("ok");
    }
    // each retry spent one token and each success deposited one back (fraction 1.0)
    assertThat(policies.quellFailOnce.budget().tokens()).isGreaterThanOrEqualTo(capacity - 1);
  }

  @Test
  void failOncePoliciesDoNotWaitBetweenAttempts() {
    assertThat(policies.failsafeFailOncePolicy.getConfig().getDelay()).isEqualTo(Duration.ZERO);
    assertThat(policies.resilience4jFailOnce.getRetryConfig().getIntervalBiFunction().apply(1, null)).isZero();
    assertThat(policies.quellFailOnce.backoff()).isSameAs(Backoff.NONE);
  }

  @Test
  void quellDefaultHasBudgetDeadlineAndAttemptTimeoutOn() {
    assertThat(policies.quell.budget()).isNotSameAs(RetryBudget.NONE);
    assertThat(policies.quell.attemptTimeout()).isPresent();
    assertThat(policies.quell.deadline()).isPresent();
  }
}
