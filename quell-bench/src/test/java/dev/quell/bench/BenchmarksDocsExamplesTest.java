package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.failsafe.RetryPolicy;
import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The code block of docs/benchmarks.md, verbatim, run once each on the fail-once work. */
class BenchmarksDocsExamplesTest {

  @Test
  void failOncePoliciesFromTheDocsRetryOnceAndSucceed() throws Exception {
    // --- begin docs/benchmarks.md
    Resilience quellFailOnce = Resilience.DEFAULT
        .withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.of(1.0, 1000));

    Retry resilience4jFailOnce = Retry.of("fail-once", RetryConfig.custom()
        .maxAttempts(3)
        .waitDuration(Duration.ZERO)
        .build());

    FailsafeExecutor<String> failsafeFailOnce = Failsafe.with(RetryPolicy.<String>builder()
        .withMaxRetries(2)     // Failsafe's default delay is already zero; withDelay(Duration.ZERO) is refused
        .build());
    // --- end docs/benchmarks.md

    RetryOverheadBenchmark.Work work = new RetryOverheadBenchmark.Work();
    assertThat(quellFailOnce.execute(work.failOnce)).isEqualTo("ok");
    assertThat(resilience4jFailOnce.executeCallable(work.failOnce)).isEqualTo("ok");
    assertThat(failsafeFailOnce.get(work.failOnceSupplier)).isEqualTo("ok");
    assertThat(work.failed).isFalse();
  }
}
