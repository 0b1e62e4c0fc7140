package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The SRE book's client-side adaptive throttling, as a gate. */
class AdaptiveThrottleTest {
  private final SeededClock clock = new SeededClock();

  private AdaptiveThrottle throttle(double k) {
    return (AdaptiveThrottle) Limiter.throttle(k, Duration.ofMinutes(2), clock);
  }

  private static AttemptRecord attempt(int kind, Criticality c, long now) {
    return new AttemptRecord().reset(kind == AttemptRecord.FIRST ? 1 : 2, kind, c, now, 1);
  }

  /** One first attempt at CRITICAL that, if admitted, ends as {@code how}; whether it was admitted. */
  private boolean call(AdaptiveThrottle t, Criticality c, int how) {
    long now = clock.nanoTime();
    AttemptRecord a = attempt(AttemptRecord.FIRST, c, now);
    if (!t.gate().tryAdmit(a, 0, now)) {
      return false;
    }
    t.gate().release(a, 0, how, now);
    return true;
  }

  @Test
  void whileTheDependencyAcceptsEverythingNothingIsRefused() {
    AdaptiveThrottle t = throttle(2);
    for (int i = 0; i < 10_000; i++) {
      assertThat(call(t, Criticality.SHEDDABLE, Gate.SUCCEEDED)).isTrue();
    }
    assertThat(t.rejectionProbability()).isZero();
    assertThat(t.limit()).isEqualTo(Integer.MAX_VALUE);
  }

  @Test
  void theRefusalProbabilityIsTheSreBooksFormula() {
    AdaptiveThrottle t = throttle(2);
    // 100 requests, 20 accepted, 80 rejected by the dependency: max(0, (100 - 2 * 20) / 101)
    for (int i = 0; i < 100; i++) {
      long now = clock.nanoTime();
      // a request counts whether or not the throttle refuses it; only an admitted one can be accepted
      if (t.admit(true, Criticality.CRITICAL, now)) {
        t.ended(true, i < 20 ? Gate.SUCCEEDED : Gate.THROTTLED, now);
      }
    }
    assertThat(t.rejectionProbability(Criticality.SHEDDABLE, clock.nanoTime())).isCloseTo(60.0 / 101, within(1e-9));
    // CRITICAL uses 2K = 4: (100 - 80) / 101
    assertThat(t.rejectionProbability()).isCloseTo(20.0 / 101, within(1e-9));
    // CRITICAL_PLUS uses 3K = 6: nothing refused
    assertThat(t.rejectionProbability(Criticality.CRITICAL_PLUS, clock.nanoTime())).isZero();
  }

  @Test
  void sheddableWorkIsShedFirstWhenTheDependencyRejects() {
    AdaptiveThrottle t = throttle(2);
    int[] admitted = new int[Criticality.values().length];
    for (int i = 0; i < 20_000; i++) {
      Criticality c = Criticality.values()[i % 4];
      // the dependency accepts one attempt in five
      if (call(t, c, i % 5 == 0 ? Gate.SUCCEEDED : Gate.THROTTLED)) {
        admitted[c.ordinal()]++;
      }
    }
    assertThat(admitted[Criticality.SHEDDABLE.ordinal()]).isLessThan(admitted[Criticality.SHEDDABLE_PLUS.ordinal()]);
    assertThat(admitted[Criticality.SHEDDABLE_PLUS.ordinal()]).isLessThan(admitted[Criticality.CRITICAL.ordinal()]);
    assertThat(admitted[Criticality.CRITICAL.ordinal()]).isLessThanOrEqualTo(admitted[Criticality.CRITICAL_PLUS.ordinal()]);
  }

  @Test
  void itsOwnRefusalsAreNeverCountedAsTheDependencysRejections() {
    AdaptiveThrottle t = throttle(2);
    for (int i = 0; i < 1000; i++) {
      call(t, Criticality.CRITICAL, Gate.THROTTLED);
    }
    double p = t.rejectionProbability();
    assertThat(p).isPositive().isLessThan(1);
    // the dependency recovers: everything sent is accepted; refusals in the meantime are requests,
    // never rejections, so accepts catch up and the probability falls to zero
    for (int i = 0; i < 20_000; i++) {
      call(t, Criticality.CRITICAL, Gate.SUCCEEDED);
      clock.advance(Duration.ofMillis(10));
    }
    assertThat(t.rejectionProbability()).isZero();
  }

