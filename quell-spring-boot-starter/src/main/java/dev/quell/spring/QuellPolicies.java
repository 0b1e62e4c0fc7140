package dev.quell.spring;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.spring.internal.PolicyRegistry;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The application's policies, by name, as the {@code quell.*} properties describe them. A bean: inject
 * it where a policy must follow configuration refreshes.
 *
 * <pre>{@code
 * Stock stock = policies.policy("inventory").execute(() -> inventory.lookup(sku));
 * }</pre>
 *
 * <p><b>Refresh.</b> When the configuration is refreshed (Spring Cloud's {@code ContextRefresher}, which
 * {@code /actuator/refresh}, Spring Cloud Config and Kubernetes config watchers all go through; or
 * {@link #reload()}), every policy is rebuilt from the new properties. A rebuilt policy keeps its retry
 * budget, circuit breaker and limiters — the same live objects, pinned to the policy's name — unless
 * their own settings changed, so a refresh never hands a struggling dependency a full budget. New
 * properties with problems are rejected whole: the policies in force stay, and the problems are logged.
 *
 * <p>A {@code Resilience} injected as a bean ({@code @Qualifier("inventory") Resilience}) is the policy as
 * it was when your bean was made; it shares the live budget and breaker with every later rebuild, but not
 * the new settings. {@link #policy(String)}, {@link Resilient @Resilient} and the HTTP clients always use
 * the policy in force.
 *
 * <p>Thread-safe; {@link #policy(String)} is a map read.
 */
public final class QuellPolicies {
  private final PolicyRegistry registry;

  QuellPolicies(PolicyRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /**
   * The policy in force called {@code name}. A name not configured under {@code quell.policies} gets a
   * policy made of {@code quell.defaults} (on the {@code default} preset), built on first use and kept.
   */
  public Resilience policy(String name) {
    return registry.policy(name);
  }

  /** The names configured under {@code quell.policies}. */
  public Set<String> names() {
    return registry.configuredNames();
  }

  /** Every policy in use, by name: the configured ones, then those made of the defaults. A snapshot. */
  public Map<String, Resilience> policies() {
    return registry.policies();
  }

  /** The shared budgets in use ({@code quell.budgets.*} and names policies share), by name. */
  public Map<String, RetryBudget> sharedBudgets() {
    return registry.sharedBudgets();
  }

  /**
   * The per-host copies of {@code policy} the HTTP clients made (named {@code policy:host}, each with its
   * own budget, breaker and adaptive limit), by host, least recently used first. A snapshot.
   */
  public Map<String, Resilience> hostPolicies(String policy) {
    return registry.hostPolicies(policy);
  }

  /**
   * Binds the {@code quell.*} properties from the environment again and rebuilds every policy, keeping
   * the live budget, breaker and limiters of each whose settings for them did not change. Spring Cloud's
   * refresh calls it for you; call it yourself after changing the environment's property sources.
   *
   * @throws QuellPropertiesException when the new properties have problems; the policies in force stay
   */
  public void reload() {
    registry.reload();
  }

  /** The engine behind this facade, for the starter's own integrations. */
  PolicyRegistry registry() {
    return registry;
  }

  @Override
  public String toString() {
    return "QuellPolicies" + registry.policies().keySet();
  }
}
