package dev.quell.bench;

import dev.quell.RetryBudget;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One retry budget shared by two threads, against the two counters a Java programmer would reach
 * for instead: a {@link LongAdder} (striped, the cheapest contended counter, but it cannot check a
 * balance and charge it in one step, so it cannot refuse) and an {@link AtomicLong} (one word, like
 * the budget's balance).
 *
 * <p>Three shapes, every benchmark run by two threads on one shared object:
 * <ul>
 *   <li>{@code deposit*} ({@code @Threads(2)}): both threads record successes. For the budget that
 *       is {@link RetryBudget#deposit()} on a full bucket, the healthy case on every call's success
 *       path; for the counters an increment, and for the {@code AtomicLong} also the capped
 *       deposit of the bounded baseline below on a full balance (a read, no write).
 *   <li>{@code spendAndDeposit*} ({@code @Threads(2)}): both threads do what a fail-once call does to
 *       the budget: spend a token for the retry, deposit one when it succeeds (fraction 1.0, so the
 *       bucket stays near full). The {@code AtomicLong} baseline is a bounded bucket without a
 *       clock: a compare-and-set that refuses at zero, then an add capped at the capacity.
 *   <li>{@code mixed} ({@code @Group}, one thread each): one thread only deposits, as a healthy
 *       caller does, while the other only spends, as a caller retrying every call does, on the
 *       default budget ({@code RetryBudget.of()}: 10% per success, 3 a second, capacity 30). The
 *       counters {@code funded} and {@code refused} show how many spends the budget granted.
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BudgetContentionBenchmark {

  /** The bounded baseline's capacity, in tokens: the same as {@code RetryBudget.of(1.0, 1000)}. */
  static final long CAPACITY = 10_000;

  /** One budget and one of each counter, shared by the benchmark's threads. */
  @State(Scope.Benchmark)
  public static class Shared {
    /** The fail-once budget of {@link RetryOverheadBenchmark}: fraction 1.0, floor 1000 a second, 10 000 tokens. */
    RetryBudget fundsEveryRetry;
    /** A full bucket: the healthy case. */
    RetryBudget healthy;
    final LongAdder adder = new LongAdder();
    final AtomicLong atomic = new AtomicLong(CAPACITY);
    /** A full bounded balance, for the capped deposit. */
    final AtomicLong full = new AtomicLong(CAPACITY);

    /** Fresh, full budgets for every iteration. */
    @Setup(Level.Iteration)
    public void setUp() {
      fundsEveryRetry = RetryBudget.of(1.0, 1000);
      healthy = RetryBudget.of();
      atomic.set(CAPACITY);
      full.set(CAPACITY);
    }
  }

  /** The default budget for the mixed group, one per group. */
  @State(Scope.Group)
  public static class Mixed {
    RetryBudget budget;
    final LongAdder adder = new LongAdder();
    final AtomicLong atomic = new AtomicLong(CAPACITY);

    /** A fresh, full default budget for every iteration. */
    @Setup(Level.Iteration)
    public void setUp() {
      budget = RetryBudget.of();
      atomic.set(CAPACITY);
    }
  }

  /** How many of the spender's requests were funded and refused. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Spends {
    public long funded;
    public long refused;

    /** Zeroes the counts at each iteration, so JMH sums one iteration's events. */
    @Setup(Level.Iteration)
    public void clear() {
      funded = 0;
      refused = 0;
    }

    boolean count(boolean granted) {
      if (granted) {
        funded++;
      } else {
        refused++;
      }
      return granted;
    }
  }

  // ------------------------------------------------------------------ deposits from two threads

  @Benchmark
  @Threads(2)
  public void depositBudget(Shared shared, CpuClock cpu) {
    shared.healthy.deposit();
  }

  @Benchmark
  @Threads(2)
  public void depositLongAdder(Shared shared, CpuClock cpu) {
    shared.adder.increment();
  }

  @Benchmark
  @Threads(2)
  public long depositAtomicLong(Shared shared, CpuClock cpu) {
    return shared.atomic.incrementAndGet();
  }

  /** The capped deposit on a full balance: a read and no write, the budget's own trick. */
  @Benchmark
  @Threads(2)
  public void depositAtomicLongCapped(Shared shared, CpuClock cpu) {
    deposit(shared.full);
  }

  // ------------------------------------------------------------------ a retry's spend and its success's deposit, two threads

  @Benchmark
  @Threads(2)
  public boolean spendAndDepositBudget(Shared shared, CpuClock cpu) {
    boolean funded = shared.fundsEveryRetry.trySpend();
    shared.fundsEveryRetry.deposit();
    return funded;
  }

  @Benchmark
  @Threads(2)
  public void spendAndDepositLongAdder(Shared shared, CpuClock cpu) {
    shared.adder.decrement();
    shared.adder.increment();
  }

  @Benchmark
  @Threads(2)
  public boolean spendAndDepositAtomicLong(Shared shared, CpuClock cpu) {
    boolean funded = spend(shared.atomic);
    deposit(shared.atomic);
    return funded;
  }

  // ------------------------------------------------------------------ one thread deposits, the other spends

  @Benchmark
  @Group("mixedBudget")
  @GroupThreads(1)
  public void mixedBudgetDeposit(Mixed mixed, CpuClock cpu) {
    mixed.budget.deposit();
  }

  @Benchmark
  @Group("mixedBudget")
  @GroupThreads(1)
  public boolean mixedBudgetSpend(Mixed mixed, Spends spends, CpuClock cpu) {
    return spends.count(mixed.budget.trySpend());
  }

  @Benchmark
  @Group("mixedLongAdder")
  @GroupThreads(1)
  public void mixedLongAdderDeposit(Mixed mixed, CpuClock cpu) {
    mixed.adder.increment();
  }

  @Benchmark
  @Group("mixedLongAdder")
  @GroupThreads(1)
  public void mixedLongAdderSpend(Mixed mixed, CpuClock cpu) {
    mixed.adder.decrement();
  }

  @Benchmark
  @Group("mixedAtomicLong")
  @GroupThreads(1)
  public void mixedAtomicLongDeposit(Mixed mixed, CpuClock cpu) {
    deposit(mixed.atomic);
  }

  @Benchmark
  @Group("mixedAtomicLong")
  @GroupThreads(1)
  public boolean mixedAtomicLongSpend(Mixed mixed, Spends spends, CpuClock cpu) {
    return spends.count(spend(mixed.atomic));
  }

  // ------------------------------------------------------------------ the bounded AtomicLong baseline

  /** Takes one token if there is one, in one compare-and-set: what a budget without a clock would do. */
  static boolean spend(AtomicLong balance) {
    while (true) {
      long current = balance.get();
      if (current < 1) {
        return false;
      }
      if (balance.compareAndSet(current, current - 1)) {
        return true;
      }
    }
  }

  /** Adds one token, never above {@link #CAPACITY}; a full balance is left alone without a write. */
  static void deposit(AtomicLong balance) {
    while (true) {
      long current = balance.get();
      if (current >= CAPACITY || balance.compareAndSet(current, current + 1)) {
        return;
      }
    }
  }
}
