package dev.quell.http.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.internal.Internal;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * A client's policies per scope key (by default per host): the template given by the user, its
 * classifier made to read the client's responses ({@link ResponseClassifier}), and the core's
 * {@link PolicyScope} holding one copy per key. The rules (which copy, eviction, budgets per key) are
 * the core's; this only names the key of a request.
 *
 * @param <Q> the client's request type
 */
@Internal
public final class HostPolicies<Q> {
  private final Resilience policy;
  private final ResponseClassifier.Access access;
  private final Function<? super Q, String> scopeKey;
  private final PolicyScope<String> scope;

  private HostPolicies(Resilience policy, ResponseClassifier.Access access, Function<? super Q, String> scopeKey, int maxKeys) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.access = Objects.requireNonNull(access, "access");
    this.scopeKey = Objects.requireNonNull(scopeKey, "scopeKey");
    this.scope = PolicyScope.of(policy.withClassifier(ResponseClassifier.wrap(policy.classifier(), access)), maxKeys);
  }

  /**
   * The policies of {@code policy}, one per key {@code scopeKey} gives a request, at most {@code maxKeys}
   * (the least recently used forgotten first), each reading responses through {@code access}.
   */
  public static <Q> HostPolicies<Q> of(Resilience policy, ResponseClassifier.Access access,
      Function<? super Q, String> scopeKey, int maxKeys) {
    return new HostPolicies<>(policy, access, scopeKey, maxKeys);
  }

  /** Fresh policies keyed by {@code scopeKey}. */
  public HostPolicies<Q> withScopeKey(Function<? super Q, String> scopeKey) {
    return new HostPolicies<>(policy, access, scopeKey, scope.maxKeys());
  }

  /** Fresh policies, at most {@code maxKeys} of them. */
  public HostPolicies<Q> withMaxKeys(int maxKeys) {
    return new HostPolicies<>(policy, access, scopeKey, maxKeys);
  }

  /** The policy as the user gave it. */
  public Resilience template() {
    return policy;
  }

  /** The policy of {@code request}'s key. */
  public Resilience policyFor(Q request) {
    String key = scopeKey.apply(request);
    if (key == null) {
      throw new NullPointerException("the scope key function returned null for " + request);
    }
    return scope.policy(key);
  }

  /** The policy of {@code key}. */
  public Resilience policy(String key) {
    return scope.policy(key);
  }

  /** A snapshot of each key's live budget, least recently used first. */
  public Map<String, RetryBudget> budgets() {
    return scope.budgets();
  }

  /** A snapshot of each key's live breaker, least recently used first. */
  public Map<String, CircuitBreaker> breakers() {
    return scope.breakers();
  }

  /** A snapshot of each key's adaptive limit, least recently used first. */
  public Map<String, Limiter> adaptiveLimits() {
    return scope.adaptiveLimits();
  }

  /** How many keys are held. */
  public int size() {
    return scope.size();
  }
}
