package dev.quell.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The budget benchmarks do what they say, including from two threads at once: a healthy budget
 * stays full under deposits, a fail-once budget funds every retry, and the bounded baseline keeps
 * its balance within [0, capacity].
 */
class BudgetContentionBenchmarkTest {
  private final CpuClock cpu = new CpuClock();
  private final BudgetContentionBenchmark benchmark = new BudgetContentionBenchmark();
  private BudgetContentionBenchmark.Shared shared;
  private BudgetContentionBenchmark.Mixed mixed;

  @BeforeEach
  void setUp() {
    shared = new BudgetContentionBenchmark.Shared();
    shared.setUp();
    mixed = new BudgetContentionBenchmark.Mixed();
    mixed.setUp();
  }

  @Test
  void depositsLeaveAHealthyBudgetFullAndCountOnTheCounters() {
    double capacity = shared.healthy.capacity();
    for (int i = 0; i < 100; i++) {
      benchmark.depositBudget(shared, cpu);
      benchmark.depositLongAdder(shared, cpu);
      benchmark.depositAtomicLong(shared, cpu);
      benchmark.depositAtomicLongCapped(shared, cpu);
    }
    assertThat(shared.healthy.tokens()).isEqualTo(capacity);
    assertThat(shared.adder.sum()).isEqualTo(100);
    assertThat(shared.atomic.get()).isEqualTo(BudgetContentionBenchmark.CAPACITY + 100);
    assertThat(shared.full.get()).isEqualTo(BudgetContentionBenchmark.CAPACITY);
  }

  @Test
  void twoThreadsSpendingAndDepositingAreFundedEveryTimeAndLoseNothing() throws Exception {
    int perThread = 50_000;
    CountDownLatch start = new CountDownLatch(1);
    AtomicLong unfunded = new AtomicLong();
    Runnable loop = () -> {
      try {
        start.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      for (int i = 0; i < perThread; i++) {
        if (!benchmark.spendAndDepositBudget(shared, cpu)) {
          unfunded.incrementAndGet();
        }
        if (!benchmark.spendAndDepositAtomicLong(shared, cpu)) {
          unfunded.incrementAndGet();
        }
        benchmark.spendAndDepositLongAdder(shared, cpu);
      }
    };
    Thread a = new Thread(loop);
    Thread b = new Thread(loop);
    a.start();
    b.start();
    start.countDown();
    a.join(TimeUnit.SECONDS.toMillis(60));
    b.join(TimeUnit.SECONDS.toMillis(60));
    assertThat(a.isAlive() || b.isAlive()).isFalse();
    assertThat(unfunded).hasValue(0);
    assertThat(shared.fundsEveryRetry.tokens()).isEqualTo(shared.fundsEveryRetry.capacity());
    assertThat(shared.atomic.get()).isEqualTo(BudgetContentionBenchmark.CAPACITY);
    assertThat(shared.adder.sum()).isZero();
  }

  @Test
  void theMixedGroupFundsSpendsWhileDepositsRefillAndCountsBoth() {
    BudgetContentionBenchmark.Spends spends = new BudgetContentionBenchmark.Spends();
    spends.clear();
    // the default budget holds 30 tokens: 30 spends are funded, the next is refused ...
    for (int i = 0; i < 31; i++) {
      benchmark.mixedBudgetSpend(mixed, spends, cpu);
    }
    assertThat(spends.funded).isEqualTo(30);
    assertThat(spends.refused).isEqualTo(1);
    // ... until ten deposits of a tenth each fund one more
    for (int i = 0; i < 10; i++) {
      benchmark.mixedBudgetDeposit(mixed, cpu);
    }
    assertThat(benchmark.mixedBudgetSpend(mixed, spends, cpu)).isTrue();

    for (int i = 0; i < 10; i++) {
      benchmark.mixedLongAdderDeposit(mixed, cpu);
      benchmark.mixedLongAdderSpend(mixed, cpu);
    }
    assertThat(mixed.adder.sum()).isZero();

    spends.clear();
    for (long i = 0; i < BudgetContentionBenchmark.CAPACITY + 1; i++) {
      benchmark.mixedAtomicLongSpend(mixed, spends, cpu);
    }
    assertThat(spends.funded).isEqualTo(BudgetContentionBenchmark.CAPACITY);
    assertThat(spends.refused).isEqualTo(1);
    benchmark.mixedAtomicLongDeposit(mixed, cpu);
    assertThat(mixed.atomic.get()).isEqualTo(1);
  }
}
