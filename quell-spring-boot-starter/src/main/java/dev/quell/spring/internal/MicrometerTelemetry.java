package dev.quell.spring.internal;

import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.micrometer.QuellMicrometer;
import dev.quell.micrometer.internal.RegistryBinding;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;

/** Quell's meters in the application's registry: every policy gets the listener, and its budget,
 * breaker, limiters and timing their meters as soon as it is built; every shared budget its gauges. */
public final class MicrometerTelemetry implements Telemetry {
  private final MeterRegistry registry;
  private final List<ResilienceListener> listeners;

  public MicrometerTelemetry(MeterRegistry registry) {
    this.registry = registry;
    this.listeners = List.of(QuellMicrometer.listener(registry));
  }

  @Override
  public List<ResilienceListener> listeners() {
    return listeners;
  }

  @Override
  public void built(Resilience policy, String configuredName) {
    for (Limiter limiter : policy.limiters()) {
      if (limiter.name().equals(PolicyFactory.throttleName(policy.name()))) {
        // the policy's own throttle (each host copy's own), named apart from its adaptive limit: its policy is this one
        RegistryBinding.of(registry).watchLimiter(limiter, policy.name(), registry);
      } else if (!limiter.name().equals(policy.name())) {
        // a rate or concurrency limit, shared by the policy's per-host copies: its policy is the configured one
        RegistryBinding.of(registry).watchLimiter(limiter, configuredName, registry);
      }
    }
    QuellMicrometer.bind(policy, registry); // budget, breaker, limiters and timing before the first call
  }

  @Override
  public void fallback(String policy, FailedCall call, boolean succeeded) {
    Counter.builder("quell.fallbacks")
        .description("Calls of @Resilient methods answered by their fallback, by why the call failed and how the fallback did")
        .tags("quell.policy", policy, "quell.outcome", call.reason().name(), "result", succeeded ? "succeeded" : "failed")
        .register(registry).increment();
  }

  @Override
  public void shared(RetryBudget budget) {
    QuellMicrometer.bindBudget(budget, registry);
  }
}
