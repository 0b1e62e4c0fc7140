package dev.quell.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The adaptive throttle for a fleet against an overloaded dependency, beside the retry budget alone and
 * the breaker alone, in two incidents: the sixteen-pods brownout (16 pods at 500 calls/s against room for
 * 400 concurrent attempts, eight times slower from 2:00 to 3:00) and the outage of a minute
 * (docs/scenarios/outage.yaml: the dependency refuses every attempt at once from 1:00 to 2:00). Seed 1;
 * docs/limiters.md quotes both tables, and each row it quotes is checked here against the run.
 */
class ThrottleOnTheSimulationClockTest {
  private static final Dependency BROWNOUT = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
      .capacity(400)
      .incident(Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3)));
  private static final Load FLEET = Load.perSecond(500).peers(15).criticality(Criticality.CRITICAL, 0.5)
      .criticality(Criticality.SHEDDABLE, 0.5);

  private static Resilience base(dev.quell.TimeSource clock) {
    return Resilience.NONE.with(s -> s.attempts(3).attemptTimeout(Duration.ofMillis(160))
        .backoff(Backoff.constant(Duration.ofMillis(50))).deadline(Duration.ofSeconds(1)).timeSource(clock));
  }

  private static SimulationReport run(Function<dev.quell.TimeSource, Resilience> policy) {
    return Simulate.policy(policy::apply).against(BROWNOUT).under(FLEET).lasting(Duration.ofMinutes(5)).run(1);
  }

  @Test
  void theThrottleShedsSheddableWorkFirstAndSendsTheDependencyLessThanTheBudgetAlone() throws IOException {
    SimulationReport budget = run(clock -> base(clock).withBudget(RetryBudget.AUTOMATIC));
    SimulationReport breaker = run(clock -> base(clock).withBudget(RetryBudget.NONE)
        .withBreaker(CircuitBreaker.Config.DEFAULT));
    SimulationReport throttle = run(clock -> base(clock).withBudget(RetryBudget.AUTOMATIC)
        .withLimiter(Limiter.throttle(2, Duration.ofMinutes(2), clock)));
    SimulationReport shortWindow = run(clock -> base(clock).withBudget(RetryBudget.AUTOMATIC)
        .withLimiter(Limiter.throttle(2, Duration.ofSeconds(10), clock)));
    print(budget, breaker, throttle, shortWindow);
    assertThat(throttle.limited()).isPositive();
    assertThat(throttle.attempts()).isLessThan(budget.attempts());
    assertThat(throttle.availabilityBy().get(Criticality.CRITICAL))
        .isGreaterThan(throttle.availabilityBy().get(Criticality.SHEDDABLE));
    assertThat(breaker.attempts()).isPositive();
    // the two-minute window remembers the brownout for two minutes after it: a ten-second one recovers sooner,
    // and sooner than the budget alone or the breaker alone
    assertThat(phase(shortWindow, "after")).isGreaterThan(phase(throttle, "after"));
    assertThat(throttle.timeToRecover()).isEmpty();
    assertThat(shortWindow.timeToRecover().orElseThrow()).isLessThan(budget.timeToRecover().orElseThrow())
        .isLessThan(breaker.timeToRecover().orElseThrow());

    // the rows docs/limiters.md quotes
    String page = limitersPage();
    assertThat(page).contains(brownoutRow("retry budget alone", budget), brownoutRow("breaker alone (no budget)", breaker),
        brownoutRow("throttle (K = 2, 2 min) and budget", throttle),
        brownoutRow("throttle (K = 2, 10 s) and budget", shortWindow));
  }

  /** docs/scenarios/outage.yaml's dependency: from 1:00 to 2:00 it refuses every attempt at once (a fast 503). */
  private static final Dependency OUTAGE = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
      .capacity(400)
      .incident(Incident.outage().between(Duration.ofMinutes(1), Duration.ofMinutes(2)));
  /** docs/scenarios/outage.yaml's policy: 3 attempts, 160 ms attempt timeout, 1 s deadline, the automatic budget. */
  private static final Resilience REFERENCE = Scenario.referencePolicy(RetryBudget.AUTOMATIC).withName("outage");

  private static SimulationReport outage(Function<dev.quell.TimeSource, Resilience> policy) {
    return Simulate.policy(policy::apply).against(OUTAGE).under(Load.perSecond(500)).lasting(Duration.ofMinutes(4))
        .run(1);
  }

  /**
   * An outage that refuses fast: a throttle over ten seconds refuses locally once its window holds mostly
   * rejections, and sends the dependency less than the breaker does; the SRE book's two-minute window still
   * holds the minute of successes before the outage, so it refuses next to nothing in a one-minute outage.
   * The price is paid after the outage: a throttle refusing nearly everything lets back about K × the
   * attempts that succeed, so the calls come back more slowly than behind a breaker.
   */
  @Test
  void inAnOutageThatRefusesFastAShortWindowCutsTheLoadMostAndRecoversLastTheDefaultWindowDoesNothing()
      throws IOException {
    SimulationReport budget = outage(clock -> REFERENCE);
    SimulationReport breaker = outage(clock -> REFERENCE.withBudget(RetryBudget.NONE)
        .withBreaker(CircuitBreaker.Config.DEFAULT));
    SimulationReport both = outage(clock -> REFERENCE.withBreaker(CircuitBreaker.Config.DEFAULT));
    SimulationReport shortWindow = outage(clock -> REFERENCE.withTimeSource(clock)
        .withLimiter(Limiter.throttle(2, Duration.ofSeconds(10), clock)));
    SimulationReport sreWindow = outage(clock -> REFERENCE.withTimeSource(clock)
        .withLimiter(Limiter.throttle(2, Duration.ofMinutes(2), clock)));
    print(budget, breaker, both, shortWindow, sreWindow);

    // during the outage: the ten-second throttle sends less than either breaker arm; the two-minute one sends all
    double during = phaseLoad(budget, "during outage");
    assertThat(during).isBetween(1.0, 1.1);
    assertThat(phaseLoad(shortWindow, "during outage")).isLessThan(phaseLoad(both, "during outage"))
        .isLessThan(phaseLoad(breaker, "during outage"));
    assertThat(phaseLoad(sreWindow, "during outage")).isGreaterThanOrEqualTo(during - 0.01);
    assertThat(sreWindow.limited()).isLessThan(sreWindow.calls() / 1000);
    // its refusals ended calls with LIMITED and reached no dependency; the breaker did not count them
    assertThat(shortWindow.limited()).isPositive().isEqualTo(shortWindow.stopReasons().get(StopReason.LIMITED));
    assertThat(shortWindow.refusedByBreaker()).isZero();
    assertThat(shortWindow.attempts()).isLessThan(both.attempts());
    // the budget still bounds the retries in the first second of the outage
    assertThat(shortWindow.worstSecond()).isLessThanOrEqualTo(1.166);

    // after it: the budget alone is back at once; the ten-second throttle last, after the breaker arms
    Duration throttled = shortWindow.timeToRecover().orElseThrow();
    assertThat(budget.timeToRecover()).hasValueSatisfying(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(5)));
    assertThat(throttled).isGreaterThan(both.timeToRecover().orElseThrow())
        .isGreaterThan(breaker.timeToRecover().orElseThrow());
    assertThat(phase(shortWindow, "after")).isLessThan(phase(both, "after"));
    assertThat(sreWindow.availability()).isCloseTo(budget.availability(), org.assertj.core.api.Assertions.within(0.001));

    // the rows docs/limiters.md quotes
    assertThat(limitersPage()).contains(outageRow("retry budget alone", budget),
        outageRow("breaker alone (no budget)", breaker), outageRow("breaker and budget", both),
        outageRow("throttle (K = 2, 10 s) and budget", shortWindow),
        outageRow("throttle (K = 2, 2 min) and budget", sreWindow));
  }

  private static String limitersPage() throws IOException {
    return Files.readString(Path.of("..", "docs", "limiters.md"));
  }

  private static String percent(double share) {
    return String.format(Locale.ROOT, "%.1f%%", 100 * share);
  }

  private static String brownoutRow(String arm, SimulationReport r) {
    return String.format(Locale.ROOT, "| %s | %.2f | %.2f | %s | %s | %s | %s / %s |", arm, r.loadMultiplier(),
        r.worstSecond(), percent(r.availability()), percent(phase(r, "after")),
        r.timeToRecover().map(d -> d.toSeconds() + " s").orElse("not in 2 min"), percent(r.availabilityBy().get(Criticality.CRITICAL)), percent(r.availabilityBy().get(Criticality.SHEDDABLE)));
  }

  private static String outageRow(String arm, SimulationReport r) {
    return String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.2f | %s | %s | %d s | %,d |", arm, r.loadMultiplier(),
        phaseLoad(r, "during outage"), r.worstSecond(), percent(r.availability()), percent(phase(r, "after")),
        r.timeToRecover().orElseThrow().toSeconds(), r.refusedByBreaker() + r.limited());
  }

  private static void print(SimulationReport... reports) {
    if (!Boolean.getBoolean("quell.print")) {
      return;
    }
    for (SimulationReport r : reports) {
      StringBuilder phases = new StringBuilder();
      for (Phase p : r.phases()) {
        phases.append(String.format(Locale.ROOT, " | %s load %.2f availability %.3f", p.name(), p.loadMultiplier(),
            p.availability()));
      }
      System.out.println(String.format(Locale.ROOT, "load %.2f worst %.2f availability %.3f by %s recover %s attempts %d"
          + " limited %d breaker %d%s", r.loadMultiplier(), r.worstSecond(), r.availability(), r.availabilityBy(),
          r.timeToRecover().map(d -> d.toSeconds() + " s").orElse("never"), r.attempts(), r.limited(),
          r.refusedByBreaker(), phases));
    }
  }

  private static Phase named(SimulationReport r, String name) {
    return r.phases().stream().filter(p -> p.name().startsWith(name)).findFirst().orElseThrow();
  }

  private static double phase(SimulationReport r, String name) {
    return named(r, name).availability();
  }

  private static double phaseLoad(SimulationReport r, String name) {
    return named(r, name).loadMultiplier();
  }
}
