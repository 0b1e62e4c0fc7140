package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

  @Property
  void everyLatencyIsReportedNoLowerThanItIsAndWithinAnEighthAbove(@ForAll @LongRange(min = 1024, max = 1L << 39) long nanos) {
    long bound = LatencyHistogram.upperBound(LatencyHistogram.bucket(nanos));
    assertThat(bound).isGreaterThanOrEqualTo(nanos);
    assertThat((double) bound).isLessThanOrEqualTo(nanos * 1.125 + 1);
  }

  @Test
  void bucketsGrowWithTheValueAndCoverTheWholeRange() {
    int last = -1;
    for (long v = 0; v < (1L << 41); v = v * 3 / 2 + 1) {
      int b = LatencyHistogram.bucket(v);
      assertThat(b).isBetween(0, LatencyHistogram.BUCKETS - 1).isGreaterThanOrEqualTo(last);
      last = b;
    }
    assertThat(LatencyHistogram.bucket(Long.MAX_VALUE)).isEqualTo(LatencyHistogram.BUCKETS - 1);
  }

  @Test
  void quantilesOfTheWindowOnly() {
    ManualClock clock = new ManualClock();
    LatencyHistogram h = new LatencyHistogram(clock, Duration.ofSeconds(30).toNanos());
    for (int i = 0; i < 95; i++) {
      h.record(Duration.ofMillis(10).toNanos(), clock.nanoTime());
    }
    for (int i = 0; i < 5; i++) {
      h.record(Duration.ofMillis(500).toNanos(), clock.nanoTime());
    }
    assertThat(h.quantileNow(0.95)).isBetween(Duration.ofMillis(10).toNanos(), Duration.ofMillis(12).toNanos());
    assertThat(h.quantileNow(0.99)).isBetween(Duration.ofMillis(500).toNanos(), Duration.ofMillis(563).toNanos());
    clock.advance(Duration.ofSeconds(31));
    assertThat(h.quantileNow(0.95)).as("everything aged out").isZero();
    h.record(Duration.ofMillis(3).toNanos(), clock.nanoTime());
    assertThat(h.samples(clock.nanoTime())).isEqualTo(1);
  }

  @Test
  void manyThreadsRecordEverySample() throws Exception {
    ManualClock clock = new ManualClock();
    LatencyHistogram h = new LatencyHistogram(clock, Duration.ofSeconds(30).toNanos());
    int threads = 16;
    int each = 20_000;
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      long latency = Duration.ofMillis(t + 1).toNanos();
      Thread th = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
        for (int i = 0; i < each; i++) {
          h.record(latency, clock.nanoTime());
        }
      });
      th.start();
      all.add(th);
    }
    go.countDown();
    for (Thread th : all) {
      th.join();
    }
    clock.advance(Duration.ofSeconds(2)); // past the cache
    assertThat(h.samples(clock.nanoTime())).isEqualTo((long) threads * each);
  }
}
