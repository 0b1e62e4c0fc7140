package dev.quell.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Hedge;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.internal.TelemetryNames;
import dev.quell.test.VirtualTime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What the core's direct observer calls give the listener as it is (no event objects, no bind): the
 * meters of a policy's breaker, limiters and timing from its first call, and its hedges.
 */
class CoreSeamTest {
  private final VirtualTime time = VirtualTime.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @Test
  void aPolicysFirstCallGivesItsBreakerLimiterAndTimingTheirMeters() {
    Limiter bulkhead = Limiter.concurrency(4);
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(bulkhead)
        .withMeasuredTiming(MeasuredTiming.multipleOfP95(3))
        .withListener(QuellMicrometer.listener(registry));
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).gauges()).isEmpty();
    inventory.run(() -> "ok");
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).tag(TelemetryNames.TAG_BREAKER, "inventory")
        .tag(TelemetryNames.TAG_STATE, "CLOSED").gauge().value()).isEqualTo(1);
    assertThat(registry.find(TelemetryNames.LIMITER_LIMIT).tag(TelemetryNames.TAG_LIMITER, bulkhead.name()).gauge()
        .value()).isEqualTo(4);
    assertThat(registry.find(TelemetryNames.ATTEMPT_P95).tag(TelemetryNames.TAG_POLICY, "inventory").gauge())
        .isNotNull();
  }

  @Test
  void hedgesAreCountedFromTheCoresDirectCalls() {
    Resilience search = Resilience.DEFAULT.withName("search").withTimeSource(time).withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.of(0.1, 1, time)).withHedge(Hedge.after(Duration.ofMillis(100)))
        .withListener(QuellMicrometer.listener(registry));
    int[] started = new int[1];
    CompletableFuture<String> call = search.executeAsync(() -> {
      int attempt = ++started[0];
      CompletableFuture<String> f = new CompletableFuture<>();
      time.schedule(() -> f.complete("attempt " + attempt), Duration.ofMillis(attempt == 1 ? 1000 : 50).toNanos());
      return f;
    });
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(call).isCompletedWithValue("attempt 2");
    for (String what : new String[] {"started", "won", "discarded"}) {
      assertThat(registry.find(TelemetryNames.HEDGES).tag(TelemetryNames.TAG_HEDGE, what).counter().count())
          .as(what).isEqualTo(1);
    }
  }

  @Test
  void theSuccessPathWithABreakerAndALimiterAllocatesNothingMoreWithTheListener() throws Exception {
    Resilience bare = Resilience.DEFAULT.withName("bare").withBreaker(CircuitBreaker.Config.DEFAULT)
        .withLimiter(Limiter.concurrency(100));
    Resilience measured = Resilience.DEFAULT.withName("measured").withBreaker(CircuitBreaker.Config.DEFAULT)
        .withLimiter(Limiter.concurrency(100)).withListener(QuellMicrometer.listener(registry));
    double without = bytesPerCall(bare);
    double with = bytesPerCall(measured);
    System.out.printf("breaker and limiter success path: %.2f bytes/call without listener, %.2f with%n", without, with);
    assertThat(with - without).isLessThan(1.0);
  }

  private static double bytesPerCall(Resilience policy) throws Exception {
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    for (int i = 0; i < 50_000; i++) {
      policy.execute(() -> "ok");
    }
    long before = threads.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < 100_000; i++) {
      policy.execute(() -> "ok");
    }
    return (double) (threads.getCurrentThreadAllocatedBytes() - before) / 100_000;
  }
}
