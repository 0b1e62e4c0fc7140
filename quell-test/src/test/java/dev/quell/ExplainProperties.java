package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.ExplainTest.Clock;
import java.time.Duration;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link Resilience#explain()}'s figures over many random policies: the worst case it describes is
 * attained when replayed, and no call — its attempts failing or hanging at random, its jitter drawn
 * at random — takes longer or makes more attempts than it says.
 */
class ExplainProperties {
  /**
   * jqwik notes at INFO that these properties have more edge cases than tries; that is expected here
   * (many small ranges), and the note would only add noise to every build. Held, so it stays set.
   */
  private static final java.util.logging.Logger JQWIK = java.util.logging.Logger.getLogger("net.jqwik");

  @BeforeContainer
  static void quietJqwik() {
    JQWIK.setLevel(java.util.logging.Level.WARNING);
  }

  @Property(tries = 4000)
  void theExplainedWorstCaseIsAttainedAndNeverExceeded(
      @ForAll @IntRange(min = 1, max = 5) int attempts,
      @ForAll @IntRange(min = 0, max = 1000) int timeoutMs,
      @ForAll @IntRange(min = 0, max = 3000) int deadlineMs,
      @ForAll @IntRange(min = 0, max = 4) int backoffKind,
      @ForAll @IntRange(min = 1, max = 600) int backoffMs,
      @ForAll @IntRange(min = 0, max = 2) int hedgeKind,
      @ForAll @IntRange(min = 0, max = 700) int hedgeMs,
      @ForAll @IntRange(min = 1, max = 3) int maxHedges,
      @ForAll @IntRange(min = 0, max = 2) int guard,
      @ForAll long seed) {
    Clock clock = new Clock();
    Resilience policy = guarded(policy(clock, attempts, timeoutMs, deadlineMs, backoffKind, backoffMs, hedgeKind,
        hedgeMs, maxHedges), guard, attempts);
    Explanation e = new Explanation(policy);
    if (e.worst.nanos == Explanation.NONE) {
      return; // no deadline and no attempt timeout: nothing to replay
    }

    // attained: the path explained, replayed (a breaker that opens after one failure would refuse it)
    Explanation.Path path = e.hedged != null ? e.hedged : e.worst;
    if (guard != 2 && !path.needsGates && path.hedgeRefusedAfter == 0) { // a refused hedge needs the budget's help
      ExplainTest.assertAttains(ExplainTest.replay(true, policy, clock, path), path);
      if (e.hedged == null) {
        Clock sync = new Clock();
        ExplainTest.assertAttains(ExplainTest.replay(false, policy.withTimeSource(sync), sync, path), path);
      }
    }
    Explanation.Path retrying = e.sequential;
    if (guard == 1 && retrying != null && !retrying.needsGates) {
      try (ResilienceContext.Scope scope = sheddable()) {
        Clock c = new Clock();
        ExplainTest.assertAttains(ExplainTest.replay(true, policy.withTimeSource(c), c, retrying), retrying);
      }
    }

    // never exceeded: attempts that fail at random moments or hang, jitter drawn at random
    Random random = new Random(seed);
    for (int run = 0; run < 3; run++) {
      Clock c = new Clock();
      c.unscripted = new Random(random.nextLong());
      long horizon = Math.max(1, Math.max(timeoutMs, deadlineMs)) * 1_000_000L;
      long[] plan = new long[attempts + 1];
      for (int i = 1; i <= attempts; i++) {
        plan[i] = random.nextInt(3) == 0 ? -1 : (long) (random.nextDouble() * horizon);
      }
      Outcome<Object> o;
      try (ResilienceContext.Scope scope = guard == 1 && random.nextBoolean() ? sheddable() : null) {
        o = ExplainTest.run(true, policy.withTimeSource(c), c, n -> plan[n]);
      }
      assertThat(o.elapsed().toNanos()).as("%s%n%s", o, e.text()).isLessThanOrEqualTo(e.worst.nanos);
      assertThat(o.attempts()).as("%s%n%s", o, e.text()).isLessThanOrEqualTo(e.mostAttempts);
    }

    // the most attempts: each fails at once, the shortest waits
    Clock fast = new Clock();
    Outcome<Object> o = ExplainTest.run(true, policy.withTimeSource(fast), fast, n -> 0L);
    if (guard == 2) {
      assertThat(o.attempts()).as("the breaker opens after one failure").isEqualTo(1);
    } else if (o.attempts() < e.mostAttempts && guard == 1 && e.sequential != null) {
      // the most attempts need the first hedge refused: a SHEDDABLE call retries instead
      try (ResilienceContext.Scope scope = sheddable()) {
        Clock c = new Clock();
        assertThat(ExplainTest.run(true, policy.withTimeSource(c), c, n -> 0L).attempts()).as(e.text())
            .isEqualTo(e.mostAttempts);
      }
    } else {
      assertThat(o.attempts()).as(e.text()).isEqualTo(e.mostAttempts);
    }
  }

