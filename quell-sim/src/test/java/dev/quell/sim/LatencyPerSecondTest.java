package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.RetryBudget;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 23: each second's call p99, for the chart's latency panel and the CSV: counted by the second
 * the call ended in, as a dashboard's latency panel counts it, and NaN for a second in which no call
 * ended.
 */
class LatencyPerSecondTest {

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v[v.length / 2];
  }

  @Test
  void theBrownoutShowsInEachSecondsP99() {
    SimulationReport r = Simulate.policy(Scenario.referencePolicy(RetryBudget.NONE))
        .against(Scenario.referenceDependency())
        .under(Load.perSecond(500))
        .lasting(Duration.ofMinutes(5))
        .run(1);
    List<Second> series = r.series();
    double[] healthy = series.subList(10, 110).stream().mapToDouble(Second::latencyP99Millis).toArray();
    double[] brownout = series.subList(130, 170).stream().mapToDouble(Second::latencyP99Millis).toArray();

    // healthy: about the dependency's p99 of 100 ms; eight times slower: past the 160 ms timeout, retried
    assertThat(median(healthy)).isBetween(80.0, 150.0);
    assertThat(median(brownout)).isGreaterThan(4 * median(healthy));
    // the run's p99 lies between the two
    double overall = r.latency().p99().toNanos() / 1e6;
    assertThat(overall).isBetween(median(healthy), Arrays.stream(brownout).max().orElseThrow());
  }

  @Test
  void aSecondInWhichNoCallEndedHasNoP99() {
    SimulationReport r = Simulate.policy(Scenario.referencePolicy(RetryBudget.AUTOMATIC))
        .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)))
        .under(Load.perSecond(0.5))
        .lasting(Duration.ofMinutes(1))
        .run(1);
    long quiet = r.series().stream().filter(s -> Double.isNaN(s.latencyP99Millis())).count();
    long busy = r.series().stream().filter(s -> !Double.isNaN(s.latencyP99Millis())).count();
    assertThat(quiet).isPositive();
    assertThat(busy).isPositive();
    for (Second s : r.series()) {
      if (!Double.isNaN(s.latencyP99Millis())) {
        assertThat(s.latencyP99Millis()).isPositive().isLessThan(1000);
      }
    }
  }
}
