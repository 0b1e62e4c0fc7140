package dev.quell.spring.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Draining;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.internal.TelemetryNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The actuator endpoint {@code quell}: every policy in use with its settings, its live retry budget
 * (tokens, capacity, utilization), circuit breaker (state and window) and limiters (limit, in flight,
 * available; an adaptive throttle's rejection probability), and its per-host copies; the shared budgets;
 * whether the process is draining.
 * {@code /actuator/quell/{name}} shows one policy; {@code POST /actuator/quell/{name}} isolates or resets its
 * circuit breaker (see {@link #breaker(String, String)}).
 */
@Endpoint(id = "quell")
public final class QuellEndpoint {
  private final PolicyRegistry registry;

  public QuellEndpoint(PolicyRegistry registry) {
    this.registry = registry;
  }

  /** Everything. */
  @ReadOperation
  public Map<String, Object> quell() {
    Map<String, Object> out = new LinkedHashMap<>();
    Map<String, Object> policies = new LinkedHashMap<>();
    registry.policies().forEach((name, policy) -> policies.put(name, policy(name, policy)));
    out.put("policies", policies);
    Map<String, Object> budgets = new LinkedHashMap<>();
    registry.sharedBudgets().forEach((name, budget) -> budgets.put(name, budget(budget)));
    out.put("budgets", budgets);
    Map<String, Object> draining = new LinkedHashMap<>();
    draining.put("draining", Draining.isDraining());
    draining.put("graceLeft", Draining.graceLeft().map(Duration::toString).orElse(null));
    out.put("draining", draining);
    out.put("inFlight", registry.inFlight().count());
    return out;
  }

  /** One policy, or nothing (404) for a name not in use. */
  @ReadOperation
  public @Nullable Map<String, Object> policy(@Selector String name) {
    Resilience policy = registry.policies().get(name);
    return policy == null ? null : policy(name, policy);
  }

  /**
   * Isolates or resets the circuit breaker of policy {@code name} — or of one of its per-host copies,
   * {@code name:host}: {@code POST /actuator/quell/{name}} with {@code {"breaker": "isolate"}} or
   * {@code {"breaker": "reset"}}. Answers the breaker as it is then; 404 for a name not in use or a policy
   * without a breaker; 400 for another action.
   */
  @WriteOperation
  public WebEndpointResponse<Map<String, Object>> breaker(@Selector String name, String breaker) {
    Resilience policy = registry.policies().get(name);
    int colon = name.indexOf(':');
    if (policy == null && colon > 0) {
      policy = registry.hostPolicies(name.substring(0, colon)).get(name.substring(colon + 1));
    }
    CircuitBreaker b = policy == null ? null : policy.breaker().orElse(null);
    if (b == null) {
      return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
    }
    switch (breaker.trim().toLowerCase(Locale.ROOT)) {
      case "isolate" -> b.isolate();
      case "reset" -> b.reset();
      default -> throw new InvalidEndpointRequestException("breaker was \"" + breaker + "\": must be isolate or reset",
          "breaker must be isolate or reset");
    }
    return new WebEndpointResponse<>(breaker(b));
  }

  private Map<String, Object> policy(String name, Resilience policy) {
    Map<String, Object> out = guards(policy);
    out.put("attempts", policy.attempts());
    out.put("deadline", policy.deadline().map(Duration::toString).orElse(null));
    out.put("attemptTimeout", policy.attemptTimeout().map(Duration::toString).orElse(null));
    out.put("hedge", policy.hedge().map(Object::toString).orElse(null));
    out.put("measuredTiming", policy.timing().map(Object::toString).orElse(null));
    Map<String, Resilience> hosts = registry.hostPolicies(name);
    if (!hosts.isEmpty()) {
      Map<String, Object> byHost = new LinkedHashMap<>();
      hosts.forEach((host, p) -> byHost.put(host, guards(p)));
      out.put("hosts", byHost);
    }
    return out;
  }

  private static Map<String, Object> guards(Resilience policy) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("name", policy.name());
    out.put("budget", budget(policy.budget()));
    out.put("breaker", policy.breaker().map(QuellEndpoint::breaker).orElse(null));
    List<Object> limiters = new ArrayList<>();
    for (Limiter l : policy.limiters()) {
      limiters.add(limiter(l));
    }
    out.put("limiters", limiters);
    return out;
  }

  static Map<String, Object> budget(RetryBudget budget) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("name", budget.name());
    out.put("kind", kind(budget));
    if (!budget.isUnbounded()) {
      out.put("tokens", round(budget.tokens()));
      out.put("capacity", round(budget.capacity()));
      out.put("utilization", round(budget.utilization()));
      out.put("retryAfter", budget.retryAfter().map(Duration::toString).orElse(null));
    }
    return out;
  }

  /** The kind of {@code budget}, as the endpoint and the properties call it. */
  public static String kind(RetryBudget budget) {
    switch (budget.getClass().getSimpleName()) {
      case "TokenBucket":
        return "token-bucket";
      case "FeedbackThrottle":
        return "feedback";
      case "ReplenishingAllowance":
        return "replenishing";
      case "ConcurrentAllowance":
        return "concurrent";
      case "Unbounded":
        return "none";
      default:
        return budget.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }
  }

  private static Map<String, Object> breaker(CircuitBreaker breaker) {
    CircuitBreaker.Metrics m = breaker.metrics();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("name", breaker.name());
    out.put("state", m.state().name());
    out.put("calls", m.calls());
    out.put("failedCalls", m.failedCalls());
    out.put("slowCalls", m.slowCalls());
    out.put("failureRate", round(m.failureRate()));
    out.put("refusals", m.refusals());
    out.put("retryAfter", breaker.retryAfter().map(Duration::toString).orElse(null));
    return out;
  }

  private static Map<String, Object> limiter(Limiter limiter) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("name", limiter.name());
    out.put("kind", TelemetryNames.limiterKind(limiter));
    out.put("limit", limiter.limit());
    out.put("inFlight", limiter.inFlight());
    out.put("available", limiter.available());
    out.put("queued", limiter.queued());
    if (out.get("kind").equals("throttle")) {
      // a throttle bounds no count (its limit is the largest int): what it does is refuse this share of CRITICAL first attempts
      out.put("rejectionProbability", round(limiter.rejectionProbability()));
    }
    return out;
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