  /**
   * The explanation assumes a measured hedge delay and measured timing at their loosest (no samples
   * yet). Once a policy instance has measured its latency — the hedge delay now the live quantile,
   * the attempt ceiling a multiple of the live p95 — its calls must still stay within the worst case.
   */
  @Property(tries = 300)
  void aPolicyThatHasMeasuredItsLatencyStaysWithinTheExplainedWorstCase(
      @ForAll @IntRange(min = 2, max = 5) int attempts,
      @ForAll @IntRange(min = 20, max = 1000) int timeoutMs,
      @ForAll @IntRange(min = 0, max = 3000) int deadlineMs,
      @ForAll @IntRange(min = 0, max = 4) int backoffKind,
      @ForAll @IntRange(min = 1, max = 600) int backoffMs,
      @ForAll @IntRange(min = 1, max = 3) int maxHedges,
      @ForAll @IntRange(min = 1, max = 20) int loadPercent,
      @ForAll boolean retries,
      @ForAll boolean tighten,
      @ForAll long seed) {
    Clock clock = new Clock();
    Random random = new Random(seed);
    clock.unscripted = new Random(random.nextLong());
    Resilience base = policy(clock, attempts, timeoutMs, deadlineMs, backoffKind, backoffMs, 0, 0, 1)
        .withHedge(Hedge.maxExtraLoad(loadPercent / 100.0).withMaxHedges(maxHedges).withRetries(retries)
            .withFloor(Duration.ofMillis(1)));
    // a window long enough to hold the warm-up's samples (each call runs its hedge timer out on this
    // clock); with tightening, the ceiling at twice the live p95, else at a multiple that never binds
    Resilience policy = base.withMeasuredTiming(MeasuredTiming.multipleOfP95(tighten ? 2 : 1000)
        .withFloor(Duration.ofMillis(5)).withMinSamples(20).withWindow(Duration.ofMinutes(10)));
    Explanation e = new Explanation(policy);
    // calls whose attempts succeed within nine tenths of the attempt timeout and the deadline, until the
    // window holds enough samples to measure (and ten more)
    long room = (deadlineMs == 0 ? timeoutMs : Math.min(timeoutMs, deadlineMs)) * 900_000L;
    int measured = 0;
    for (int i = 0; i < 1000 && measured < 10; i++) {
      measured += policy.timing().orElseThrow().isMeasuring() ? 1 : 0;
      long latency = 1 + (long) (random.nextDouble() * room);
      java.util.concurrent.CompletableFuture<Outcome<String>> ok = policy.runAsync(attempt -> {
        java.util.concurrent.CompletableFuture<String> stage = new java.util.concurrent.CompletableFuture<>();
        clock.time.schedule(() -> stage.complete("ok"), latency);
        return stage;
      });
      clock.time.runUntilIdle(Duration.ofDays(1));
      assertThat(ok).isDone(); // (a ceiling tightened by measured timing may cut a slow one: it then retries)
    }
    assertThat(policy.timing().orElseThrow().isMeasuring()).as("the hedge delay is measured").isTrue();
    // then calls whose attempts fail at random moments or hang, on the same instance
    long horizon = Math.max(timeoutMs, deadlineMs) * 1_000_000L;
    for (int run = 0; run < 3; run++) {
      long[] plan = new long[attempts + 1];
      for (int i = 1; i <= attempts; i++) {
        plan[i] = random.nextInt(3) == 0 ? -1 : (long) (random.nextDouble() * horizon);
      }
      Outcome<Object> o = ExplainTest.run(true, policy, clock, n -> plan[n]);
      assertThat(o.elapsed().toNanos()).as("%s%n%s", o, e.text()).isLessThanOrEqualTo(e.worst.nanos);
      assertThat(o.attempts()).as("%s%n%s", o, e.text()).isLessThanOrEqualTo(e.mostAttempts);
    }
  }

