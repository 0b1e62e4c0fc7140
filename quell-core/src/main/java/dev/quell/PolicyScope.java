package dev.quell;

import dev.quell.internal.Problems;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One template policy, and a separate automatic retry budget for each key — a host, a tenant, a
 * method — so that a storm against one key is refused without refusing retries to the others.
 *
 * <pre>{@code
 * static final PolicyScope<String> BY_HOST = PolicyScope.of(Resilience.HTTP.withName("catalog"));
 *
 * HttpResponse<String> r = BY_HOST.execute(uri.getHost(), () -> http.send(request, ofString()));
 * }</pre>
 *
 * <p>Each key gets a copy of the template named {@code "template-name:key"}, whose automatic budget
 * carries that name. A template with an explicit budget (shared, or {@link RetryBudget#NONE}) gives
 * every key that same budget. The number of keys is bounded (1024 by default): when a new key would
 * pass the bound, the least recently used key is forgotten, so a scope keyed by something unbounded
 * (a user id, a URL) cannot grow without limit. A forgotten key that comes back starts with a full
 * budget.
 *
 * <p>Thread-safe. Looking a key up takes a short lock.
 */
public final class PolicyScope<K> {
  /** The default bound on the number of keys. */
  public static final int DEFAULT_MAX_KEYS = 1024;

  private final Resilience template;
  private final int maxKeys;
  private final LinkedHashMap<K, Resilience> policies;

  private PolicyScope(Resilience template, int maxKeys) {
    this.template = Objects.requireNonNull(template, "template");
    new Problems().require(maxKeys >= 1, "scope maxKeys", maxKeys, "must be at least 1").throwIfAny();
    this.maxKeys = maxKeys;
    this.policies = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<K, Resilience> eldest) {
        return size() > PolicyScope.this.maxKeys;
      }
    };
  }

  /** A scope over {@code template} holding at most {@value #DEFAULT_MAX_KEYS} keys. */
  public static <K> PolicyScope<K> of(Resilience template) {
    return new PolicyScope<>(template, DEFAULT_MAX_KEYS);
  }

  /** A scope over {@code template} holding at most {@code maxKeys} keys, forgetting the least recently used. */
  public static <K> PolicyScope<K> of(Resilience template, int maxKeys) {
    return new PolicyScope<>(template, maxKeys);
  }

  /** The template policy. */
  public Resilience template() {
    return template;
  }

  /** The policy for {@code key}: the template, named {@code template:key}, with the key's own automatic budget. */
  public Resilience policy(K key) {
    Objects.requireNonNull(key, "key");
    synchronized (policies) {
      Resilience p = policies.get(key);
      if (p == null) {
        String name = template.name() + ":" + key;
        p = template.withName(name);
        if (p.limiters().stream().anyMatch(PolicyScope::perKey)) {
          // an adaptive limit learns one dependency's capacity, a throttle what it accepts: each key
          // learns its own
          p = p.with(s -> {
            s.clearLimiters();
            for (Limiter l : template.limiters()) {
              s.limiter(perKey(l) ? l.copy(name) : l);
            }
          });
        }
        policies.put(key, p);
      }
      return p;
    }
  }

  /** Runs {@code work} under the policy for {@code key}; see {@link Resilience#execute(Callable)}. */
  public <T> @Nullable T execute(K key, Callable<T> work) throws Exception {
    return policy(key).execute(work);
  }

  /** Runs {@code work} under the policy for {@code key}; see {@link Resilience#run(Callable)}. */
  public <T> Outcome<T> run(K key, Callable<T> work) {
    return policy(key).run(work);
  }

  /** Runs async {@code work} under the policy for {@code key}; see {@link Resilience#executeAsync(Supplier)}. */
  public <T> CompletableFuture<T> executeAsync(K key, Supplier<? extends CompletionStage<T>> work) {
    return policy(key).executeAsync(work);
  }

  /** A snapshot of the live budget of every key held now, least recently used first. */
  public Map<K, RetryBudget> budgets() {
    synchronized (policies) {
      Map<K, RetryBudget> view = new LinkedHashMap<>();
      policies.forEach((k, p) -> view.put(k, p.budget()));
      return view;
    }
  }

  /**
   * A snapshot of the live circuit breaker of every key held now, least recently used first: each
   * key's own when the template was given a {@link CircuitBreaker.Config}, the one shared breaker
   * when it was given a live one. Empty when the template has no breaker.
   */
  public Map<K, CircuitBreaker> breakers() {
    synchronized (policies) {
      Map<K, CircuitBreaker> view = new LinkedHashMap<>();
      policies.forEach((k, p) -> p.breaker().ifPresent(b -> view.put(k, b)));
      return view;
    }
  }

  /**
   * A snapshot of each key's own adaptive limit, least recently used first (empty when the template
   * has no adaptive limiter). Rate limiters and bulkheads are shared by every key, as given.
   */
  public Map<K, Limiter> adaptiveLimits() {
    synchronized (policies) {
      Map<K, Limiter> view = new LinkedHashMap<>();
      policies.forEach((k, p) -> p.limiters().stream().filter(l -> l instanceof AdaptiveLimiter).findFirst()
          .ifPresent(l -> view.put(k, l)));
      return view;
    }
  }

  /**
   * A snapshot of each key's own adaptive throttle, least recently used first (empty when the
   * template has none).
   */
  public Map<K, Limiter> throttles() {
    synchronized (policies) {
      Map<K, Limiter> view = new LinkedHashMap<>();
      policies.forEach((k, p) -> p.limiters().stream().filter(l -> l instanceof AdaptiveThrottle).findFirst()
          .ifPresent(l -> view.put(k, l)));
      return view;
    }
  }

  /** Limiters that learn one dependency's behaviour, so each key gets its own copy. */
  private static boolean perKey(Limiter l) {
    return l instanceof AdaptiveLimiter || l instanceof AdaptiveThrottle;
  }

  /** How many keys are held now (at most the bound). */
  public int size() {
    synchronized (policies) {
      return policies.size();
    }
  }

  /** The bound on the number of keys. */
  public int maxKeys() {
    return maxKeys;
  }

  @Override
  public String toString() {
    return "PolicyScope[" + template.name() + ", keys=" + size() + "/" + maxKeys + "]";
  }
}
