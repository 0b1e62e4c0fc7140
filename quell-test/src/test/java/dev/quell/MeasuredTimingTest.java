package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.test.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Measured timing on a virtual clock: the attempt ceiling follows the live p95 within its window. */
class MeasuredTimingTest {
  private final VirtualTime time = VirtualTime.create();

  private final Resilience policy = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withTimeSource(time)
      .withAttemptTimeout(Duration.ofSeconds(10))
      .withMeasuredTiming(MeasuredTiming.multipleOfP95(3).withFloor(Duration.ofMillis(50)).withMinSamples(20));

  /** Calls for {@code span}, one every 50 ms after the last ended, each answering after {@code latency}. */
  private void traffic(Resilience p, Duration latency, Duration span) throws Exception {
    long end = time.nanoTime() + span.toNanos();
    while (time.nanoTime() < end) {
      Outcome<String> o = p.run(() -> {
        time.sleep(latency);
        return "ok";
      });
      assertThat(o.attempts()).isPositive(); // (slow answers may time out: that is the point)
      time.sleep(Duration.ofMillis(50));
    }
  }

  private static long millis(Duration d) {
    return d.toMillis();
  }

  @Test
  void theConfiguredTimeoutAppliesUntilTheWindowHoldsEnoughSamples() throws Exception {
    traffic(policy, Duration.ofMillis(100), Duration.ofMillis(500)); // about 3 samples
    MeasuredTiming.Stats stats = policy.timing().orElseThrow();
    assertThat(stats.isMeasuring()).isFalse();
    assertThat(stats.attemptCeiling()).contains(Duration.ofSeconds(10));
  }

  @Test
  void theCeilingFollowsTheLatencyUpWithinTheWindowButNeverPastTheConfiguredTimeout() throws Exception {
    traffic(policy, Duration.ofMillis(100), Duration.ofSeconds(30));
    MeasuredTiming.Stats before = policy.timing().orElseThrow();
    assertThat(before.isMeasuring()).isTrue();
    assertThat(millis(before.attemptCeiling().orElseThrow())).isBetween(300L, 340L); // 3 × p95 (± a bucket)

    traffic(policy, Duration.ofMillis(200), Duration.ofSeconds(40)); // latency doubles, for more than the window
    assertThat(millis(policy.timing().orElseThrow().attemptCeiling().orElseThrow())).isBetween(600L, 680L);

    // a jump to 5 s: attempts time out at the old ceiling and give no samples until the window has
    // aged out; then the configured 10 s applies again and the 5 s answers come back (and 3 × 5 s
    // would be more than the configured timeout, which stays the limit)
    traffic(policy, Duration.ofSeconds(5), Duration.ofMinutes(3));
    MeasuredTiming.Stats after = policy.timing().orElseThrow();
    assertThat(after.samples()).isPositive();
    assertThat(after.attemptCeiling()).contains(Duration.ofSeconds(10));
  }

  @Test
  void theCeilingTightensWhenLatencyCollapsesButNeverBelowTheFloor() throws Exception {
    traffic(policy, Duration.ofMillis(100), Duration.ofSeconds(30));
    traffic(policy, Duration.ofMillis(1), Duration.ofSeconds(40));
    assertThat(policy.timing().orElseThrow().attemptCeiling()).contains(Duration.ofMillis(50));
  }

  @Test
  void aHungAttemptIsCutOffAtTheMeasuredCeilingNotTheConfiguredTimeout() throws Exception {
    traffic(policy, Duration.ofMillis(100), Duration.ofSeconds(30));
    long start = time.nanoTime();
    Outcome<String> o = policy.withAttempts(1).run(() -> {
      time.sleep(Duration.ofMinutes(1));
      return "never";
    });
    // withAttempts makes a new policy instance, with its own (empty) histogram: configured values
    assertThat(Duration.ofNanos(time.nanoTime() - start)).isEqualTo(Duration.ofSeconds(10));

    long start2 = time.nanoTime();
    Outcome<String> measured = policy.run(() -> {
      time.sleep(Duration.ofMinutes(1));
      return "never";
    });
    assertThat(measured.failure()).isPresent();
    assertThat(Duration.ofNanos(time.nanoTime() - start2).toMillis()).as("three attempts at ~312 ms and two backoffs")
        .isLessThan(2_000);
    assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
  }

  @Test
  void asyncCallsAreMeasuredAndCeiledToo() throws Exception {
    for (int i = 0; i < 40; i++) {
      CompletableFuture<String> f = policy.executeAsync(() -> {
        CompletableFuture<String> answer = new CompletableFuture<>();
        time.schedule(() -> answer.complete("ok"), Duration.ofMillis(100).toNanos());
        return answer;
      });
      time.runUntilIdle(Duration.ofSeconds(1));
      assertThat(f).isCompleted();
    }
    assertThat(millis(policy.timing().orElseThrow().attemptCeiling().orElseThrow())).isBetween(300L, 340L);
  }

  @Test
  void aMeasuredHedgeDelayFollowsTheLiveQuantile() throws Exception {
    Resilience hedged = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withTimeSource(time)
        .withHedge(Hedge.maxExtraLoad(0.05).withFloor(Duration.ofMillis(5)));
    assertThat(hedged.timing().orElseThrow().hedgeDelay()).as("the attempt timeout until measured")
        .contains(Duration.ofSeconds(10));
    traffic(hedged, Duration.ofMillis(80), Duration.ofSeconds(30));
    assertThat(millis(hedged.timing().orElseThrow().hedgeDelay().orElseThrow())).isBetween(80L, 90L);
  }

  @Test
  void badSettingsAreNamed() {
    assertThatThrownBy(() -> MeasuredTiming.multipleOfP95(0.5)).hasMessageContaining("measured timing multiple was 0.5");
    assertThatThrownBy(() -> MeasuredTiming.multipleOfP95(Double.NaN)).hasMessageContaining("NaN");
    assertThatThrownBy(() -> MeasuredTiming.multipleOfP95(2).withFloor(Duration.ZERO))
        .hasMessageContaining("measured timing floor");
    assertThatThrownBy(() -> MeasuredTiming.multipleOfP95(2).withWindow(Duration.ofDays(2)))
        .hasMessageContaining("measured timing window");
    assertThatThrownBy(() -> MeasuredTiming.multipleOfP95(2).withWindow(Duration.ofSeconds(Long.MAX_VALUE)))
        .as("a huge duration is named, not an ArithmeticException").isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("was forever");
    assertThatThrownBy(() -> Hedge.maxExtraLoad(1.5)).hasMessageContaining("hedge maxExtraLoad was 1.5");
    assertThatThrownBy(() -> Resilience.DEFAULT.withAttempts(1).withHedge(Hedge.after(Duration.ZERO)))
        .hasMessageContaining("hedge");
  }
}