  /**
   * Found by {@link #aPolicyThatHasMeasuredItsLatencyStaysWithinTheExplainedWorstCase}: a measured
   * hedge draws on the policy's extra-load allowance, and once that is spent the first hedge is not
   * sent and the call retries with its backoff instead: 115 ms here, where the worst case stated
   * only the hedged 80 ms.
   */
  @net.jqwik.api.Example
  void aMeasuredHedgeWhoseAllowanceIsSpentRetriesInsteadWithinTheExplainedWorstCase() {
    Clock clock = new Clock();
    clock.unscripted = ExplainTest.Draws.MOST; // every backoff at the top of its jitter
    Resilience policy = policy(clock, 4, 20, 0, 0, 5, 0, 0, 1)
        .withHedge(Hedge.maxExtraLoad(0.08).withMaxHedges(3).withRetries(true).withFloor(Duration.ofMillis(1)));
    Explanation e = new Explanation(policy);
    assertThat(e.sequential).as(e.text()).isNotNull();
    assertThat(e.text()).contains("the extra load allowed for hedges is spent");
    // calls whose attempts all hang spend the allowance's ten hedges, three at a time
    Outcome<Object> o = null;
    for (int i = 0; i < 6; i++) {
      o = ExplainTest.run(true, policy, clock, n -> -1L);
    }
    assertThat(o.elapsed()).as("the last call retried with its backoff: %s", o)
        .isEqualTo(Duration.ofMillis(20 + 5 + 20 + 10 + 20 + 20 + 20));
    assertThat(o.elapsed().toNanos()).as(e.text()).isLessThanOrEqualTo(e.worst.nanos);
  }

  private static ResilienceContext.Scope sheddable() {
    return ResilienceContext.current().withCriticality(Criticality.SHEDDABLE).open();
  }

  /** 0: no guard; 1: the automatic budget, spent at the caller's criticality; 2: a breaker that opens after one failure. */
  static Resilience guarded(Resilience p, int guard, int attempts) {
    if (guard == 1 && attempts > 1) {
      return p.withBudget(RetryBudget.AUTOMATIC).withAmbientCriticality(true);
    }
    if (guard == 2) {
      return p.withBreaker(CircuitBreaker.Config.DEFAULT.withConsecutiveFailures(1));
    }
    return p;
  }

  static Resilience policy(Clock clock, int attempts, int timeoutMs, int deadlineMs, int backoffKind, int backoffMs,
      int hedgeKind, int hedgeMs, int maxHedges) {
    Duration base = Duration.ofMillis(backoffMs);
    Backoff backoff = switch (backoffKind) {
      case 0 -> Backoff.exponential(base);
      case 1 -> Backoff.exponential(base).withJitter(Jitter.EQUAL);
      case 2 -> Backoff.exponential(base).withJitter(Jitter.NONE).withFactor(1.5);
      case 3 -> Backoff.constant(base);
      default -> Backoff.NONE;
    };
    return Resilience.DEFAULT.with(s -> {
      s.name("random").timeSource(clock).budget(RetryBudget.NONE).attempts(attempts).backoff(backoff);
      if (timeoutMs == 0) {
        s.noAttemptTimeout();
      } else {
        s.attemptTimeout(Duration.ofMillis(timeoutMs));
      }
      if (deadlineMs == 0) {
        s.noDeadline();
      } else {
        s.deadline(Duration.ofMillis(deadlineMs));
      }
      if (hedgeKind > 0 && attempts > 1) {
        s.hedge(Hedge.after(Duration.ofMillis(hedgeMs)).withMaxHedges(maxHedges).withRetries(hedgeKind == 2));
      }
    });
  }
}
