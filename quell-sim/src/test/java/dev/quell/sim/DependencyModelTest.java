package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

import dev.quell.Resilience;
import dev.quell.StopReason;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The dependency model: latency by p50/p99, capacity with queueing, abandoned work, incidents, peers. */
class DependencyModelTest {
  private static final Resilience ONE_ATTEMPT = Resilience.NONE;

  @Test
  void latencyHitsTheGivenMedianAnd99thPercentile() {
    SimulationReport r = Simulate.policy(ONE_ATTEMPT)
        .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)))
        .under(Load.perSecond(2000))
        .lasting(Duration.ofSeconds(60))
        .run(3);
    double p50 = r.latency().p50().toNanos() / 1e6;
    double p99 = r.latency().p99().toNanos() / 1e6;
    assertThat(p50).isCloseTo(20, offset(0.5));
    assertThat(p99).isCloseTo(100, offset(3.0));
    assertThat(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)).meanLatency().toNanos() / 1e6)
        .isCloseTo(25.4, offset(0.1));
  }

  @Test
  void aFullDependencyQueuesAndTheWaitAddsToLatency() {
    // constant 10 ms service, one at a time, 50 arrivals a second: half busy, so some calls wait
    SimulationReport r = Simulate.policy(ONE_ATTEMPT)
        .against(Dependency.latency(Duration.ofMillis(10), Duration.ofMillis(10)).capacity(1))
        .under(Load.perSecond(50))
        .lasting(Duration.ofSeconds(120))
        .run(5);
    NodeReport node = r.node("dependency");
    assertThat(node.meanOccupancy()).isCloseTo(0.5, offset(0.05));
    assertThat(node.peakOccupancy()).isEqualTo(1);
    assertThat(node.peakQueue()).isGreaterThanOrEqualTo(1);
    assertThat(r.latency().p50().toNanos() / 1e6).isGreaterThanOrEqualTo(10);
    assertThat(r.latency().p99().toNanos() / 1e6).isGreaterThan(20);
    assertThat(r.availability()).isEqualTo(1.0);
  }

  @Test
  void workTheCallerAbandonedKeepsOccupyingTheDependencyUntilItFinishes() {
    // every attempt takes 1 s and is abandoned after 100 ms; the dependency still holds each for 1 s
    SimulationReport r = Simulate.policy(Resilience.NONE.withAttemptTimeout(Duration.ofMillis(100)))
        .against(Dependency.latency(Duration.ofSeconds(1), Duration.ofSeconds(1)))
        .under(Load.perSecond(10))
        .lasting(Duration.ofSeconds(120))
        .run(5);
    assertThat(r.stopReasons()).containsOnlyKeys(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(r.latency().max()).isEqualTo(Duration.ofMillis(100));
    assertThat(r.node("dependency").meanOccupancy()).isCloseTo(10, offset(1.0)); // Little's law: 10/s × 1 s
  }

  @Test
  void peersCountTowardOccupancyAndShareTheCapacity() {
    Dependency unlimited = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100));
    SimulationReport alone = Simulate.policy(ONE_ATTEMPT).against(unlimited).under(Load.perSecond(200)).run(9);
    SimulationReport withPeers = Simulate.policy(ONE_ATTEMPT).against(unlimited).under(Load.perSecond(200).peers(4))
        .run(9);
    // the same arrivals and latencies; the dependency sees each attempt five times
    assertThat(withPeers.node("dependency").meanOccupancy())
        .isCloseTo(5 * alone.node("dependency").meanOccupancy(), offset(1e-6));

    // 400 of room shared by 100 pods leaves this pod 4: at 200 calls/s of 25 ms that is too little
    SimulationReport crowded = Simulate.policy(ONE_ATTEMPT).against(unlimited.capacity(400))
        .under(Load.perSecond(200).peers(99)).lasting(Duration.ofSeconds(20)).run(9);
    assertThat(crowded.node("dependency").peakOccupancy()).isEqualTo(400);
    assertThat(crowded.demand()).isCloseTo(200 * 100 * 0.0254 / 400, offset(0.01));
    assertThat(crowded.diagnosis()).isEqualTo(Diagnosis.CAPACITY_PROBLEM);
  }

  @Test
  void aBrownoutMultipliesLatencyInsideItsWindowOnly() {
    SimulationReport r = Simulate.policy(ONE_ATTEMPT)
        .against(Dependency.latency(Duration.ofMillis(10), Duration.ofMillis(10))
            .incident(Incident.brownout(5).between(Duration.ofSeconds(10), Duration.ofSeconds(20))))
        .under(Load.perSecond(100))
        .lasting(Duration.ofSeconds(30))
        .run(1);
    assertThat(r.latency().p50().toNanos() / 1e6).isCloseTo(10, offset(0.1));
    assertThat(r.latency().max().toNanos() / 1e6).isCloseTo(50, offset(0.5));
    assertThat(r.phases()).extracting(Phase::name).containsExactly("before", "during brownout ×5", "after");
  }

  @Test
  void anOutageRefusesEveryAttemptAtOnceWithoutOccupyingCapacity() {
    SimulationReport r = Simulate.policy(ONE_ATTEMPT)
        .against(Dependency.latency(Duration.ofMillis(10), Duration.ofMillis(50)).capacity(10)
            .incident(Incident.outage()))
        .under(Load.perSecond(100))
        .lasting(Duration.ofSeconds(10))
        .run(1);
    NodeReport node = r.node("dependency");
    assertThat(node.refused()).isEqualTo(node.attempts());
    assertThat(node.peakOccupancy()).isZero();
    assertThat(r.availability()).isZero();
    assertThat(r.latency().max()).isEqualTo(Duration.ZERO);
  }

  @Test
  void aFailingIncidentFailsItsShareAfterTheUsualLatency() {
    SimulationReport r = Simulate.policy(ONE_ATTEMPT)
        .against(Dependency.latency(Duration.ofMillis(10), Duration.ofMillis(10)).incident(Incident.failing(0.3)))
        .under(Load.perSecond(500))
        .lasting(Duration.ofSeconds(20))
        .run(1);
    NodeReport node = r.node("dependency");
    assertThat((double) node.failedAttempts() / node.attempts()).isCloseTo(0.3, offset(0.02));
    assertThat(r.availability()).isCloseTo(0.7, offset(0.02));
    assertThat(r.latency().p50().toNanos() / 1e6).isCloseTo(10, offset(0.1));
  }

  @Test
  void aFullQueueRefusesAtOnce() {
    SimulationReport r = Simulate.policy(ONE_ATTEMPT)
        .against(Dependency.latency(Duration.ofMillis(100), Duration.ofMillis(100)).capacity(1).overload(Overload.boundedQueue(2)))
        .under(Load.perSecond(50))
        .lasting(Duration.ofSeconds(10))
        .run(1);
    NodeReport node = r.node("dependency");
    assertThat(node.refused()).isPositive();
    assertThat(node.peakQueue()).isEqualTo(2);
  }

  @Test
  void modelValuesCheckTheirParameters() {
    assertThatThrownBy(() -> Dependency.latency(Duration.ofMillis(100), Duration.ofMillis(20)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("p50");
    assertThatThrownBy(() -> Dependency.latency(Duration.ofMillis(1), Duration.ofMillis(2)).capacity(0))
        .hasMessageContaining("capacity");
    assertThatThrownBy(() -> Incident.brownout(0.5)).hasMessageContaining("at least 1");
    assertThatThrownBy(() -> Incident.failing(1.5)).hasMessageContaining("(0, 1]");
    assertThatThrownBy(() -> Incident.outage().between(Duration.ofSeconds(5), Duration.ofSeconds(5)))
        .hasMessageContaining("from < to");
    assertThatThrownBy(() -> Load.perSecond(0)).hasMessageContaining("above 0");
    assertThatThrownBy(() -> Load.perSecond(1).peers(-1)).hasMessageContaining("peers");
  }

  @Test
  void twoDifferentTargetsMayNotShareAName() {
    Dependency a = Dependency.latency(Duration.ofMillis(1), Duration.ofMillis(2)).named("db");
    Dependency b = Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(9)).named("db");
    Service s = Service.named("api").calls(a, Resilience.NONE).calls(b, Resilience.NONE);
    assertThatThrownBy(() -> Simulate.policy(Resilience.NONE).against(s).run(1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'db'");
  }
}