  @Test
  void cancellationsAndAttemptsThatNeverStartedCountForNothing() {
    AdaptiveThrottle t = throttle(2);
    for (int i = 0; i < 1000; i++) {
      call(t, Criticality.SHEDDABLE, i % 2 == 0 ? Gate.CANCELLED : Gate.NOT_STARTED);
    }
    assertThat(t.rejectionProbability(Criticality.SHEDDABLE, clock.nanoTime())).isZero();
    assertThat(t.inFlight()).isZero();
  }

  @Test
  void retriesAndHedgesAreNeverRefusedButTheirOutcomesCount() {
    AdaptiveThrottle t = throttle(1.1);
    for (int i = 0; i < 100; i++) {
      call(t, Criticality.SHEDDABLE, Gate.THROTTLED);
    }
    long now = clock.nanoTime();
    for (int kind : new int[] {AttemptRecord.RETRY, AttemptRecord.HEDGE}) {
      AttemptRecord a = attempt(kind, Criticality.SHEDDABLE, now);
      assertThat(t.gate().tryAdmit(a, 0, now)).isTrue();
      t.gate().release(a, 0, Gate.SUCCEEDED, now);
    }
  }

  @Test
  void aRefusalCarriesARetryAfterAndTheWindowForgetsOldRejections() {
    AdaptiveThrottle t = throttle(2);
    for (int i = 0; i < 1000; i++) {
      call(t, Criticality.SHEDDABLE, Gate.TIMED_OUT);
    }
    long now = clock.nanoTime();
    AttemptRecord refused = null;
    for (int i = 0; i < 100 && refused == null; i++) {
      AttemptRecord a = attempt(AttemptRecord.FIRST, Criticality.SHEDDABLE, now);
      if (!t.gate().tryAdmit(a, 0, now)) {
        refused = a;
      } else {
        t.gate().release(a, 0, Gate.TIMED_OUT, now);
      }
    }
    assertThat(refused).isNotNull();
    assertThat(refused.retryAfterNanos).isBetween(1L, Duration.ofSeconds(10).toNanos());
    assertThat(t.gate().refusal()).isEqualTo(StopReason.LIMITED);
    clock.advance(Duration.ofMinutes(3));
    assertThat(t.rejectionProbability(Criticality.SHEDDABLE, clock.nanoTime())).isZero();
  }

  @Test
  void aPolicyAsksTheThrottleAfterItsConcurrencyLimitsAndBeforeTheBudget() {
    Limiter throttle = Limiter.throttle(2, Duration.ofMinutes(2), clock);
    Limiter bulkhead = Limiter.concurrency(5);
    Resilience p = Resilience.DEFAULT.withTimeSource(clock).withLimiter(throttle).withLimiter(bulkhead);
    assertThat(p.gates[0]).isSameAs(bulkhead.gate());
    assertThat(p.gates[1]).isSameAs(throttle.gate());
    assertThat(p.gates[2]).isInstanceOf(BudgetGate.class);
  }

  @Test
  void aScopeGivesEachKeyItsOwnThrottle() {
    Limiter throttle = Limiter.throttle(2, Duration.ofMinutes(2), clock);
    PolicyScope<String> scope = PolicyScope.of(Resilience.DEFAULT.withTimeSource(clock).withLimiter(throttle), 10);
    Limiter a = scope.policy("a").limiters().get(0);
    Limiter b = scope.policy("b").limiters().get(0);
    assertThat(a).isNotSameAs(b).isNotSameAs(throttle);
    assertThat(a.name()).isEqualTo("default:a");
    assertThat(scope.throttles()).containsOnlyKeys("a", "b");
  }

  @Test
  void badSettingsAreRefusedByName() {
    assertThatThrownBy(() -> Limiter.throttle(0.5, Duration.ofMinutes(2)))
        .isInstanceOf(ResilienceConfigurationException.class).hasMessageContaining("throttle k was 0.5");
    assertThatThrownBy(() -> Limiter.throttle(2, Duration.ofMillis(10)))
        .hasMessageContaining("throttle window was 10 ms: must be from 1 s to 1 h");
    assertThat(Limiter.throttle().name()).startsWith("throttle-");
    assertThat(Limiter.throttle().withName("inventory").name()).isEqualTo("inventory");
  }
}
