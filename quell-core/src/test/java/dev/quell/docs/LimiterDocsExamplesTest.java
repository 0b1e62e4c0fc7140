package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Limiter;
import dev.quell.ResilienceConfigurationException;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Every Java example in docs/limiters.md, and the concurrent budget's in docs/retry-budget.md,
 * compiled and run against the public API only (this package is outside {@code dev.quell}).
 */
class LimiterDocsExamplesTest {

  @Test
  void theAdaptiveThrottleExample() {
    Limiter throttle = Limiter.throttle();                               // K = 2 over two minutes
    Limiter harder = Limiter.throttle(1.1, Duration.ofMinutes(1));       // sheds harder
    assertThat(throttle.toString()).contains("K=2.0, window 120000 ms, p=0.000");
    assertThat(harder.toString()).contains("K=1.1, window 60000 ms");
  }

  @Test
  void kinds() {
    // --- kinds ---
    Limiter perSecond = Limiter.rate(50, 10);                           // 50 a second, bursts of up to 10
    Limiter patient = Limiter.rate(50, 10, Duration.ofMillis(200));     // may wait up to 200 ms for a permit
    Limiter bulkhead = Limiter.concurrency(20);                         // at most 20 attempts in flight
    Limiter queueing = Limiter.concurrency(20, Duration.ofMillis(50));  // ... and a short, fair queue
    Limiter adaptive = Limiter.adaptive();                              // finds the knee, 5 to 1000
    // --- end ---
    assertThat(perSecond.limit()).isEqualTo(10);
    assertThat(perSecond.available()).isEqualTo(10);
    assertThat(patient.limit()).isEqualTo(10);
    assertThat(bulkhead.available()).isEqualTo(20);
    assertThat(queueing.queued()).isZero();
    assertThat(adaptive.limit()).isEqualTo(20);
  }

  @Test
  void adaptiveConfigurations() {
    // --- adaptive ---
    Limiter client = Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT
        .withMinLimit(5)
        .withInitialLimit(10)
        .withMaxLimit(100));
    Limiter server = Limiter.adaptive(Limiter.AdaptiveConfig.gradient());
    // --- end ---
    assertThat(client.limit()).isEqualTo(10);
    assertThat(server.limit()).isEqualTo(20);
    assertThat(server.toString()).contains("GRADIENT");
  }

  @Test
  void watching() {
    Limiter adaptive = Limiter.adaptive();
    // --- watching ---
    int limit = adaptive.limit();        // the current limit
    int busy = adaptive.inFlight();      // attempts admitted and not yet ended
    int free = adaptive.available();     // attempts it would admit right now
    String name = adaptive.name();       // "adaptive-7": a name for the dashboard
    // --- end ---
    assertThat(limit).isEqualTo(20);
    assertThat(busy).isZero();
    assertThat(free).isEqualTo(20);
    assertThat(name).startsWith("adaptive-");
  }

  @Test
  void onAVirtualClock() {
    TimeSource time = new Frozen();
    // --- clock ---
    Limiter limiter = Limiter.rate(10, 5, Duration.ofMillis(500), time);
    // --- end ---
    assertThat(limiter.available()).isEqualTo(5);
  }

  @Test
  void badParameters() {
    assertThatThrownBy(() -> Limiter.rate(0, 10))
        .isInstanceOf(ResilienceConfigurationException.class)
        .hasMessage("rate limiter perSecond was 0.0: must be a finite number greater than 0 and at most 1e9");
  }

  @Test
  void concurrentBudget() {
    // --- concurrent budget ---
    RetryBudget inFlight = RetryBudget.concurrent();              // Envoy's defaults: 20% of calls in flight, at least 3
    RetryBudget stricter = RetryBudget.concurrent(0.1, 1);        // 10% of calls in flight, at least 1
    // --- end ---
    assertThat(inFlight.capacity()).isEqualTo(3.0); // no calls in flight yet: the minimum
    assertThat(stricter.tokens()).isEqualTo(1.0);
    assertThat(inFlight.retryAfter()).contains(Duration.ZERO);
  }

  /** A clock that never moves. */
  private static final class Frozen implements TimeSource {
    private final AtomicLong now = new AtomicLong();

    @Override
    public long nanoTime() {
      return now.get();
    }

    @Override
    public void sleep(long nanos) {
      now.addAndGet(nanos);
    }

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
      throw new UnsupportedOperationException();
    }
  }
}
