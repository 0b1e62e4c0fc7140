package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The simulation benchmarks measure what they say: whole runs, and the core's path with every call succeeding. */
class SimulationBenchmarkTest {

  @Test
  void theCoreOnlySplitRunsEveryCallToSuccessAndLeavesNoTimerBehind() {
    SimulationBenchmark bench = new SimulationBenchmark();
    for (String arm : new String[] {"budget off", "budget on"}) {
      SimulationBenchmark.CoreOnly state = new SimulationBenchmark.CoreOnly();
      state.arm = arm;
      state.setUp();
      assertThat(bench.coreAsyncPathOnly(state, new CpuClock())).isEqualTo(SimulationBenchmark.CALLS);
      assertThat(state.clock.pending()).isZero();
      assertThat(state.clock.eventsRun()).isZero();
    }
  }

  @Test
  void aReferenceArmCountsItsAttemptsAndCalls() {
    SimulationBenchmark bench = new SimulationBenchmark();
    SimulationBenchmark.Arm arm = new SimulationBenchmark.Arm();
    arm.arm = "budget on";
    arm.setUp();
    SimulationBenchmark.Simulated simulated = new SimulationBenchmark.Simulated();
    bench.referenceArm(arm, simulated, new CpuClock());
    assertThat(simulated.calls).isBetween(145_000L, 155_000L);
    assertThat(simulated.attempts).isGreaterThanOrEqualTo(simulated.calls);
  }
}
