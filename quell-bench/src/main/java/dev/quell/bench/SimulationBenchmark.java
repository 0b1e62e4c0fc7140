package dev.quell.bench;

import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.sim.Scenario;
import dev.quell.sim.Simulation;
import dev.quell.sim.SimulationReport;
import dev.quell.sim.internal.SimClock;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
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
 * <p>{@code coreAsyncPathOnly} splits the cost: it drives only Quell's own asynchronous path
 * ({@link Resilience#runAsync}) on the simulation's clock, for a call of the reference policy whose
 * first attempt is answered at once (the attempt timeout armed and cancelled, the budget deposited),
 * with no dependency, load or bookkeeping of the simulator. Its calls per second against
 * {@code referenceArm}'s attempts per second show how much of a simulated attempt is the core.
 *
 * <pre>
 * java -jar quell-bench/target/benchmarks.jar SimulationBenchmark -f 1 -wi 2 -w 2s -i 3 -r 2s
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

  /** The core's asynchronous path alone, on the simulation's clock. */
  @State(Scope.Thread)
  public static class CoreOnly {
    /** "budget off" or "budget on", as in the reference scenario's arms. */
    @Param({"budget off", "budget on"})
    public String arm;

    SimClock clock;
    Resilience policy;
    final CompletableFuture<Object> answered = CompletableFuture.completedFuture("ok");

    /** A fresh clock and policy each iteration, made on the benchmark's thread (the clock's owner). */
    @Setup(Level.Iteration)
    public void setUp() {
      clock = new SimClock(new SplittableRandom(1));
      policy = Scenario.referencePolicy(arm.equals("budget on") ? RetryBudget.AUTOMATIC : RetryBudget.NONE)
          .withTimeSource(clock);
    }
  }

  /** Calls per invocation of {@link #coreAsyncPathOnly}. */
  static final int CALLS = 1000;

  /**
   * A thousand calls through {@code runAsync} on the simulation's clock, each answered at once;
   * JMH reports calls per second. Returns how many succeeded (all of them).
   */
  @Benchmark
  @OperationsPerInvocation(CALLS)
  public int coreAsyncPathOnly(CoreOnly state, CpuClock cpu) {
    int succeeded = 0;
    for (int i = 0; i < CALLS; i++) {
      CompletableFuture<Outcome<Object>> outcome = state.policy.runAsync(attempt -> state.answered);
      if (outcome.getNow(null).isSuccess()) {
        succeeded++;
      }
    }
    state.clock.run(Long.MAX_VALUE, () -> false); // nothing is left to run: the timeouts were cancelled
    return succeeded;
  }

  /** Runs one arm of the reference scenario with a fresh seed. */
  @Benchmark
  public SimulationReport referenceArm(Arm arm, Simulated simulated, CpuClock cpu) {
    SimulationReport report = arm.simulation.run(++arm.seed);
    simulated.attempts += report.attempts();
    simulated.calls += report.calls();
    return report;
  }
}
