package dev.quell.spring.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Draining;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.spring.QuellProperties;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Quell's health: budgets near exhaustion (utilization at or above {@code quell.health.budget-threshold})
 * and breakers not closed, as details. Off unless {@code management.health.quell.enabled=true}; its status
 * is {@code UP} unless {@code quell.health.degraded-status} says what to report while something is
 * degraded. It belongs in no liveness group: a dependency in trouble is no reason to restart this process
 * (which would only add a cold start to the outage). Put it in readiness, if anywhere.
 */
public final class QuellHealthIndicator implements HealthIndicator {
  private final PolicyRegistry registry;

  public QuellHealthIndicator(PolicyRegistry registry) {
    this.registry = registry;
  }

  @Override
  public Health health() {
    QuellProperties.Health settings = registry.properties().getHealth();
    Map<String, Object> budgets = new LinkedHashMap<>();
    Map<String, Object> breakers = new LinkedHashMap<>();
    Map<Object, Boolean> seen = new IdentityHashMap<>();
    for (Resilience p : registry.policies().values()) {
      look(p, settings, budgets, breakers, seen);
    }
    for (String policy : registry.policiesWithHosts()) {
      for (Resilience p : registry.hostPolicies(policy).values()) {
        look(p, settings, budgets, breakers, seen);
      }
    }
    registry.sharedBudgets().values().forEach(b -> budget(b, settings, budgets, seen));
    boolean degraded = !budgets.isEmpty() || !breakers.isEmpty();
    Health.Builder health = degraded ? Health.status(new Status(settings.getDegradedStatus())) : Health.up();
    return health
        .withDetail("budgetsNearExhaustion", budgets)
        .withDetail("breakersNotClosed", breakers)
        .withDetail("draining", Draining.isDraining())
        .build();
  }

  private static void look(Resilience p, QuellProperties.Health settings, Map<String, Object> budgets,
      Map<String, Object> breakers, Map<Object, Boolean> seen) {
    budget(p.budget(), settings, budgets, seen);
    p.breaker().ifPresent(b -> {
      if (seen.put(b, Boolean.TRUE) == null && b.state() != CircuitBreaker.State.CLOSED) {
        breakers.put(b.name(), b.state().name());
      }
    });
  }

  private static void budget(RetryBudget b, QuellProperties.Health settings, Map<String, Object> budgets, Map<Object, Boolean> seen) {
    if (seen.put(b, Boolean.TRUE) == null && !b.isUnbounded() && b.utilization() >= settings.getBudgetThreshold()) {
      budgets.put(b.name(), Math.round(b.utilization() * 1000) / 1000.0);
    }
  }
}
