package dev.quell.spring.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import dev.quell.http.internal.ResponseClassifier;
import dev.quell.spring.QuellProperties;
import dev.quell.spring.QuellProperties.Preset;
import dev.quell.spring.QuellPropertiesException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The policies of one application, built from its {@code quell.*} properties and rebuilt by
 * {@link #reload()}. A rebuild keeps every live object whose settings did not change (see {@link Pins}),
 * and takes effect whole or not at all.
 *
 * <p>Three sets of policies: those configured under {@code quell.policies} (built at once, so bad values
 * stop the application), those used by name without being configured (a {@code @Resilient} name, the
 * HTTP clients' policy: built from the defaults on first use), and each policy's per-host copies for the
 * HTTP clients (built on a host's first request, at most {@code quell.http.client.max-hosts} per policy).
 *
 * <p>Thread-safe. Looking a policy up is a map read; building one takes this object's lock.
 */
public final class PolicyRegistry {
  private static final Log LOG = LogFactory.getLog("dev.quell.spring");

  /** What one successful build produced; replaced whole. */
  private record State(QuellProperties properties, Map<String, Resilience> configured, Map<String, RetryBudget> shared,
      long generation) {}

  private final Environment environment;
  private final Telemetry telemetry;
  private final @Nullable TimeSource time;
  private final Pins pins = new Pins();
  private final InFlight inFlight = new InFlight();
  private final Map<String, Resilience> implicit = new ConcurrentHashMap<>();
  private final Map<String, HostScope> hosts = new ConcurrentHashMap<>();
  private volatile State state;
  /** Deferred breakers that closed, by identity, with when they were first seen closed (under this object's lock). */
  private final Map<Object, Long> closedSince = new IdentityHashMap<>();
  private volatile long settleNotBefore = TimeSource.system().nanoTime();
  private volatile int closedSeen;

  /**
   * Builds every configured policy from {@code environment}.
   *
   * @throws QuellPropertiesException listing every problem with the properties
   */
  public PolicyRegistry(Environment environment, Telemetry telemetry) {
    this(environment, telemetry, null);
  }

  /**
   * As {@link #PolicyRegistry(Environment, Telemetry)}, every policy on {@code time} when it is given (the
   * application's {@code TimeSource} bean: a test's virtual clock).
   */
  public PolicyRegistry(Environment environment, Telemetry telemetry, @Nullable TimeSource time) {
    this.environment = Objects.requireNonNull(environment, "environment");
    this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
    this.time = time;
    this.state = build(bind(), unknownProperties(), 1);
    announce(state);
  }

  private QuellProperties bind() {
    return Binder.get(environment).bindOrCreate("quell", Bindable.of(QuellProperties.class));
  }

  /**
   * The {@code quell.*} properties that name no setting — a misspelt {@code quell.policies.x.atempts} would
   * otherwise be ignored without a word. Environment variables are left out: any variable whose name starts
   * with {@code QUELL_} reads as a {@code quell.*} property, and the environment is not the application's
   * to keep tidy.
   */
  private List<ConfigurationProperty> unknownProperties() {
    BindHandler strict = new NoUnboundElementsBindHandler(BindHandler.DEFAULT,
        source -> !(source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource));
    try {
      Binder.get(environment).bind("quell", Bindable.of(QuellProperties.class), strict);
      return List.of();
    } catch (BindException e) {
      if (e.getCause() instanceof UnboundConfigurationPropertiesException unbound) {
        return List.copyOf(unbound.getUnboundProperties());
      }
      return List.of(); // a value of the wrong type: bind() has already reported it in Spring Boot's words
    }
  }

  /**
   * Binds the {@code quell.*} properties again and rebuilds every policy. Budgets, breakers and limiters
   * whose settings did not change are kept; those whose settings changed take the old ones' state over
   * (see {@link Carry}).
   *
   * @throws QuellPropertiesException when the new properties have problems; the policies in force stay
   */
  public synchronized void reload() {
    State next = build(bind(), unknownProperties(), state.generation() + 1);
    state = next;
    announce(next);
  }

  /** Builds everything from {@code properties}; commits the pins only when nothing failed. */
  private synchronized State build(QuellProperties properties, List<ConfigurationProperty> unknown, long generation) {
    ConfigProblems problems = new ConfigProblems(PropertyOrigins.of(environment));
    unknown.forEach(problems::unknown);
    Pins.Session session = pins.session();
    PolicyFactory factory = new PolicyFactory(properties, session, problems, telemetry.listeners(), time);
    factory.declareSharedBudgets();
    Map<String, Resilience> configured = new LinkedHashMap<>();
    properties.getPolicies().forEach((name, own) -> {
      Resilience p = factory.build(name, own, name, name, fallback(properties, name));
      if (p != null) {
        configured.put(name, p);
      }
    });
    // the defaults are checked even when no policy is configured: every implicit policy is made of them
    new PolicyFactory(properties, new Pins().session(), problems, List.of()).build("defaults", null, "defaults", "defaults",
        Preset.DEFAULT);
    properties.getConfigs().forEach((name, template) ->
        new PolicyFactory(properties, new Pins().session(), problems, List.of()).checkTemplate(name, template));
    Map<String, Resilience> rebuiltImplicit = new LinkedHashMap<>();
    for (String name : implicitNames(properties)) {
      if (!configured.containsKey(name)) {
        Resilience p = factory.build(name, null, name, name, fallback(properties, name));
        if (p != null) {
          rebuiltImplicit.put(name, p);
        }
      }
    }
    if (properties.getHttp().getClient().getMaxHosts() < 1) {
      problems.add("quell.http.client.max-hosts", properties.getHttp().getClient().getMaxHosts(), "must be at least 1");
    }
    double threshold = properties.getHealth().getBudgetThreshold();
    if (!(threshold > 0 && threshold <= 1)) {
      problems.add("quell.health.budget-threshold", threshold, "must be in (0, 1]");
    }
    if (properties.getDraining().getGrace().isNegative()) {
      problems.add("quell.draining.grace", properties.getDraining().getGrace(), "must be zero or positive");
    }
    if (properties.getDefaults().getBaseConfig() != null) {
      problems.add("quell.defaults.base-config", properties.getDefaults().getBaseConfig(),
          "does not apply to quell.defaults: every policy inherits them already; name a template on a policy");
    }
    if (properties.getEvents().getSize() < 0) {
      problems.add("quell.events.size", properties.getEvents().getSize(), "must be 0 or more");
    }
    if (properties.getDraining().getAnswerTime().isNegative()) {
      problems.add("quell.draining.answer-time", properties.getDraining().getAnswerTime(), "must be zero or positive");
    }
    problems.throwIfAny();
    session.commit();
    implicit.keySet().retainAll(rebuiltImplicit.keySet());
    implicit.putAll(rebuiltImplicit);
    return new State(properties, Collections.unmodifiableMap(configured),
        Collections.unmodifiableMap(new LinkedHashMap<>(factory.sharedBudgets())), generation);
  }

  private Set<String> implicitNames(QuellProperties properties) {
    Set<String> names = new java.util.LinkedHashSet<>(implicit.keySet());
    if (properties.getHttp().getClient().isEnabled()) {
      names.add(properties.getHttp().getClient().getPolicy());
    }
    return names;
  }

  private static Preset fallback(QuellProperties properties, String name) {
    return name.equals(properties.getHttp().getClient().getPolicy()) ? Preset.HTTP : Preset.DEFAULT;
  }

  private void announce(State s) {
    s.shared().values().forEach(telemetry::shared);
    s.configured().forEach((name, p) -> telemetry.built(p, name));
    implicit.forEach((name, p) -> telemetry.built(p, name));
  }

  // ---------------------------------------------------------------------------------------- deferred changes

  /**
   * A breaker that was open, half-open or isolated when its settings changed is kept until it has closed
   * and ramped traffic back (its old {@code ramp}), and an adaptive throttle that was refusing until it
   * refuses nothing; then the policies are rebuilt from the properties in force, and it is replaced by one
   * with the new settings. Asked on every lookup: while nothing is deferred that is one volatile read;
   * while a deferred breaker is still open, one volatile read each; while a deferred throttle still
   * refuses, one reading of its probability.
   */
  private void settleDeferred() {
    if (!pins.hasDeferred()) {
      return;
    }
    int closed = 0;
    boolean throttleDone = false;
    for (Object live : pins.deferred()) {
      if (live instanceof CircuitBreaker b && b.state() == CircuitBreaker.State.CLOSED) {
        closed++;
      } else if (live instanceof Limiter l && !Carry.stillRefusing(l)) {
        throttleDone = true;
      }
    }
    // the lock only when one has closed since the last look, or the earliest ramp seen then is over
    if (throttleDone || closed > 0 && (closed != closedSeen || TimeSource.system().nanoTime() - settleNotBefore >= 0)) {
      settleDeferredLocked();
    }
  }

  private synchronized void settleDeferredLocked() {
    long now = TimeSource.system().nanoTime();
    List<Object> deferred = pins.deferred();
    closedSince.keySet().removeIf(b -> deferred.stream().noneMatch(d -> d == b));
    boolean ready = false;
    long notBefore = Long.MAX_VALUE;
    boolean throttleReady = false;
    for (Object live : deferred) {
      if (live instanceof Limiter l && !Carry.stillRefusing(l)) {
        ready = true;
        throttleReady = true;
        pins.release(l);
        continue;
      }
      if (live instanceof CircuitBreaker b) {
        if (b.state() != CircuitBreaker.State.CLOSED) {
          closedSince.remove(b);
          continue;
        }
        // (a ramp of centuries is capped, so that the sum cannot wrap round)
        long readyAt = closedSince.computeIfAbsent(b, k -> now) + Math.min(saturatedNanos(b.config().ramp()), Long.MAX_VALUE / 4);
        if (now - readyAt >= 0) {
          ready = true;
          pins.release(b);
          closedSince.remove(b);
        } else if (notBefore == Long.MAX_VALUE || readyAt - notBefore < 0) {
          notBefore = readyAt;
        }
      }
    }
    settleNotBefore = ready || notBefore == Long.MAX_VALUE ? now : notBefore;
    closedSeen = closedSince.size();
    if (ready) {
      State next = build(state.properties(), List.of(), state.generation() + 1);
      state = next;
      announce(next);
      LOG.info(throttleReady
          ? "quell.throttle.settings-applied: a throttle kept across a refresh refuses nothing now; its new settings apply"
          : "quell.breaker.settings-applied: a breaker kept open across a refresh has closed; its new settings apply now");
    }
  }

  private static long saturatedNanos(java.time.Duration d) {
    return d.compareTo(java.time.Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : d.toNanos();
  }

  // ------------------------------------------------------------------------------------------------ reading

  /**
   * The policy called {@code name}: the configured one, or else one made of the defaults (built on first
   * use and rebuilt with the others).
   */
  public Resilience policy(String name) {
    settleDeferred();
    Resilience p = state.configured().get(name);
    if (p != null) {
      return p;
    }
    p = implicit.get(name);
    return p != null ? p : buildImplicit(name);
  }

  private synchronized Resilience buildImplicit(String name) {
    Objects.requireNonNull(name, "name");
    State s = state;
    Resilience p = s.configured().containsKey(name) ? s.configured().get(name) : implicit.get(name);
    if (p != null) {
      return p;
    }
    ConfigProblems problems = new ConfigProblems(PropertyOrigins.of(environment));
    Pins.Session session = pins.session();
    p = new PolicyFactory(s.properties(), session, problems, telemetry.listeners(), time)
        .build(name, null, name, name, fallback(s.properties(), name));
    problems.throwIfAny();
    session.commit();
    implicit.put(name, Objects.requireNonNull(p));
    telemetry.built(p, name);
    return p;
  }

  /** The names under {@code quell.policies}. */
  public Set<String> configuredNames() {
    return state.configured().keySet();
  }

  /** Every policy in use by name: configured ones first, then those made of the defaults. */
  public Map<String, Resilience> policies() {
    Map<String, Resilience> all = new LinkedHashMap<>(state.configured());
    implicit.forEach(all::putIfAbsent);
    return Collections.unmodifiableMap(all);
  }

  /** The shared budgets in use, by name. */
  public Map<String, RetryBudget> sharedBudgets() {
    return state.shared();
  }

  /** The properties the policies in force were built from. */
  public QuellProperties properties() {
    return state.properties();
  }

  /** What the policies report to: meters, recent events. */
  public Telemetry telemetry() {
    return telemetry;
  }

  /** The calls and requests in flight through the starter. */
  public InFlight inFlight() {
    return inFlight;
  }

  // ----------------------------------------------------------------------------------------------- per host

  /**
   * The copy of policy {@code policy} that requests to {@code host} run under: named {@code policy:host},
   * with its own budget, breaker, adaptive limit and throttle (sharing the policy's rate and concurrency limits), and
   * the policy's classifier reading responses through {@code access}. Built on first use, rebuilt after a
   * reload with the same live objects.
   */
  public Resilience hostPolicy(String policy, String host, ResponseClassifier.Access access) {
    settleDeferred();
    HostScope scope = hosts.computeIfAbsent(policy, HostScope::new);
    return scope.get(host, access, state);
  }

  /** The per-host copies of {@code policy} in use, by host, least recently used first. */
  public Map<String, Resilience> hostPolicies(String policy) {
    HostScope scope = hosts.get(policy);
    return scope == null ? Map.of() : scope.snapshot();
  }

  /** The policies that have per-host copies. */
  public Set<String> policiesWithHosts() {
    return Collections.unmodifiableSet(hosts.keySet());
  }

  /** One policy's hosts, least recently used first, bounded. */
  private final class HostScope {
    private final String policy;
    private final LinkedHashMap<String, Map<ResponseClassifier.Access, Resilience>> byHost =
        new LinkedHashMap<>(16, 0.75f, true);
    private long generation;

    HostScope(String policy) {
      this.policy = policy;
    }

    Resilience get(String host, ResponseClassifier.Access access, State s) {
      synchronized (this) {
        if (generation != s.generation()) {
          byHost.clear(); // rebuilt lazily from the same pins
          generation = s.generation();
        }
        Map<ResponseClassifier.Access, Resilience> variants = byHost.get(host);
        Resilience p = variants == null ? null : variants.get(access);
        if (p != null) {
          return p;
        }
      }
      Resilience built = build(host, access, s);
      List<String> evicted = new java.util.ArrayList<>();
      synchronized (this) {
        Map<ResponseClassifier.Access, Resilience> variants = byHost.computeIfAbsent(host, h -> new IdentityHashMap<>(2));
        Resilience raced = variants.putIfAbsent(access, built);
        int max = s.properties().getHttp().getClient().getMaxHosts();
        var it = byHost.keySet().iterator();
        while (byHost.size() > max && it.hasNext()) {
          String eldest = it.next();
          it.remove();
          evicted.add(eldest);
        }
        if (raced != null) {
          built = raced;
        }
      }
      evicted.forEach(h -> pins.forget(policy + ":" + h));
      return built;
    }

    private Resilience build(String host, ResponseClassifier.Access access, State s) {
      synchronized (PolicyRegistry.this) {
        ConfigProblems problems = new ConfigProblems(PropertyOrigins.of(environment));
        Pins.Session session = pins.session();
        Resilience p = new PolicyFactory(s.properties(), session, problems, telemetry.listeners(), time)
            .build(policy, s.properties().getPolicies().get(policy), policy + ":" + host, policy, Preset.HTTP);
        problems.throwIfAny();
        session.commit();
        Resilience wrapped = Objects.requireNonNull(p).withClassifier(ResponseClassifier.wrap(p.classifier(), access));
        telemetry.built(wrapped, policy);
        return wrapped;
      }
    }

    synchronized Map<String, Resilience> snapshot() {
      Map<String, Resilience> out = new LinkedHashMap<>();
      byHost.forEach((host, variants) -> {
        if (!variants.isEmpty()) {
          out.put(host, variants.values().iterator().next());
        }
      });
      return Collections.unmodifiableMap(out);
    }
  }

  /** Logs a refresh that could not be applied. */
  public static void logRejected(QuellPropertiesException e) {
    LOG.error("quell.refresh.rejected: the policies in force are kept. " + e.getMessage());
  }

  @Override
  public String toString() {
    return "PolicyRegistry[" + policies().keySet() + "]";
  }
}
