package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker.Config;
import dev.quell.CircuitBreaker.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** The bounds the breaker claims, for every sequence of attempts, endings and passing time. */
class CircuitBreakerProperties {

  /** 0 = an attempt asks to be admitted, 1 = a held attempt ends as {@code how}, 2 = time passes by {@code millis}. */
  static final class Step {
    final int kind;
    final int pick;
    final int how;
    final int millis;

    Step(int kind, int pick, int how, int millis) {
      this.kind = kind;
      this.pick = pick;
      this.how = how;
      this.millis = millis;
    }

    @Override
    public String toString() {
      return kind == 0 ? "admit" : kind == 1 ? "end #" + pick + " " + BreakerHarness.how(how) : "wait " + millis + "ms";
    }
  }

  @Property(tries = 400)
  void probesOutOfOneEpisodeNeverExceedTheConfiguredNumberAndEveryPermitIsAccountedFor(
      @ForAll @IntRange(min = 1, max = 5) int probes,
      @ForAll @IntRange(min = 1, max = 4) int probeSuccesses,
      @ForAll @IntRange(min = 1, max = 3) int minimumCalls,
      @ForAll("steps") List<Step> steps) {
    Config config = Config.DEFAULT.with(s -> s.probes(probes).probeSuccesses(probeSuccesses).minimumCalls(minimumCalls)
        .consecutiveFailures(2).breakDuration(Duration.ofMillis(20)).maxBreakDuration(Duration.ofMillis(80))
        .window(Duration.ofMillis(200)).ramp(Duration.ofMillis(50)));
    BreakerHarness h = new BreakerHarness(config);
    List<AttemptRecord> held = new ArrayList<>();
    for (Step s : steps) {
      switch (s.kind) {
        case 0: {
          AttemptRecord r = h.tryAdmit();
          if (r != null) {
            held.add(r);
          }
          break;
        }
        case 1:
          if (!held.isEmpty()) {
            h.end(held.remove(s.pick % held.size()), s.how);
          }
          break;
        default:
          h.clock.advance(Duration.ofMillis(s.millis));
      }
      long episode = h.breaker.phaseId();
      long live = held.stream().filter(r -> (r.marks[0] & 1) == 1 && r.marks[0] >>> 1 == episode).count();
      assertThat(live).as("probes out of the current episode").isLessThanOrEqualTo(probes);
      assertThat(h.breaker.probePermitsHeld()).as("permits the breaker counts as out").isEqualTo((int) live);
    }
    for (AttemptRecord r : held) {
      h.end(r, Gate.CANCELLED);
    }
    assertThat(h.breaker.probePermitsHeld()).isZero();
    if (h.breaker.state() == State.HALF_OPEN) {
      for (int i = 0; i < probes; i++) {
        h.admitted(); // every permit came back
      }
      h.refused();
    }
  }

  @Property(tries = 400)
  void theWindowNeverCountsAnOutcomeOlderThanTheWindowAndAlwaysCountsTheLastNineTenths(
      @ForAll @IntRange(min = 10, max = 10_000) int windowMillis,
      @ForAll("steps") List<Step> steps) {
    Config counting = Config.DEFAULT.with(s -> s.failureRate(1.0).minimumCalls(Integer.MAX_VALUE)
        .window(Duration.ofMillis(windowMillis)));
    BreakerHarness h = new BreakerHarness(counting);
    long window = Duration.ofMillis(windowMillis).toNanos();
    List<long[]> counted = new ArrayList<>(); // {when, failed}
    for (Step s : steps) {
      if (s.kind == 2) {
        h.clock.advanceNanos(window * s.millis / 50); // up to two windows
      } else {
        h.call(s.how);
        if (s.how != Gate.CANCELLED && s.how != Gate.NOT_STARTED) {
          boolean failed = s.how == Gate.FAILED || s.how == Gate.TIMED_OUT || s.how == Gate.THROTTLED;
          counted.add(new long[] {h.clock.nanoTime(), failed ? 1 : 0});
        }
      }
      long now = h.clock.nanoTime();
      CircuitBreaker.Metrics m = h.breaker.metrics();
      long inWindow = counted.stream().filter(o -> now - o[0] < window).count();
      long recent = counted.stream().filter(o -> now - o[0] < window - window / CircuitBreaker.BUCKETS).count();
      long failedInWindow = counted.stream().filter(o -> now - o[0] < window && o[1] == 1).count();
      long failedRecent = counted.stream()
          .filter(o -> now - o[0] < window - window / CircuitBreaker.BUCKETS && o[1] == 1).count();
      assertThat(m.calls()).as("calls").isBetween(recent, inWindow);
      assertThat(m.failedCalls()).as("failed calls").isBetween(failedRecent, failedInWindow);
    }
  }

  @Property(tries = 300)
  void aBreakIsNeverShorterThanHalfNorLongerThanTheMaximum(
      @ForAll @IntRange(min = 1, max = 10_000) int baseMillis,
      @ForAll @IntRange(min = 1, max = 64) int maxFactor,
      @ForAll @IntRange(min = 1, max = 12) int failedProbes,
      @ForAll long seed) {
    Duration base = Duration.ofMillis(baseMillis);
    Duration max = base.multipliedBy(maxFactor);
    Config config = Config.DEFAULT.with(s -> s.minimumCalls(1).breakDuration(base).maxBreakDuration(max)
        .ramp(Duration.ZERO));
    BreakerHarness h = new BreakerHarness(config, new SeededClock(seed, seed));
    h.call(Gate.FAILED);
    for (int i = 0; i <= failedProbes; i++) {
      long expected = Math.min(base.toNanos() << Math.min(i, 40), max.toNanos());
      h.refused();
      assertThat(h.lastRetryAfter()).as("break %d", i).isBetween(expected / 2, expected);
      h.clock.advanceNanos(h.lastRetryAfter());
      h.call(Gate.FAILED);
    }
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Integer> hows = Arbitraries.of(Gate.SUCCEEDED, Gate.FAILED, Gate.TIMED_OUT, Gate.THROTTLED, Gate.REJECTED,
        Gate.CANCELLED, Gate.NOT_STARTED);
    Arbitrary<Step> step = Combinators.combine(
            Arbitraries.integers().between(0, 2),
            Arbitraries.integers().between(0, 50),
            hows,
            Arbitraries.integers().between(0, 2000))
        .as((kind, pick, how, millis) -> new Step(kind, pick, how, kind == 2 ? millis / 20 : millis));
    return step.list().ofMaxSize(300);
  }
}
