package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Limiter;
import dev.quell.sim.KneeBenchmark.Contender;
import dev.quell.sim.KneeBenchmark.Run;
import dev.quell.sim.KneeBenchmark.Variant;
import org.junit.jupiter.api.Test;

/**
 * The adaptive-limit benchmark: deterministic per seed, its fixed-limit driver agrees with a real
 * policy's bulkhead, and the figures docs/limiters.md quotes for Quell's adaptive limit still hold.
 */
class KneeBenchmarkTest {
  @Test
  void aRunIsTheSameForTheSameSeed() {
    Variant v = KneeBenchmark.variant("knee-moves");
    Run a = KneeBenchmark.run(v, Contender.quellAdaptive(), 7);
    Run b = KneeBenchmark.run(v, Contender.quellAdaptive(), 7);
    assertThat(a.goodput()).isEqualTo(b.goodput());
    assertThat(a.limitSeries()).containsExactly(b.limitSeries());
    assertThat(a.recoveryMillis()).isEqualTo(b.recoveryMillis());
  }

  @Test
  void theBenchmarksFixedLimitAgreesWithABulkheadInARealPolicy() {
    // the sweep counts in-flight attempts itself (it is fast); the same limit as Limiter.concurrency,
    // asked through Resilience.runAsync on the simulated clock, must serve the same goodput
    Variant v = KneeBenchmark.variant("knee");
    Run counted = KneeBenchmark.run(v, Contender.fixed(100), 1);
    Run policy = KneeBenchmark.run(v, Contender.quell("bulkhead 100", () -> Limiter.concurrency(100)), 1);
    assertThat(policy.goodput()).isCloseTo(counted.goodput(), within(counted.goodput() * 0.03));
    assertThat(policy.meanLimit()).isEqualTo(100.0);
  }

  @Test
  void theKneeIsWhereAFixedLimitServesMost() {
    Variant v = KneeBenchmark.variant("knee");
    Run best = KneeBenchmark.bestFixed(v, 1);
    assertThat(best.contender()).isEqualTo("fixed 100");
    assertThat(KneeBenchmark.run(v, Contender.fixed(200), 1).goodput()).isLessThan(best.goodput() * 0.6);
  }

  /**
   * The figures docs/limiters.md quotes for the basic knee, the knee that moves, short timeouts and
   * many clients (seed 1).
   */
  @Test
  void theDocumentedFiguresForQuellsAdaptiveLimitStillHold() {
    Variant knee = KneeBenchmark.variant("knee");
    Run best = KneeBenchmark.bestFixed(knee, 1);
    Run quell = KneeBenchmark.run(knee, Contender.quellAdaptive(), 1);
    assertThat(quell.goodputShare(best)).isBetween(0.92, 0.99);
    assertThat(quell.inBand()).isGreaterThanOrEqualTo(0.95);
    Run loss = KneeBenchmark.run(knee, Contender.quellLoss(), 1);
    assertThat(loss.goodputShare(best)).isLessThan(0.6);
    assertThat(loss.inBand()).isLessThan(0.4);

    Variant moves = KneeBenchmark.variant("knee-moves");
    Run moving = KneeBenchmark.run(moves, Contender.quellAdaptive(), 1);
    assertThat(moving.inBand()).isGreaterThanOrEqualTo(0.9);
    assertThat(moving.recoveryMillis()).isLessThanOrEqualTo(1000);

    // short timeouts: a cliff past which almost everything times out, found from the share timing out
    Variant cliff = KneeBenchmark.variant("timeout-short");
    Run cliffBest = KneeBenchmark.bestFixed(cliff, 1);
    Run cliffQuell = KneeBenchmark.run(cliff, Contender.quellAdaptive(), 1);
    assertThat(cliffQuell.goodputShare(cliffBest)).isGreaterThanOrEqualTo(0.9);
    assertThat(cliffQuell.inBand()).isGreaterThanOrEqualTo(0.85);

    // ten clients, each with its own limit: the sum stays near the knee
    Variant many = KneeBenchmark.variant("many-clients");
    Run manyBest = KneeBenchmark.bestFixed(many, 1);
    Run manyQuell = KneeBenchmark.run(many, Contender.quellAdaptive(), 1);
    assertThat(manyQuell.goodputShare(manyBest)).isBetween(0.85, 0.92);
    assertThat(manyQuell.inBand()).isGreaterThanOrEqualTo(0.95);
  }
}
