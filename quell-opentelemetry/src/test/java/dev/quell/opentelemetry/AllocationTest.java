package dev.quell.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.internal.CallObserver;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * What the listener allocates per call on top of the SDK's own recording: nothing. The SDK's cost is
 * measured the same way, with the same instruments recorded directly.
 */
class AllocationTest {
  private static final int WARMUP = 50_000;
  private static final int CALLS = 100_000;

  private static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }

  private static OpenTelemetry sdk() {
    return OpenTelemetrySdk.builder()
        .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(InMemoryMetricReader.create()).build())
        .build();
  }

  @Test
  void aRetriedCallAllocatesNoMoreThanTheSdkRecordingItDirectly() {
    var observer = (CallObserver) QuellOpenTelemetry.listener(sdk());
    RetryBudget budget = Resilience.DEFAULT.withName("retrying").budget();
    IOException failure = new IOException("flaky");
    long before = 0;
    for (int i = 0; i < WARMUP + CALLS; i++) {
      if (i == WARMUP) {
        before = allocatedBytes();
      }
      observer.attemptStarted("retrying", budget, Criticality.CRITICAL, 1, false);
      observer.attemptEnded("retrying", budget, Criticality.CRITICAL, 1, false, Verdict.TRANSIENT, failure, 1_000_000);
      observer.retrying("retrying", budget, Criticality.CRITICAL, 1, 100_000_000);
      observer.attemptStarted("retrying", budget, Criticality.CRITICAL, 2, false);
      observer.attemptEnded("retrying", budget, Criticality.CRITICAL, 2, false, Verdict.OK, null, 1_000_000);
      observer.callEnded("retrying", budget, Criticality.CRITICAL, StopReason.SUCCEEDED, 2, Verdict.OK, 102_000_000);
    }
    double listener = (double) (allocatedBytes() - before) / CALLS;

    // the same six recordings made straight on the SDK
    var meter = sdk().getMeter("direct");
    LongCounter attempts = meter.counterBuilder("a").build();
    LongCounter calls = meter.counterBuilder("c").build();
    DoubleHistogram attemptDuration = meter.histogramBuilder("ad").build();
    DoubleHistogram callDuration = meter.histogramBuilder("cd").build();
    AttributeKey<String> k = AttributeKey.stringKey("k");
    Attributes first = Attributes.of(k, "first");
    Attributes retry = Attributes.of(k, "retry");
    Attributes ok = Attributes.of(k, "ok");
    Attributes failed = Attributes.of(k, "failed");
    for (int i = 0; i < WARMUP + CALLS; i++) {
      if (i == WARMUP) {
        before = allocatedBytes();
      }
      attempts.add(1, first);
      attemptDuration.record(0.001, failed);
      attempts.add(1, retry);
      attemptDuration.record(0.001, ok);
      calls.add(1, ok);
      callDuration.record(0.102, ok);
    }
    double direct = (double) (allocatedBytes() - before) / CALLS;
    System.out.printf("OpenTelemetry retried call: %.3f bytes/call through the listener, %.3f recorded directly%n",
        listener, direct);
    assertThat(listener - direct).isLessThan(1.0);
  }

  @Test
  void hedgeBreakerAndPolicyCallbacksAllocateNoMoreThanTheSdkCountingTheHedges() {
    // a hedged call's extra callbacks, and the policy instance (already watched) after its end
    var observer = (CallObserver) QuellOpenTelemetry.listener(sdk());
    Resilience policy = Resilience.DEFAULT.withName("hedged")
        .withBreaker(dev.quell.CircuitBreaker.Config.DEFAULT).withLimiter(dev.quell.Limiter.concurrency(10))
        .withHedge(dev.quell.Hedge.maxExtraLoad(0.05));
    RetryBudget budget = policy.budget();
    long before = 0;
    for (int i = 0; i < WARMUP + CALLS; i++) {
      if (i == WARMUP) {
        before = allocatedBytes();
      }
      observer.hedged("hedged", budget, Criticality.CRITICAL, dev.quell.ResilienceEvent.Type.HEDGE_STARTED, 2);
      observer.hedged("hedged", budget, Criticality.CRITICAL, dev.quell.ResilienceEvent.Type.HEDGE_WON, 2);
      observer.hedged("hedged", budget, Criticality.CRITICAL, dev.quell.ResilienceEvent.Type.HEDGE_DISCARDED, 1);
      observer.breakerMoved("hedged", null, dev.quell.CircuitBreaker.State.CLOSED, 2);
      observer.policyCalled(policy);
    }
    double listener = (double) (allocatedBytes() - before) / CALLS;

    LongCounter hedges = sdk().getMeter("direct").counterBuilder("h").build();
    AttributeKey<String> k = AttributeKey.stringKey("k");
    Attributes started = Attributes.of(k, "started");
    Attributes won = Attributes.of(k, "won");
    Attributes discarded = Attributes.of(k, "discarded");
    for (int i = 0; i < WARMUP + CALLS; i++) {
      if (i == WARMUP) {
        before = allocatedBytes();
      }
      hedges.add(1, started);
      hedges.add(1, won);
      hedges.add(1, discarded);
    }
    double direct = (double) (allocatedBytes() - before) / CALLS;
    System.out.printf("OpenTelemetry hedged call: %.3f bytes/call through the listener, %.3f recorded directly%n",
        listener, direct);
    assertThat(listener - direct).isLessThan(1.0);
  }
}
