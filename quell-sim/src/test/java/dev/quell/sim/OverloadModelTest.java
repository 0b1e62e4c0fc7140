package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** SPEC §9: what the dependency does past its capacity is a model choice, and each one behaves as named. */
class OverloadModelTest {
  private static final Resilience ONE_ATTEMPT = Resilience.NONE;
  /** 100 ms a request, 4 at once: 40 a second at most. */
  private static final Dependency SLOW = Dependency.latency(Duration.ofMillis(100), Duration.ofMillis(100)).capacity(4);

  private static SimulationReport overloaded(Overload model) {
    return Simulate.policy(ONE_ATTEMPT)
        .against(SLOW.overload(model))
        .under(Load.perSecond(80))
        .lasting(Duration.ofSeconds(30))
        .run(1);
  }

  @Test
  void anUnboundedQueueRefusesNothingAndItsLineGrowsWithoutEnd() {
    SimulationReport r = overloaded(Overload.unboundedQueue());
    NodeReport node = r.node("dependency");
    assertThat(node.refused()).isZero();
    // twice what it can serve for 30 s: about 40 a second pile up, about 1,200 at the end
    assertThat(node.peakQueue()).isBetween(1_000.0, 1_400.0);
    assertThat(r.latency().max()).isGreaterThan(Duration.ofSeconds(10));
  }

  @Test
  void aBoundedQueueRefusesWhatDoesNotFitAndKeepsTheWaitShort() {
    SimulationReport r = overloaded(Overload.boundedQueue(8));
    NodeReport node = r.node("dependency");
    assertThat(node.peakQueue()).isEqualTo(8);
    assertThat(node.refused()).isPositive();
    // at most 8 ahead in line and 4 served at a time: no wait beyond two more services
    assertThat(r.latency().max()).isLessThanOrEqualTo(Duration.ofMillis(301));
    assertThat(r.availability()).isBetween(0.45, 0.55); // it serves 40 of the 80 a second
  }

  @Test
  void aConcurrencyLimitAtTheCapacityAdmitsWhatItCanServeAndQueuesNothing() {
    SimulationReport r = overloaded(Overload.concurrencyLimit(4));
    NodeReport node = r.node("dependency");
    assertThat(node.peakQueue()).isZero();
    assertThat(node.peakOccupancy()).isEqualTo(4);
    assertThat(r.latency().max()).isEqualTo(Duration.ofMillis(100));
    assertThat(node.refused()).isPositive();
  }

  @Test
  void aConcurrencyLimitBelowTheCapacityCapsTheWorkInService() {
    SimulationReport r = overloaded(Overload.concurrencyLimit(2));
    assertThat(r.node("dependency").peakOccupancy()).isEqualTo(2);
    assertThat(r.availability()).isBetween(0.2, 0.3); // 20 a second of 80
  }

  @Test
  void aConcurrencyLimitAboveTheCapacityLetsTheRestWait() {
    SimulationReport r = overloaded(Overload.concurrencyLimit(10));
    NodeReport node = r.node("dependency");
    assertThat(node.peakOccupancy()).isEqualTo(4);
    assertThat(node.peakQueue()).isEqualTo(6);
  }

  @Test
  void peersTakeTheirShareOfTheBound() {
    SimulationReport r = Simulate.policy(ONE_ATTEMPT)
        .against(SLOW.capacity(40).overload(Overload.boundedQueue(80)))
        .under(Load.perSecond(80).peers(9))
        .lasting(Duration.ofSeconds(10))
        .run(1);
    // this pod gets 4 slots and 8 places in line; the dependency sees ten times that
    assertThat(r.node("dependency").peakQueue()).isEqualTo(80);
    assertThat(r.node("dependency").peakOccupancy()).isEqualTo(40);
  }

  @Test
  void aCongestionCollapseHoldsOnlyTheAttemptsWhoseCallersStillWait() {
    // callers give up after 100 ms and retry into a line that grows by 40 a second for ten minutes;
    // the line is long, but the run must still repeat exactly and account for every call
    Simulation collapse = Simulate.policy(Resilience.DEFAULT.withAttempts(3).withBudget(RetryBudget.NONE)
            .withAttemptTimeout(Duration.ofMillis(100)).withDeadline(Duration.ofSeconds(1)))
        .against(SLOW)
        .under(Load.perSecond(80))
        .lasting(Duration.ofMinutes(10));
    SimulationReport r = collapse.run(3);
    assertThat(r.node("dependency").peakQueue()).isGreaterThan(20_000);
    assertThat(r.stopReasons().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(r.calls());
    assertThat(collapse.run(3).toJson()).isEqualTo(r.toJson());
  }

  @Test
  void theModelsCheckTheirBounds() {
    assertThatThrownBy(() -> Overload.boundedQueue(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("boundedQueue").hasMessageContaining("-1");
    assertThatThrownBy(() -> Overload.concurrencyLimit(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("concurrencyLimit").hasMessageContaining("0");
    assertThat(SLOW.overload(Overload.boundedQueue(3)).toString()).contains("bounded queue of 3");
    assertThat(SLOW.overload(Overload.boundedQueue(3))).isEqualTo(SLOW.overload(Overload.boundedQueue(3)))
        .isNotEqualTo(SLOW.overload(Overload.concurrencyLimit(3)));
  }
}
