package dev.quell.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class QuellMicrometerTest {
  private final VirtualTime time = VirtualTime.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private Resilience inventory() {
    return Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withBackoff(Backoff.constant(Duration.ofMillis(100)))
        .withListener(QuellMicrometer.listener(registry));
  }

  private double counter(String name, String... tags) {
    Counter c = registry.find(name).tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void tenCallsThatEachFailOnceCountTenCallsTenFirstAttemptsAndTenRetries() throws Exception {
    Resilience policy = inventory();
    for (int i = 0; i < 10; i++) {
      String v = policy.execute(attempt -> {
        time.sleep(Duration.ofMillis(5));
        if (attempt.number() == 1) {
          throw new IOException("flaky");
        }
        return "ok";
      });
      assertThat(v).isEqualTo("ok");
    }

    assertThat(counter("quell.calls", "quell.policy", "inventory", "quell.outcome", "SUCCEEDED")).isEqualTo(10);
    assertThat(registry.find("quell.calls").counters()).hasSize(1);
    assertThat(counter("quell.attempts", "quell.policy", "inventory", "kind", "first")).isEqualTo(10);
    assertThat(counter("quell.attempts", "quell.policy", "inventory", "kind", "retry")).isEqualTo(10);
    assertThat(registry.find("quell.attempts").tag("kind", "hedge").counter()).isNull();
    assertThat(registry.find("quell.rejections").counter()).isNull();

    Timer ok = registry.find("quell.attempt.duration").tags("quell.policy", "inventory", "quell.verdict", "OK").timer();
    Timer failed = registry.find("quell.attempt.duration").tags("quell.verdict", "TRANSIENT").timer();
    assertThat(ok.count()).isEqualTo(10);
    assertThat(failed.count()).isEqualTo(10);
    assertThat(ok.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(50.0); // 10 × 5 ms on the virtual clock
    Timer calls = registry.find("quell.call.duration").tags("quell.outcome", "SUCCEEDED").timer();
    assertThat(calls.count()).isEqualTo(10);
    assertThat(calls.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(1100.0); // 10 × (5 + 100 backoff + 5)
    assertThat(calls.max(TimeUnit.MILLISECONDS)).isEqualTo(110.0);
  }

  @Test
  void budgetExhaustionCountsRejectionsAndDrivesUtilizationNearOne() {
    Resilience policy = inventory();
    Map<StopReason, Integer> outcomes = new EnumMap<>(StopReason.class);
    for (int i = 0; i < 40; i++) {
      Outcome<String> o = policy.run(() -> {
        throw new IOException("down");
      });
      outcomes.merge(o.stopReason(), 1, Integer::sum);
    }
    double rejected = outcomes.get(StopReason.BUDGET_EXHAUSTED);
    assertThat(rejected).isGreaterThan(10);
    assertThat(counter("quell.rejections", "quell.policy", "inventory", "quell.outcome", "BUDGET_EXHAUSTED"))
        .isEqualTo(rejected);
    assertThat(counter("quell.calls", "quell.outcome", "BUDGET_EXHAUSTED")).isEqualTo(rejected);
    assertThat(counter("quell.calls", "quell.outcome", "ATTEMPTS_EXHAUSTED"))
        .isEqualTo((double) outcomes.getOrDefault(StopReason.ATTEMPTS_EXHAUSTED, 0));
    // every attempt was counted: each call made its first attempt, and retries as far as the budget funded them
    double first = counter("quell.attempts", "kind", "first");
    double retries = counter("quell.attempts", "kind", "retry");
    assertThat(first).isEqualTo(40);
    long attemptsTimed = registry.find("quell.attempt.duration").timers().stream().mapToLong(Timer::count).sum();
    assertThat(first + retries).isEqualTo((double) attemptsTimed);

    Gauge utilization = registry.find("quell.budget.utilization")
        .tags("quell.budget", "inventory", "quell.policy", "inventory").gauge();
    Gauge tokens = registry.find("quell.budget.tokens").tags("quell.budget", "inventory").gauge();
    assertThat(utilization.value()).isGreaterThan(0.9).isLessThanOrEqualTo(1.0);
    assertThat(utilization.value()).isEqualTo(policy.budget().utilization());
    // nearly dry: retries are charged as they start, so the floor may have refilled a little since the last refusal
    assertThat(tokens.value()).isLessThan(2.0).isEqualTo(policy.budget().tokens());

    // a quiet minute refills the bucket from its floor: the gauge follows the live budget
    time.advance(Duration.ofMinutes(1));
    assertThat(utilization.value()).isEqualTo(0.0);
    assertThat(tokens.value()).isEqualTo(30.0);
  }

  @Test
  void permanentFailureIsNotRetriedAndIsTaggedPermanent() {
    Resilience policy = inventory();
    Outcome<String> o = policy.run(() -> {
      throw new IllegalStateException("bad request");
    });
    assertThat(o.stopReason()).isEqualTo(StopReason.PERMANENT);
    assertThat(counter("quell.calls", "quell.outcome", "PERMANENT")).isEqualTo(1);
    assertThat(registry.find("quell.attempt.duration").tag("quell.verdict", "PERMANENT").timer().count()).isEqualTo(1);
    assertThat(counter("quell.attempts", "kind", "retry")).isZero();
  }

  @Test
  void asynchronousCallsRecordTheSameMeters() {
    Resilience policy = inventory();
    int[] started = new int[1];
    for (int i = 0; i < 5; i++) {
      CompletableFuture<String> f = policy.executeAsync(() -> ++started[0] % 2 == 1
          ? CompletableFuture.failedFuture(new IOException("flaky"))
          : CompletableFuture.completedFuture("ok"));
      time.runUntilIdle(Duration.ofSeconds(5));
      assertThat(f).isCompletedWithValue("ok");
    }
    assertThat(counter("quell.calls", "quell.outcome", "SUCCEEDED")).isEqualTo(5);
    assertThat(counter("quell.attempts", "kind", "first")).isEqualTo(5);
    assertThat(counter("quell.attempts", "kind", "retry")).isEqualTo(5);
    assertThat(registry.find("quell.call.duration").timer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(500.0);
  }

  @Test
  void theFastPathOnTheRealClockIsCountedToo() throws Exception {
    Resilience policy = Resilience.DEFAULT.withName("fast").withListener(QuellMicrometer.listener(registry));
    for (int i = 0; i < 7; i++) {
      assertThat(policy.execute(() -> "ok")).isEqualTo("ok");
    }
    assertThat(counter("quell.calls", "quell.policy", "fast", "quell.outcome", "SUCCEEDED")).isEqualTo(7);
    assertThat(counter("quell.attempts", "quell.policy", "fast", "kind", "first")).isEqualTo(7);
    assertThat(registry.find("quell.attempt.duration").tag("quell.policy", "fast").timer().count()).isEqualTo(7);
    assertThat(registry.find("quell.budget.utilization").tag("quell.budget", "fast").gauge().value()).isZero();
  }

  @Test
  void aSingleAttemptPolicyHasNoBudgetAndNoBudgetGauge() throws Exception {
    Resilience once = Resilience.NONE.withName("once").withTimeSource(time).withListener(QuellMicrometer.listener(registry));
    once.execute(() -> "ok");
    assertThat(counter("quell.calls", "quell.policy", "once")).isEqualTo(1);
    assertThat(registry.find("quell.budget.utilization").gauges()).isEmpty();
  }

  @Test
  void theListenerIsOnePerRegistrySoPoliciesBuiltTwiceCompareEqual() {
    assertThat(QuellMicrometer.listener(registry)).isSameAs(QuellMicrometer.listener(registry));
    assertThat(QuellMicrometer.listener(new SimpleMeterRegistry())).isNotSameAs(QuellMicrometer.listener(registry));
    assertThat(inventory()).isEqualTo(inventory());
  }

  @Test
  void aSharedBudgetBoundExplicitlyHasAGaugeBeforeAnyCallAndAnEmptyPolicyTag() {
    RetryBudget shared = RetryBudget.of(0.1, 3, time);
    QuellMicrometer.bindBudget(shared, registry);
    QuellMicrometer.bindBudget(shared, registry); // idempotent
    Gauge g = registry.find("quell.budget.tokens").tags("quell.budget", shared.name(), "quell.policy", "").gauge();
    assertThat(g.value()).isEqualTo(30.0);
    assertThat(registry.find("quell.budget.tokens").gauges()).hasSize(1);
    shared.trySpend();
    assertThat(g.value()).isCloseTo(29.0, within(1e-9));

    // a policy spending from it does not add a second gauge
    Resilience user = Resilience.DEFAULT.withName("user").withBudget(shared).withTimeSource(time)
        .withListener(QuellMicrometer.listener(registry));
    user.run(() -> "ok");
    assertThat(registry.find("quell.budget.tokens").gauges()).hasSize(1);
  }

  @Test
  void bindingAPolicyTagsItsBudgetAsItsFirstCallWould() {
    Resilience policy = inventory();
    QuellMicrometer.bindBudget(policy, registry);
    assertThat(registry.find("quell.budget.utilization").tags("quell.budget", "inventory", "quell.policy", "inventory")
        .gauge()).isNotNull();
    policy.run(() -> "ok");
    assertThat(registry.find("quell.budget.utilization").gauges()).hasSize(1);
    QuellMicrometer.bindBudget(RetryBudget.AUTOMATIC, registry);
    QuellMicrometer.bindBudget(RetryBudget.NONE, registry);
    assertThat(registry.find("quell.budget.utilization").gauges()).hasSize(1);
  }

  @Test
  void eventObjectsDeliveredThroughOnEventRecordTheSameAsTheObserverPath() {
    // a listener that wraps ours and forwards events (it is not itself an observer) still records
    MeterRegistry other = new SimpleMeterRegistry();
    var ours = QuellMicrometer.listener(other);
    Resilience policy = Resilience.DEFAULT.withName("wrapped").withTimeSource(time)
        .withBackoff(Backoff.constant(Duration.ofMillis(100)))
        .withListener(ours::onEvent);
    int[] n = new int[1];
    policy.run(() -> {
      if (n[0]++ == 0) {
        throw new IOException("flaky");
      }
      return "ok";
    });
    assertThat(other.find("quell.calls").tag("quell.outcome", "SUCCEEDED").counter().count()).isEqualTo(1);
    assertThat(other.find("quell.attempts").tag("kind", "retry").counter().count()).isEqualTo(1);
    assertThat(other.find("quell.call.duration").timer().totalTime(TimeUnit.MILLISECONDS)).isEqualTo(100.0);
    assertThat(other.find("quell.budget.utilization").tag("quell.budget", "wrapped").gauge()).isNotNull();
  }

  @Test
  void aRefusedCallsDurationIsWhatTheCallerWaitedTheGuardedPauseIncluded() {
    dev.quell.RetryBudget dry = dev.quell.RetryBudget.of(0.1, 0, time);
    assertThat(dry.trySpend()).isTrue(); // its only token
    Resilience policy = Resilience.DEFAULT.withName("refused").withTimeSource(time).withBudget(dry)
        .withListener(QuellMicrometer.listener(registry));
    policy.run(() -> {
      time.sleep(Duration.ofMillis(30));
      throw new IOException("down");
    });
    Timer refused = registry.find("quell.call.duration").tags("quell.outcome", "BUDGET_EXHAUSTED").timer();
    assertThat(refused.totalTime(TimeUnit.MILLISECONDS)).as("30 ms of attempt, then the 100 ms pause").isEqualTo(130.0);
  }
}
