package dev.quell.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * How much of each measured iteration the benchmark thread actually ran: its CPU time
 * ({@code cpuMicros}) beside the wall-clock time ({@code wallMicros}), both summed over iterations
 * (and threads) by JMH. On a shared machine a benchmark thread is often descheduled, and JMH's time
 * per operation, which is wall-clock time, counts the time it waited; {@code score × cpuMicros /
 * wallMicros} is the time per operation the thread spent running. Both are read once per
 * iteration, outside the measured loop, so a benchmark that takes this state costs nothing more
 * per operation.
 *
 * <p>What CPU time leaves out: the work of other threads, notably the garbage collector's (a
 * contender that allocates pays for its garbage partly on GC threads), and the cost of caches
 * another process cooled. Read it as a lower bound for allocating contenders.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class CpuClock {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** CPU time of the benchmark thread during the iteration, in microseconds. */
  public long cpuMicros;

  /** Wall-clock time of the same iteration, in microseconds. */
  public long wallMicros;

  private long cpuStart;
  private long wallStart;

  /** Starts both clocks. */
  @Setup(Level.Iteration)
  public void start() {
    cpuMicros = 0;
    wallMicros = 0;
    wallStart = System.nanoTime();
    cpuStart = THREADS.getCurrentThreadCpuTime();
  }

  /** Reads both clocks. */
  @TearDown(Level.Iteration)
  public void stop() {
    long cpu = THREADS.getCurrentThreadCpuTime() - cpuStart;
    long wall = System.nanoTime() - wallStart;
    cpuMicros = cpu / 1000;
    wallMicros = wall / 1000;
  }
}
