package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private final SplittableRandom random = new SplittableRandom(1);

  @Test
  void exponentialWithoutJitterDoublesUpToItsMax() {
    Backoff b = Backoff.exponential().withJitter(Jitter.NONE).withMax(Duration.ofMillis(1000));
    assertThat(b.delay(1, Verdict.TRANSIENT, random)).isEqualTo(Duration.ofMillis(100));
    assertThat(b.delay(2, Verdict.TRANSIENT, random)).isEqualTo(Duration.ofMillis(200));
    assertThat(b.delay(4, Verdict.TRANSIENT, random)).isEqualTo(Duration.ofMillis(800));
    assertThat(b.delay(5, Verdict.TRANSIENT, random)).isEqualTo(Duration.ofMillis(1000));
    assertThat(b.delay(500, Verdict.TRANSIENT, random)).isEqualTo(Duration.ofMillis(1000));
  }

  @Test
  void throttledFailuresStartFromTheThrottledBase() {
    Backoff b = Backoff.exponential().withJitter(Jitter.NONE);
    assertThat(b.delay(1, Verdict.THROTTLED, random)).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.delay(2, Verdict.THROTTLED, random)).isEqualTo(Duration.ofSeconds(2));
  }

  @Property(tries = 300)
  void fullJitterStaysBetweenZeroAndTheComputedDelay(@ForAll @IntRange(min = 1, max = 40) int retry,
      @ForAll @LongRange(min = 1, max = 10_000) long baseMillis, @ForAll long seed) {
    Backoff b = Backoff.exponential(Duration.ofMillis(baseMillis));
    Duration d = b.delay(retry, Verdict.TRANSIENT, new SplittableRandom(seed));
    double ceiling = Math.min(30_000.0, baseMillis * Math.pow(2, retry - 1));
    assertThat(d.toNanos()).isBetween(0L, (long) (ceiling * 1_000_000));
  }

  @Property(tries = 300)
  void equalJitterKeepsAtLeastHalf(@ForAll @IntRange(min = 1, max = 10) int retry, @ForAll long seed) {
    Backoff b = Backoff.exponential().withJitter(Jitter.EQUAL);
    long full = Math.min(30_000_000_000L, (long) (100_000_000L * Math.pow(2, retry - 1)));
    long d = b.delay(retry, Verdict.TRANSIENT, new SplittableRandom(seed)).toNanos();
    assertThat(d).isBetween(full / 2, full);
  }

  @Test
  void constantNoneAndCustom() {
    assertThat(Backoff.constant(Duration.ofMillis(5)).delay(9, Verdict.TRANSIENT, random)).isEqualTo(Duration.ofMillis(5));
    assertThat(Backoff.NONE.delay(1, Verdict.TRANSIENT, random)).isZero();
    Backoff linear = Backoff.of((retry, verdict) -> Duration.ofMillis(10L * retry));
    assertThat(linear.delay(3, Verdict.TRANSIENT, random)).isEqualTo(Duration.ofMillis(30));
  }

  @Test
  void validationReportsEveryBadParameter() {
    ResilienceConfigurationException e = (ResilienceConfigurationException) org.assertj.core.api.Assertions.catchThrowable(
        () -> Backoff.exponential(Duration.ofMillis(-1), Duration.ofSeconds(1), Double.NaN, Duration.ofSeconds(1)));
    assertThat(e.problems()).hasSize(2);
    assertThat(e.problems().get(0)).startsWith("backoff transientBase was PT-0.001S");
    assertThatThrownBy(() -> Backoff.constant(Duration.ofMillis(-3))).hasMessageContaining("backoff delay");
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(10)).withMax(Duration.ofSeconds(1)))
        .hasMessageContaining("backoff max was 1000 ms");
  }
}
