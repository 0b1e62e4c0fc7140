package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

  @Test
  void quantilesAreWithinOnePercentOfTheExactValuesAndTheMaximumIsExact() {
    SplittableRandom random = new SplittableRandom(3);
    int n = 100_000;
    long[] values = new long[n];
    LatencyHistogram h = new LatencyHistogram();
    for (int i = 0; i < n; i++) {
      values[i] = (long) Math.exp(16 + 1.5 * random.nextGaussian()); // roughly 0.1 ms to a minute
      h.record(values[i]);
    }
    Arrays.sort(values);
    Quantiles q = h.quantiles();
    assertClose(q.p50(), values[n / 2 - 1]);
    assertClose(q.p90(), values[(int) (0.9 * n) - 1]);
    assertClose(q.p99(), values[(int) (0.99 * n) - 1]);
    assertClose(q.p999(), values[(int) (0.999 * n) - 1]);
    assertThat(q.max().toNanos()).isEqualTo(values[n - 1]);
  }

  @Test
  void noCallsGiveZeros() {
    assertThat(new LatencyHistogram().quantiles()).isEqualTo(Quantiles.NONE);
  }

  private static void assertClose(Duration actual, long exact) {
    // a bucket is 1/64 of its power of two wide at most (plus the microsecond resolution)
    assertThat((double) actual.toNanos()).isCloseTo(exact, org.assertj.core.data.Offset.offset(exact * 0.008 + 1000));
  }
}
