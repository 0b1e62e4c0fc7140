package dev.quell.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;

/**
 * The listener adds no allocation per call: the bytes a call allocates are the same with and without
 * it (measured with the JVM's per-thread allocation counter, averaged over many calls).
 */
class AllocationTest {
  private static final int WARMUP = 50_000;
  private static final int CALLS = 100_000;

  private static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }

  private static double bytesPerCall(Resilience policy, Callable<String> work) throws Exception {
    for (int i = 0; i < WARMUP; i++) {
      policy.execute(work);
    }
    long before = allocatedBytes();
    for (int i = 0; i < CALLS; i++) {
      policy.execute(work);
    }
    return (double) (allocatedBytes() - before) / CALLS;
  }

  @Test
  void successPathOnTheRealClockAllocatesNothingMoreWithTheListener() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Callable<String> ok = () -> "ok";
    Resilience bare = Resilience.DEFAULT.withName("bare");
    Resilience measured = Resilience.DEFAULT.withName("measured").withListener(QuellMicrometer.listener(registry));
    double without = bytesPerCall(bare, ok);
    double with = bytesPerCall(measured, ok);
    System.out.printf("success path: %.2f bytes/call without listener, %.2f with%n", without, with);
    assertThat(with - without).isLessThan(1.0);
  }

  @Test
  void retryPathCallbacksAllocateNothing() {
    // Driven directly, so that what the core allocates around them (and what the JIT happens to
    // scalar-replace there) does not blur the measurement of the binding itself.
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    var observer = (dev.quell.internal.CallObserver) QuellMicrometer.listener(registry);
    dev.quell.RetryBudget budget = Resilience.DEFAULT.withName("retrying").budget();
    IOException failure = new IOException("flaky");
    String policy = "retrying";
    long before = 0;
    for (int i = 0; i < WARMUP + CALLS; i++) {
      if (i == WARMUP) {
        before = allocatedBytes();
      }
      observer.attemptStarted(policy, budget, dev.quell.Criticality.CRITICAL, 1, false);
      observer.attemptEnded(policy, budget, dev.quell.Criticality.CRITICAL, 1, false, dev.quell.Verdict.TRANSIENT,
          failure, 1_000_000);
      observer.retrying(policy, budget, dev.quell.Criticality.CRITICAL, 1, 100_000_000);
      observer.attemptStarted(policy, budget, dev.quell.Criticality.CRITICAL, 2, false);
      observer.attemptEnded(policy, budget, dev.quell.Criticality.CRITICAL, 2, false, dev.quell.Verdict.OK, null,
          1_000_000);
      observer.callEnded(policy, budget, dev.quell.Criticality.CRITICAL, dev.quell.StopReason.SUCCEEDED, 2,
          dev.quell.Verdict.OK, 102_000_000);
    }
    double perCall = (double) (allocatedBytes() - before) / CALLS;
    System.out.printf("retry path callbacks: %.3f bytes/call%n", perCall);
    assertThat(registry.find("quell.attempts").tag("kind", "retry").counter().count()).isEqualTo(WARMUP + CALLS);
    assertThat(perCall).isLessThan(0.1);
  }

  @Test
  void hedgeAndPolicyCallbacksAllocateNothing() {
    // a hedged call as the core reports it: two attempts, the hedge wins, the primary is discarded;
    // then the policy instance, already watched, with its breaker, limiter and measured timing
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    var observer = (dev.quell.internal.CallObserver) QuellMicrometer.listener(registry);
    Resilience policy = Resilience.DEFAULT.withName("hedged")
        .withBreaker(dev.quell.CircuitBreaker.Config.DEFAULT).withLimiter(dev.quell.Limiter.concurrency(10))
        .withHedge(dev.quell.Hedge.maxExtraLoad(0.05));
    dev.quell.RetryBudget budget = policy.budget();
    String name = policy.name();
    dev.quell.Criticality critical = dev.quell.Criticality.CRITICAL;
    long before = 0;
    for (int i = 0; i < WARMUP + CALLS; i++) {
      if (i == WARMUP) {
        before = allocatedBytes();
      }
      observer.attemptStarted(name, budget, critical, 1, false);
      observer.attemptStarted(name, budget, critical, 2, true);
      observer.hedged(name, budget, critical, dev.quell.ResilienceEvent.Type.HEDGE_STARTED, 2);
      observer.attemptEnded(name, budget, critical, 2, true, dev.quell.Verdict.OK, null, 1_000_000);
      observer.hedged(name, budget, critical, dev.quell.ResilienceEvent.Type.HEDGE_WON, 2);
      observer.attemptEnded(name, budget, critical, 1, false, null, null, 2_000_000);
      observer.hedged(name, budget, critical, dev.quell.ResilienceEvent.Type.HEDGE_DISCARDED, 1);
      observer.breakerMoved(name, null, dev.quell.CircuitBreaker.State.CLOSED, 2);
      observer.callEnded(name, budget, critical, dev.quell.StopReason.SUCCEEDED, 2, dev.quell.Verdict.OK, 2_000_000);
      observer.policyCalled(policy);
    }
    double perCall = (double) (allocatedBytes() - before) / CALLS;
    System.out.printf("hedged call and policy callbacks: %.3f bytes/call%n", perCall);
    assertThat(registry.find("quell.hedges").tag("quell.hedge", "won").counter().count()).isEqualTo(WARMUP + CALLS);
    assertThat(registry.find("quell.breaker.state").gauges()).hasSize(4);
    assertThat(perCall).isLessThan(0.1);
  }
}
