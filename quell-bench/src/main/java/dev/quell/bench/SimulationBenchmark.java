package dev.quell.bench;

import dev.quell.sim.Scenario;
import dev.quell.sim.Simulation;
import dev.quell.sim.SimulationReport;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * How fast the simulator runs: one arm of the reference scenario (five simulated minutes at 500
 * calls a second, the brownout from 2:00 to 3:00) per invocation, with the budget off or on.
 *
 * <p>JMH reports runs per second ({@code referenceArm}) and, through the
 * auxiliary counters, the <b>simulated attempts per second</b> ({@code attempts}) and simulated
 * calls per second ({@code calls}) of wall-clock time, on one thread. Each invocation uses a new
 * seed, so the JIT cannot specialise on one run.
 *
 * <pre>
 * java -jar quell-bench/target/benchmarks.jar SimulationBenchmark
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SimulationBenchmark {

  /** Which arm of the reference scenario. */
  @State(Scope.Benchmark)
  public static class Arm {
    /** "budget off" or "budget on". */
    @Param({"budget off", "budget on"})
    public String arm;

    Simulation simulation;
    long seed;

    /** Picks the arm once. */
    @Setup(Level.Trial)
    public void setUp() {
      simulation = Scenario.reference().arms().stream()
          .filter(a -> a.name().equals(arm))
          .findFirst()
          .orElseThrow()
          .simulation();
    }
  }

  /** Simulated work per run, which JMH divides by the run's time. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Simulated {
    /** Simulated attempts (first attempts and retries) that reached the dependency. */
    public long attempts;
    /** Simulated calls offered. */
    public long calls;
  }

  /** Runs one arm of the reference scenario with a fresh seed. */
  @Benchmark
  public SimulationReport referenceArm(Arm arm, Simulated simulated) {
    SimulationReport report = arm.simulation.run(++arm.seed);
    simulated.attempts += report.attempts();
    simulated.calls += report.calls();
    return report;
  }
}
