package dev.quell.micrometer.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.internal.CallObserver;
import dev.quell.internal.TelemetryNames;
import dev.quell.micrometer.QuellMicrometer;
import dev.quell.test.VirtualTime;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.lang.ref.ReferenceQueue;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Breakers, limiters and measuring policies are watched weakly: a collected one takes its meters out
 * of the registry, counters of a group never go backwards when one of its members goes, and scope keys
 * that come and go cannot grow the registry without bound.
 */
class LiveMetersLifecycleTest {
  private final VirtualTime time = VirtualTime.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final RegistryBinding binding = RegistryBinding.of(registry);

  /**
   * Runs the GC until {@code done} holds, at most 50 times. Weak references are cleared by a full GC but
   * queued afterwards by the JVM's reference handler thread: each round waits (generously) until that
   * thread has queued a reference of our own cleared by the same GC, so a busy machine cannot outrun it.
   */
  private static boolean gcUntil(BooleanSupplier done) {
    ReferenceQueue<Object> queue = new ReferenceQueue<>();
    for (int i = 0; i < 50 && !done.getAsBoolean(); i++) {
      WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
      System.gc();
      try {
        queue.remove(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return done.getAsBoolean();
      }
      sentinel.clear();
    }
    return done.getAsBoolean();
  }

  private long meters(String prefix) {
    return registry.getMeters().stream().filter(m -> m.getId().getName().startsWith(prefix)).count();
  }

  private double isolations(String breaker) {
    FunctionCounter c = registry.find(TelemetryNames.BREAKER_TRANSITIONS).tag(TelemetryNames.TAG_BREAKER, breaker)
        .tag(TelemetryNames.TAG_STATE, "ISOLATED").functionCounter();
    return c.count();
  }

  @Test
  void theMetersOfACollectedBreakerLeaveTheRegistry() {
    CircuitBreaker kept = CircuitBreaker.of("kept", CircuitBreaker.Config.DEFAULT, time);
    CircuitBreaker gone = CircuitBreaker.of("gone", CircuitBreaker.Config.DEFAULT, time);
    QuellMicrometer.bindBreaker(kept, registry);
    QuellMicrometer.bindBreaker(gone, registry);
    QuellMicrometer.bindBreaker(gone, registry); // once is enough
    assertThat(meters("quell.breaker.")).isEqualTo(2 * 10); // 4 states, 4 transitions, refusals, failure rate
    binding.breakers().simulateCollected(gone);
    binding.expunge(registry);
    assertThat(meters("quell.breaker.")).isEqualTo(10);
    assertThat(registry.find(TelemetryNames.BREAKER_REFUSALS).tag(TelemetryNames.TAG_BREAKER, "gone").functionCounter())
        .isNull();
    assertThat(registry.find(TelemetryNames.BREAKER_REFUSALS).tag(TelemetryNames.TAG_BREAKER, "kept").functionCounter())
        .isNotNull();
  }

  @Test
  void breakersOfOneNameShareMetersWhoseCountersNeverGoBackwards() {
    CircuitBreaker old = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT, time);
    CircuitBreaker rebuilt = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT, time); // a reload
    QuellMicrometer.bindBreaker(old, registry);
    QuellMicrometer.bindBreaker(rebuilt, registry);
    assertThat(meters("quell.breaker.")).isEqualTo(10);
    old.isolate();
    old.reset();
    old.isolate();
    rebuilt.isolate();
    assertThat(isolations("inventory")).isEqualTo(3);
    // the state gauges read the one watched last
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).tag(TelemetryNames.TAG_STATE, "ISOLATED").gauge().value())
        .isEqualTo(1);
    rebuilt.reset();
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).tag(TelemetryNames.TAG_STATE, "CLOSED").gauge().value())
        .isEqualTo(1);

    binding.breakers().simulateCollected(old);
    binding.expunge(registry);
    assertThat(isolations("inventory")).as("the collected one's count stays in").isEqualTo(3);
    rebuilt.isolate();
    assertThat(isolations("inventory")).isEqualTo(4);
    binding.breakers().simulateCollected(rebuilt);
    binding.expunge(registry);
    assertThat(meters("quell.breaker.")).isZero();
  }

  @Test
  void limiterGaugesLeaveWithTheirLimiter() {
    Limiter gone = Limiter.concurrency(3);
    QuellMicrometer.bindLimiter(gone, registry);
    assertThat(meters("quell.limiter.")).isEqualTo(5); // limit, in flight, available, queued, rejection probability
    binding.limiters().simulateCollected(gone);
    binding.expunge(registry);
    assertThat(meters("quell.limiter.")).isZero();
  }

  private WeakReference<Resilience> measuredPolicyBoundAndDropped() {
    Resilience temporary = Resilience.DEFAULT.withName("temporary").withTimeSource(time)
        .withMeasuredTiming(MeasuredTiming.multipleOfP95(2))
        .withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.adaptive());
    QuellMicrometer.bind(temporary, registry);
    return new WeakReference<>(temporary);
  }

  @Test
  void watchingDoesNotKeepAGarbagePolicyOrItsBreakerAlive() {
    WeakReference<Resilience> policy = measuredPolicyBoundAndDropped();
    assertThat(meters("quell.attempt.")).isEqualTo(2);
    assertThat(meters("quell.breaker.")).isEqualTo(10);
    assertThat(gcUntil(() -> {
      binding.expunge(registry);
      return policy.get() == null && binding.timings().watched() == 0 && binding.breakers().watched() == 0
          && binding.policies().watched() == 0;
    })).as("the policy, its breaker and its timing were collected and forgotten").isTrue();
    assertThat(meters("quell.attempt.")).isZero();
    assertThat(meters("quell.breaker.")).isZero();
    // the limiter given to the policy is shared, held by nothing else here: collected too
    assertThat(gcUntil(() -> {
      binding.expunge(registry);
      return binding.limiters().watched() == 0;
    })).isTrue();
    assertThat(meters("quell.limiter.")).isZero();
  }

  @Test
  void aScopeKeyedByAnUnboundedValueKeepsTheBreakerAndLimiterMetersBounded() {
    // each key gets a policy "users:<key>" with its own breaker and adaptive limit; the scope keeps 10
    var listener = QuellMicrometer.listener(registry);
    PolicyScope<Integer> byUser = PolicyScope.of(Resilience.DEFAULT.withName("users").withTimeSource(time)
        .withBreaker(CircuitBreaker.Config.DEFAULT).withLimiter(Limiter.adaptive()).withListener(listener), 10);
    CallObserver observer = (CallObserver) listener;
    for (int user = 0; user < 500; user++) {
      byUser.run(user, () -> "ok");
      observer.policyCalled(byUser.policy(user)); // what the core does at each call's end
      if (user % 100 == 99) {
        assertThat(gcUntil(() -> {
          binding.expunge(registry);
          return binding.breakers().watched() <= 10 && binding.limiters().watched() <= 10;
        })).as("the breakers and limits of forgotten keys were collected").isTrue();
        assertThat(meters("quell.breaker.")).isLessThanOrEqualTo(10 * 10);
        assertThat(meters("quell.limiter.")).isLessThanOrEqualTo(10 * 5);
      }
    }
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).tag(TelemetryNames.TAG_BREAKER, "users:499")
        .tag(TelemetryNames.TAG_POLICY, "users:499").tag(TelemetryNames.TAG_STATE, "CLOSED").gauge().value())
        .isEqualTo(1);
    assertThat(registry.find(TelemetryNames.LIMITER_LIMIT).tag(TelemetryNames.TAG_LIMITER, "users:499")
        .tag(TelemetryNames.TAG_KIND, "adaptive").tag(TelemetryNames.TAG_POLICY, "users:499").gauge()).isNotNull();
    // per key held: 10 breaker meters, 5 limiter gauges, 2 budget gauges, its calls, attempts and durations
    assertThat(registry.getMeters().size()).isLessThanOrEqualTo(10 * (10 + 5 + 2 + 4));
  }
}
