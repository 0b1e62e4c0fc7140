package dev.quell.bench;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.io.IOException;
import java.text.ParseException;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.jspecify.annotations.Nullable;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What Quell's Flight Recorder events cost (docs/jfr.md): {@link Resilience#DEFAULT}'s success path
 * and a call that fails once then succeeds, with {@code recording} =
 * <ul>
 *   <li>{@code none}: no recording;
 *   <li>{@code jdk}: a recording with the JDK's {@code default} settings, which leave Quell's events
 *       off, as a service that always records would run;
 *   <li>{@code quell}: a recording with Quell's events on, as {@code quell.jfc} turns them on.
 * </ul>
 * Only public API and {@code jdk.jfr} are used, so the same class measures a core without the
 * events: build it against that core to compare.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FlightRecorderBenchmark {
  static final String[] QUELL_EVENTS = {"dev.quell.Attempt", "dev.quell.Call", "dev.quell.BudgetRefusal",
      "dev.quell.LimiterRefusal", "dev.quell.BreakerTransition"};

  /** The recording running while the benchmark runs, and the policies. */
  @State(Scope.Benchmark)
  public static class Recorder {
    @Param({"none", "jdk", "quell"})
    String recording = "none";

    @Nullable Recording running;

    final Resilience success = Resilience.DEFAULT;
    /** Zero backoff and a budget that funds one retry per success, as in {@link RetryOverheadBenchmark}. */
    final Resilience failOnce = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.of(1.0, 1000));

    @Setup(Level.Trial)
    public void start() throws IOException, ParseException {
      Recording r;
      switch (recording) {
        case "none":
          return;
        case "jdk":
          r = new Recording(Configuration.getConfiguration("default"));
          break;
        case "quell":
          r = new Recording();
          for (String name : QUELL_EVENTS) {
            r.enable(name);
          }
          break;
        default:
          throw new IllegalArgumentException("recording must be none, jdk or quell, was " + recording);
      }
      r.setToDisk(false); // a ring in memory: the benchmark measures the events, not the disk
      r.start();
      running = r;
    }

    @TearDown(Level.Trial)
    public void stop() {
      Recording r = running;
      if (r != null) {
        r.close();
      }
    }
  }

  /** The work, one per benchmark thread. */
  @State(Scope.Thread)
  public static class Work {
    static final IOException FAILURE = new RetryOverheadBenchmark.StacklessIOException("first attempt fails");
    String value = "ok";
    boolean failed;
    final Callable<String> succeed = () -> value;
    final Callable<String> failOnce = this::failOnce;

    String failOnce() throws IOException {
      if (!failed) {
        failed = true;
        throw FAILURE;
      }
      failed = false;
      return value;
    }
  }

  @Benchmark
  public @Nullable String success(Recorder recorder, Work work) throws Exception {
    return recorder.success.execute(work.succeed);
  }

  @Benchmark
  public @Nullable String failOnce(Recorder recorder, Work work) throws Exception {
    return recorder.failOnce.execute(work.failOnce);
  }
}
