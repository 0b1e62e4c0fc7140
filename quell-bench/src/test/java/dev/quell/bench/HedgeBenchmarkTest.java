package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.bench.RetryOverheadBenchmark.Work;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The hedge benchmarks return the work's value, with the hedges they say configured and never sent. */
class HedgeBenchmarkTest {
  private final CpuClock cpu = new CpuClock();
  private final HedgeBenchmark benchmark = new HedgeBenchmark();
  private final HedgeBenchmark.Policies policies = new HedgeBenchmark.Policies();
  private final Work work = new Work();

  @AfterEach
  void stopPools() {
    policies.stop();
  }

  @Test
  void everySuccessPathReturnsTheValue() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertThat(benchmark.successDefault(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successHedgeAfter(policies, work, cpu)).isEqualTo("ok");
      assertThat(benchmark.successHedgeMaxExtraLoad(policies, work, cpu)).isEqualTo("ok");
    }
    long first = benchmark.clockRead(cpu);
    assertThat(benchmark.clockRead(cpu)).isGreaterThanOrEqualTo(first);
  }

  @Test
  void theHedgedPoliciesAreTheOnesTheIssueNames() {
    assertThat(policies.unhedged.hedge()).isEmpty();
    // the issue's configurations, with only the executor (used once a hedge is due) swapped for a counting one
    assertThat(policies.hedgedAfter.hedge()).contains(Hedge.after(Duration.ofMillis(50)).withExecutor(policies.afterExecutor));
    assertThat(policies.hedgedMaxExtraLoad.hedge())
        .contains(Hedge.maxExtraLoad(0.05).withExecutor(policies.maxExtraLoadExecutor));
  }

  @Test
  void theMeasuredHedgeRecordsEverySuccessInItsHistogram() throws Exception {
    for (int i = 0; i < 100; i++) {
      benchmark.successHedgeMaxExtraLoad(policies, work, cpu);
    }
    assertThat(policies.hedgedMaxExtraLoad.timing().orElseThrow().samples()).isEqualTo(100);
  }

  @Test
  void aHedgeThatIsSentIsCountedSoTheRunCanShowItMeasuredTheUntriggeredPath() throws Exception {
    // a primary that waits until a hedge has started: the hedge must go through the counting executor
    HedgeBenchmark.CountingExecutor counting = new HedgeBenchmark.CountingExecutor();
    CountDownLatch hedgeStarted = new CountDownLatch(1);
    AtomicInteger invocations = new AtomicInteger();
    Callable<String> slowPrimary = () -> {
      if (invocations.incrementAndGet() == 1) {
        hedgeStarted.await(30, TimeUnit.SECONDS);
        return "primary";
      }
      hedgeStarted.countDown();
      return "hedge";
    };
    try {
      Resilience hedgeAtOnce = Resilience.DEFAULT.withHedge(Hedge.after(Duration.ZERO).withExecutor(counting));
      assertThat(hedgeAtOnce.execute(slowPrimary)).isIn("primary", "hedge");
      assertThat(invocations).hasValue(2);
      assertThat(counting.handed.sum()).isPositive();
    } finally {
      counting.pool.shutdown();
    }
  }
}
