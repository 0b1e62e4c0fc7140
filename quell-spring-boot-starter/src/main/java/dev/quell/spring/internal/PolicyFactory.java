package dev.quell.spring.internal;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Classifier;
import dev.quell.Hedge;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import dev.quell.spring.QuellProperties;
import dev.quell.spring.QuellProperties.BackoffKind;
import dev.quell.spring.QuellProperties.BudgetKind;
import dev.quell.spring.QuellProperties.BudgetParameters;
import dev.quell.spring.QuellProperties.Policy;
import dev.quell.spring.QuellProperties.Preset;
import dev.quell.spring.QuellProperties.SharedBudget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Builds policies from {@link QuellProperties}: each setting from the policy's own properties, else from
 * {@code quell.defaults}, else from the preset. Live objects come from a {@link Pins.Session}, so a policy
 * rebuilt with unchanged settings for its budget, breaker or limiters gets the very same ones. Every
 * problem goes to one {@link ConfigProblems}; a policy with a problem is not built.
 *
 * <p>One factory serves one rebuild, on one thread.
 */
final class PolicyFactory {
  private static final Pattern PLAIN_KEY = Pattern.compile("[a-z0-9][a-z0-9-]*");
  private static final String DEFAULTS = "quell.defaults.";
  /**
   * {@code Limiter.throttle()}'s K and window, for what a throttle's properties leave out (quell-core has no
   * constants for them; ThrottleFromPropertiesTest checks they agree).
   */
  static final double THROTTLE_K = 2;
  static final Duration THROTTLE_WINDOW = Duration.ofMinutes(2);

  private final QuellProperties properties;
  private final Pins.Session pins;
  private final ConfigProblems problems;
  private final List<ResilienceListener> listeners;
  /** The application's clock for the policies, when it gave one (a test's virtual time); else each policy's own. */
  private final @Nullable TimeSource time;
  private final Map<String, RetryBudget> shared = new LinkedHashMap<>();

  PolicyFactory(QuellProperties properties, Pins.Session pins, ConfigProblems problems, List<ResilienceListener> listeners) {
    this(properties, pins, problems, listeners, null);
  }

  PolicyFactory(QuellProperties properties, Pins.Session pins, ConfigProblems problems, List<ResilienceListener> listeners,
      @Nullable TimeSource time) {
    this.properties = properties;
    this.pins = pins;
    this.problems = problems;
    this.listeners = List.copyOf(listeners);
    this.time = time;
  }

  /** The shared budgets referenced so far, and every declared one once {@link #declareSharedBudgets()} ran. */
  Map<String, RetryBudget> sharedBudgets() {
    return shared;
  }

  /**
   * The name of the throttle of the policy called {@code liveName}: a name of its own, since the meters
   * group limiters by name and its adaptive limit is called {@code liveName}.
   */
  static String throttleName(String liveName) {
    return liveName + ".throttle";
  }

  /** The property path of policy {@code name}: {@code quell.policies.name}, or {@code quell.policies[name]}. */
  static String policyPath(String name) {
    return "quell.policies" + key(name);
  }

  private static String key(String name) {
    return PLAIN_KEY.matcher(name).matches() ? "." + name : "[" + name + "]";
  }

  // ------------------------------------------------------------------------------------ shared budgets

  void declareSharedBudgets() {
    properties.getBudgets().keySet().forEach(this::sharedBudget);
  }

  private @Nullable RetryBudget sharedBudget(String name) {
    if (shared.containsKey(name)) {
      return shared.get(name);
    }
    SharedBudget declared = properties.getBudgets().get(name);
    RetryBudget budget;
    if (declared == null) {
      budget = RetryBudget.shared(name); // a name nobody declared: the default token bucket, as the core makes it
    } else {
      String prefix = "quell.budgets" + key(name) + ".";
      Leaf<BudgetKind> kind = declared.getKind() == null ? null : new Leaf<>(declared.getKind(), prefix + "kind");
      budget = makeBudget("shared:" + name, name, kind, declared(declared, prefix), prefix, true);
    }
    if (budget != null) {
      shared.put(name, budget);
    }
    return budget;
  }

  // ------------------------------------------------------------------------------------------- policies

  /**
   * Policy {@code name}, built from its own properties ({@code own}, null when it has none) and the
   * defaults.
   *
   * @param liveName the name the built policy carries, and the owner of its budget, breaker and adaptive limit
   * @param limiterOwner the owner of its rate and concurrency limits (a host's copy shares its template's)
   * @param fallback the preset when neither the policy nor the defaults name one
   * @return the policy, or null when its properties have problems (recorded)
   */
  @Nullable Resilience build(String name, @Nullable Policy own, String liveName, String limiterOwner, Preset fallback) {
    return new Layer(name, own).build(liveName, limiterOwner, fallback);
  }

  /**
   * Checks template {@code name} as a policy made of it would be built, so that a bad value in a template
   * no policy names yet stops the start too, reported under {@code quell.configs.NAME}.
   */
  void checkTemplate(String name, Policy template) {
    new Layer(template, "quell.configs" + key(name) + ".").build("quell.configs." + name, "quell.configs." + name, Preset.DEFAULT);
  }

  /** Where settings come from: a policy's own properties, a template under quell.configs. */
  private record Source(Policy properties, String prefix) {}

  /**
   * One policy's properties over its templates (its base-config, that one's base-config, ...) over the
   * defaults. For a group of settings (backoff, budget, breaker, ...), the nearest of the policy and its
   * templates that gives any setting of the group is the group's owner: its settings count as the policy's
   * own, the rest (farther templates, the defaults) as inherited — so a template may choose a backoff or
   * budget kind the defaults do not have, as a policy may.
   */
  private final class Layer {
    private final @Nullable Policy own;
    private final String ownPrefix;
    private final Policy defaults = properties.getDefaults();
    private final List<Source> chain = new ArrayList<>();
    private final Map<String, String> owners = new HashMap<>();

    Layer(String name, @Nullable Policy own) {
      this(own, policyPath(name) + ".");
    }

    Layer(@Nullable Policy own, String ownPrefix) {
      this.own = own;
      this.ownPrefix = ownPrefix;
      if (own != null) {
        chain.add(new Source(own, ownPrefix));
        Policy at = own;
        String atPrefix = ownPrefix;
        java.util.Set<String> seen = new java.util.LinkedHashSet<>();
        while (at.getBaseConfig() != null) {
          String base = at.getBaseConfig();
          Policy template = properties.getConfigs().get(base);
          if (template == null) {
            problems.add(atPrefix + "base-config", base, properties.getConfigs().isEmpty()
                ? "names no template: there is nothing under quell.configs"
                : "names no template under quell.configs (there are " + String.join(", ", properties.getConfigs().keySet()) + ")");
            break;
          }
          if (!seen.add(base)) {
            problems.add(atPrefix + "base-config", base, "goes round in a circle: " + String.join(" -> ", seen) + " -> " + base);
            break;
          }
          atPrefix = "quell.configs" + key(base) + ".";
          chain.add(new Source(template, atPrefix));
          at = template;
        }
      }
    }

    <T> @Nullable Leaf<T> leaf(Function<Policy, @Nullable T> read, String relative) {
      for (Source source : chain) {
        T v = read.apply(source.properties());
        if (v != null) {
          return new Leaf<>(v, source.prefix() + relative);
        }
      }
      T v = read.apply(defaults);
      return v == null ? null : new Leaf<>(v, DEFAULTS + relative);
    }

    /**
     * Whether {@code leaf} came into a policy that has properties of its own from farther than its group's
     * owner: from quell.defaults, or a template farther than the one that gives the group's settings.
     */
    boolean inherited(@Nullable Leaf<?> leaf) {
      if (leaf == null || own == null) {
        return false;
      }
      String relative = relativeOf(leaf.path());
      int dot = relative.indexOf('.');
      String owner = dot < 0 ? ownPrefix : owner(relative.substring(0, dot));
      return !leaf.path().startsWith(owner);
    }

    private String relativeOf(String path) {
      for (Source source : chain) {
        if (path.startsWith(source.prefix())) {
          return path.substring(source.prefix().length());
        }
      }
      return path.startsWith(DEFAULTS) ? path.substring(DEFAULTS.length()) : path;
    }

    /** The prefix of the nearest source that gives a setting of {@code group} ({@code rate-limit}, say). */
    private String owner(String group) {
      return owners.computeIfAbsent(group, g -> {
        for (Source source : chain) {
          if (anySet(source.properties(), g)) {
            return source.prefix();
          }
        }
        return ownPrefix;
      });
    }

    /** {@code leaf}, unless it was inherited and {@code drop}. */
    <T> @Nullable Leaf<T> unless(boolean drop, @Nullable Leaf<T> leaf) {
      return drop && inherited(leaf) ? null : leaf;
    }

    /**
     * Whether a feature is on: its {@code enabled} when given, otherwise whether any of its settings
     * is. An {@code enabled: false} inherited from quell.defaults gives way to settings of the feature
     * that the policy gives itself: turning a feature off for every policy does not turn it off for
     * one that configures it.
     */
    boolean on(@Nullable Leaf<Boolean> enabled, @Nullable Leaf<?>... settings) {
      List<Leaf<?>> given = nonNull(settings);
      boolean ownSettings = given.stream().anyMatch(l -> own != null && !inherited(l));
      if (enabled != null && !(inherited(enabled) && !enabled.value() && ownSettings)) {
        return enabled.value();
      }
      return !given.isEmpty();
    }

    /** The path of a group of settings, for problems that concern it as a whole. */
    String group(String relative) {
      return (own != null ? ownPrefix : DEFAULTS) + relative;
    }

    @Nullable Resilience build(String liveName, String limiterOwner, Preset fallback) {
      int before = problems.reported();
      Leaf<Preset> presetLeaf = leaf(Policy::getPreset, "preset");
      Preset preset = presetLeaf != null ? presetLeaf.value() : fallback;
      Resilience base = preset == Preset.NONE ? Resilience.NONE : preset == Preset.HTTP ? Resilience.HTTP : Resilience.DEFAULT;

      Leaf<Integer> attempts = leaf(Policy::getAttempts, "attempts");
      Leaf<Duration> deadline = leaf(Policy::getDeadline, "deadline");
      Leaf<Duration> attemptTimeout = leaf(Policy::getAttemptTimeout, "attempt-timeout");
      Leaf<Boolean> ambientDeadline = leaf(Policy::getAmbientDeadline, "ambient-deadline");
      Leaf<Boolean> ambientCriticality = leaf(Policy::getAmbientCriticality, "ambient-criticality");
      for (Leaf<?> d : nonNull(deadline, attemptTimeout)) {
        if (((Duration) d.value()).isNegative()) {
          problems.add(d.path(), d.value(), "must be a positive duration, or 0 for none");
        }
      }

      // the plain settings are checked even when another setting has a problem, so every problem shows at once
      Map<String, Leaf<?>> plain = new HashMap<>();
      put(plain, "attempts", attempts);
      put(plain, "deadline", deadline);
      put(plain, "attemptTimeout", attemptTimeout);
      problems.core(() -> base.with(s -> {
        if (attempts != null) {
          s.attempts(attempts.value());
        }
        if (deadline != null && deadline.value().compareTo(Duration.ZERO) > 0) {
          s.deadline(deadline.value());
        }
        if (attemptTimeout != null && attemptTimeout.value().compareTo(Duration.ZERO) > 0) {
          s.attemptTimeout(attemptTimeout.value());
        }
      }), plain, group("").replaceAll("\\.$", ""));

      Classifier classifier = classifier(base.classifier());
      Backoff backoff = backoff();
      BudgetKind presetBudget = preset == Preset.NONE ? BudgetKind.NONE : BudgetKind.AUTOMATIC;
      RetryBudget budget = budget(liveName, leaf(p -> p.getBudget().getKind(), "budget.kind"),
          leaf(p -> p.getBudget().getShared(), "budget.shared"), presetBudget);
      Object[] breaker = breaker(liveName); // {on?, live breaker}
      List<Limiter> limiters = limiters(liveName, limiterOwner);
      Object[] hedge = hedge();
      Object[] timing = measuredTiming();
      if (problems.reported() > before) {
        return null;
      }

      Map<String, Leaf<?>> paths = new HashMap<>();
      put(paths, "attempts", attempts);
      put(paths, "deadline", deadline);
      put(paths, "attemptTimeout", attemptTimeout);
      put(paths, "useAmbientCriticality", ambientCriticality);
      paths.put("hedge", new Leaf<>(hedge[1], group("hedge")));
      return problems.core(() -> base.with(s -> {
        s.name(liveName);
        if (attempts != null) {
          s.attempts(attempts.value());
        }
        if (deadline != null) {
          if (deadline.value().isZero()) {
            s.noDeadline();
          } else {
            s.deadline(deadline.value());
          }
        }
        if (attemptTimeout != null) {
          if (attemptTimeout.value().isZero()) {
            s.noAttemptTimeout();
          } else {
            s.attemptTimeout(attemptTimeout.value());
          }
        }
        if (ambientDeadline != null) {
          s.useAmbientDeadline(ambientDeadline.value());
        }
        if (ambientCriticality != null) {
          s.useAmbientCriticality(ambientCriticality.value());
        }
        if (classifier != null) {
          s.classifier(classifier);
        }
        if (backoff != null) {
          s.backoff(backoff);
        }
        s.budget(budget);
        if (breaker[1] != null) {
          s.breaker((CircuitBreaker) breaker[1]);
        } else {
          s.noBreaker();
        }
        s.clearLimiters();
        limiters.forEach(s::limiter);
        if (hedge[1] != null) {
          s.hedge((Hedge) hedge[1]);
        } else {
          s.noHedge();
        }
        if (timing[1] != null) {
          s.measuredTiming((MeasuredTiming) timing[1]);
        } else {
          s.noMeasuredTiming();
        }
        s.clearListeners();
        listeners.forEach(s::listener);
        if (time != null) {
          s.timeSource(time);
        }
      }), paths, group("").replaceAll("\\.$", ""));
    }

    // classification ----------------------------------------------------------------------------------

    private @Nullable Classifier classifier(Classifier presetClassifier) {
      Leaf<List<Class<? extends Throwable>>> transients = leaf(Policy::getTransientExceptions, "transient-exceptions");
      Leaf<List<Class<? extends Throwable>>> permanents = leaf(Policy::getPermanentExceptions, "permanent-exceptions");
      if (transients == null && permanents == null) {
        return null;
      }
      List<Class<? extends Throwable>> t = transients == null ? List.of() : transients.value();
      List<Class<? extends Throwable>> p = permanents == null ? List.of() : permanents.value();
      for (Class<? extends Throwable> type : t) {
        if (p.contains(type)) {
          problems.add(java.util.Objects.requireNonNull(transients).path(), type, // (t is empty without it)
              "is listed in permanent-exceptions too; name each exception once");
        }
      }
      Classifier.Rules rules = Classifier.rules();
      if (!p.isEmpty()) {
        rules = rules.permanentOn(array(p));
      }
      if (!t.isEmpty()) {
        rules = rules.transientOn(array(t));
      }
      return rules.otherwise(presetClassifier);
    }

    @SuppressWarnings("unchecked") // an array of a generic type can only be made raw
    private Class<? extends Throwable>[] array(List<Class<? extends Throwable>> types) {
      return types.toArray((Class<? extends Throwable>[]) new Class<?>[0]);
    }

    // backoff -----------------------------------------------------------------------------------------

    /**
     * The backoff. Inherited per setting, within a kind: when the policy's own properties choose the kind
     * (by naming it, or by giving settings only one kind takes), the defaults' settings of other kinds are
     * not inherited, so a policy may back off differently from the defaults without a conflict.
     */
    private @Nullable Backoff backoff() {
      Leaf<BackoffKind> kind0 = leaf(p -> p.getBackoff().getKind(), "backoff.kind");
      Leaf<Duration> base0 = leaf(p -> p.getBackoff().getBase(), "backoff.base");
      Leaf<Duration> throttledBase0 = leaf(p -> p.getBackoff().getThrottledBase(), "backoff.throttled-base");
      Leaf<Double> factor0 = leaf(p -> p.getBackoff().getFactor(), "backoff.factor");
      Leaf<Duration> max0 = leaf(p -> p.getBackoff().getMax(), "backoff.max");
      Leaf<QuellProperties.Jitter> jitter0 = leaf(p -> p.getBackoff().getJitter(), "backoff.jitter");
      Leaf<Duration> delay0 = leaf(p -> p.getBackoff().getDelay(), "backoff.delay");
      boolean ownExponential = nonNull(base0, throttledBase0, factor0, max0, jitter0).stream().anyMatch(l -> !inherited(l));
      boolean ownConstant = delay0 != null && !inherited(delay0);
      BackoffKind ownKind = kind0 != null && !inherited(kind0) ? kind0.value()
          : ownExponential && !ownConstant ? BackoffKind.EXPONENTIAL
          : ownConstant && !ownExponential ? BackoffKind.CONSTANT
          : null;
      boolean dropExponential = ownKind != null && ownKind != BackoffKind.EXPONENTIAL;
      boolean dropConstant = ownKind != null && ownKind != BackoffKind.CONSTANT;
      Leaf<BackoffKind> kind = unless(ownKind != null, kind0);
      Leaf<Duration> base = unless(dropExponential, base0);
      Leaf<Duration> throttledBase = unless(dropExponential, throttledBase0);
      Leaf<Double> factor = unless(dropExponential, factor0);
      Leaf<Duration> max = unless(dropExponential, max0);
      Leaf<QuellProperties.Jitter> jitter = unless(dropExponential, jitter0);
      Leaf<Duration> delay = unless(dropConstant, delay0);
      List<Leaf<?>> exponential = nonNull(base, throttledBase, factor, max, jitter);
      if (kind == null && ownKind == null && exponential.isEmpty() && delay == null) {
        return null; // the preset's
      }
      BackoffKind k = kind != null ? kind.value() : ownKind != null ? ownKind
          : exponential.isEmpty() ? BackoffKind.CONSTANT : BackoffKind.EXPONENTIAL;
      String kindName = k.name().toLowerCase(Locale.ROOT);
      switch (k) {
        case NONE:
          notApplicable(exponential, "backoff.kind none");
          notApplicable(nonNull(delay), "backoff.kind none");
          return Backoff.NONE;
        case CONSTANT:
          notApplicable(exponential, "backoff.kind constant (it takes backoff.delay)");
          if (delay == null) {
            problems.note(group("backoff.delay"), "must be set for backoff.kind constant");
            return null;
          }
          return problems.core(() -> Backoff.constant(delay.value()), Map.of("backoff delay", delay), group("backoff"));
        default:
          notApplicable(nonNull(delay), "backoff.kind " + kindName + " (delay is for constant)");
          Duration transientBase = base != null ? base.value() : Duration.ofMillis(100);
          Duration throttled = throttledBase != null ? throttledBase.value() : base != null ? base.value() : Duration.ofSeconds(1);
          double f = factor != null ? factor.value() : 2.0;
          Duration m = max != null ? max.value() : Duration.ofSeconds(30);
          dev.quell.Jitter j = jitter == null ? dev.quell.Jitter.FULL : dev.quell.Jitter.valueOf(jitter.value().name());
          Map<String, Leaf<?>> paths = new HashMap<>();
          put(paths, "backoff transientBase", base);
          put(paths, "backoff throttledBase", throttledBase != null ? throttledBase : base);
          put(paths, "backoff factor", factor);
          put(paths, "backoff max", max);
          return problems.core(() -> Backoff.exponential(transientBase, throttled, f, m).withJitter(j), paths, group("backoff"));
      }
    }

    // budget ------------------------------------------------------------------------------------------

    /**
     * The budget. Inherited per setting, within a kind, as the backoff is: when the policy's own
     * properties choose the kind (budget.kind, budget.shared, or parameters of one kind), the defaults'
     * kind, shared name and parameters of other kinds are not inherited.
     */
    private @Nullable RetryBudget budget(String liveName, @Nullable Leaf<BudgetKind> kind0,
        @Nullable Leaf<String> sharedName0, BudgetKind presetKind) {
      BudgetKind ownKind = kind0 != null && !inherited(kind0) ? kind0.value()
          : sharedName0 != null && !inherited(sharedName0) ? BudgetKind.SHARED
          : impliedKind(new Layered(this, k -> true).given().stream().filter(l -> !inherited(l)).toList());
      Leaf<BudgetKind> kind = unless(ownKind != null, kind0);
      Leaf<String> sharedName = unless(ownKind != null && ownKind != BudgetKind.SHARED, sharedName0);
      Layered parameters = new Layered(this, relative -> ownKind == null || takes(ownKind, relative));
      List<Leaf<?>> given = parameters.given();
      if (kind == null && sharedName == null && given.isEmpty()) {
        if (presetKind == BudgetKind.NONE) {
          return RetryBudget.NONE;
        }
        return makeBudget(liveName, liveName, new Leaf<>(BudgetKind.AUTOMATIC, group("budget.kind")), parameters,
            group("budget."), false);
      }
      if (sharedName != null && (kind == null || kind.value() == BudgetKind.SHARED)) {
        parameters.notApplicable(given, "budget.kind shared (a shared budget's parameters are under quell.budgets."
            + sharedName.value() + ")");
        if (sharedName.value().isBlank()) {
          problems.add(sharedName.path(), "\"" + sharedName.value() + "\"", "must name a budget");
          return null;
        }
        return given.isEmpty() ? sharedBudget(sharedName.value()) : null;
      }
      if (kind != null && kind.value() == BudgetKind.SHARED) {
        problems.note(group("budget.shared"), "must name a budget for budget.kind shared");
        return null;
      }
      if (sharedName != null) {
        problems.add(sharedName.path(), sharedName.value(), "applies only to budget.kind shared"
            + (kind == null ? "" : ", not " + kebab(kind.value())));
        return null;
      }
      return makeBudget(liveName, liveName, kind, parameters, group("budget."), false);
    }

    // breaker -----------------------------------------------------------------------------------------

    private Object[] breaker(String liveName) {
      Leaf<Boolean> enabled = leaf(p -> p.getBreaker().getEnabled(), "breaker.enabled");
      Leaf<Double> failureRate = leaf(p -> p.getBreaker().getFailureRate(), "breaker.failure-rate");
      Leaf<Integer> minimumCalls = leaf(p -> p.getBreaker().getMinimumCalls(), "breaker.minimum-calls");
      Leaf<Duration> window = leaf(p -> p.getBreaker().getWindow(), "breaker.window");
      Leaf<Integer> consecutive = leaf(p -> p.getBreaker().getConsecutiveFailures(), "breaker.consecutive-failures");
      Leaf<Duration> slowDuration = leaf(p -> p.getBreaker().getSlowCallDuration(), "breaker.slow-call-duration");
      Leaf<Double> slowRate = leaf(p -> p.getBreaker().getSlowCallRate(), "breaker.slow-call-rate");
      Leaf<Integer> probes = leaf(p -> p.getBreaker().getProbes(), "breaker.probes");
      Leaf<Integer> probeSuccesses = leaf(p -> p.getBreaker().getProbeSuccesses(), "breaker.probe-successes");
      Leaf<Duration> breakDuration = leaf(p -> p.getBreaker().getBreakDuration(), "breaker.break-duration");
      Leaf<Duration> maxBreak = leaf(p -> p.getBreaker().getMaxBreakDuration(), "breaker.max-break-duration");
      Leaf<Duration> ramp = leaf(p -> p.getBreaker().getRamp(), "breaker.ramp");
      if (!on(enabled, failureRate, minimumCalls, window, consecutive, slowDuration, slowRate, probes,
          probeSuccesses, breakDuration, maxBreak, ramp)) {
        return new Object[] {false, null};
      }
      if ((slowDuration == null) != (slowRate == null)) {
        Leaf<?> given = java.util.Objects.requireNonNull(slowDuration != null ? slowDuration : slowRate); // one of the two
        problems.add(given.path(), given.value(), "needs breaker.slow-call-duration and breaker.slow-call-rate together");
        return new Object[] {true, null};
      }
      Map<String, Leaf<?>> paths = new HashMap<>();
      put(paths, "breaker failureRate", failureRate);
      put(paths, "breaker minimumCalls", minimumCalls);
      put(paths, "breaker window", window);
      put(paths, "breaker consecutiveFailures", consecutive);
      put(paths, "breaker slowCallDuration", slowDuration);
      put(paths, "breaker slowCallRate", slowRate);
      put(paths, "breaker probes", probes);
      put(paths, "breaker probeSuccesses", probeSuccesses);
      put(paths, "breaker breakDuration", breakDuration);
      put(paths, "breaker maxBreakDuration", maxBreak);
      put(paths, "breaker ramp", ramp);
      CircuitBreaker.Config config = problems.core(() -> CircuitBreaker.Config.DEFAULT.with(s -> {
        if (failureRate != null) {
          s.failureRate(failureRate.value());
        }
        if (minimumCalls != null) {
          s.minimumCalls(minimumCalls.value());
        }
        if (window != null) {
          s.window(window.value());
        }
        if (consecutive != null) {
          s.consecutiveFailures(consecutive.value());
        }
        if (slowDuration != null && slowRate != null) {
          s.slowCalls(slowDuration.value(), slowRate.value());
        }
        if (probes != null) {
          s.probes(probes.value());
        }
        if (probeSuccesses != null) {
          s.probeSuccesses(probeSuccesses.value());
        }
        if (breakDuration != null) {
          s.breakDuration(breakDuration.value());
        }
        if (maxBreak != null) {
          s.maxBreakDuration(maxBreak.value());
        }
        if (ramp != null) {
          s.ramp(ramp.value());
        }
      }), paths, group("breaker"));
      if (config == null) {
        return new Object[] {true, null};
      }
      // a breaker that is open, half-open or isolated stays, with its settings, until it has closed
      return new Object[] {true, pins.get(liveName, "breaker", config, previous -> CircuitBreaker.of(liveName, config),
          Carry::inTheMiddleOfAnOutage)};
    }

    // limiters ----------------------------------------------------------------------------------------

    private List<Limiter> limiters(String liveName, String limiterOwner) {
      List<Limiter> limiters = new ArrayList<>();
      Leaf<Boolean> rateOn = leaf(p -> p.getRateLimit().getEnabled(), "rate-limit.enabled");
      Leaf<Double> perSecond = leaf(p -> p.getRateLimit().getPerSecond(), "rate-limit.per-second");
      Leaf<Integer> burst = leaf(p -> p.getRateLimit().getBurst(), "rate-limit.burst");
      Leaf<Duration> rateWait = leaf(p -> p.getRateLimit().getMaxWait(), "rate-limit.max-wait");
      if (on(rateOn, perSecond, burst, rateWait)) {
        if (perSecond == null) {
          problems.note(group("rate-limit.per-second"), "must be set for a rate limit");
        } else {
          int b = burst != null ? burst.value() : 1;
          Duration w = rateWait != null ? rateWait.value() : Duration.ZERO;
          Map<String, Leaf<?>> paths = new HashMap<>();
          put(paths, "rate limiter perSecond", perSecond);
          put(paths, "rate limiter burst", burst);
          put(paths, "rate limiter burst / perSecond", burst != null ? burst : perSecond);
          put(paths, "rate limiter maxWait", rateWait);
          Limiter rate = problems.core(() -> pins.get(limiterOwner, "rate", List.of(perSecond.value(), b, w),
              () -> Named.limiter(limiterOwner + ".rate-limit", Limiter.rate(perSecond.value(), b, w))), paths, group("rate-limit"));
          if (rate != null) {
            limiters.add(rate);
          }
        }
      }
      Leaf<Boolean> concurrencyOn = leaf(p -> p.getConcurrencyLimit().getEnabled(), "concurrency-limit.enabled");
      Leaf<Integer> limit = leaf(p -> p.getConcurrencyLimit().getLimit(), "concurrency-limit.limit");
      Leaf<Duration> concurrencyWait = leaf(p -> p.getConcurrencyLimit().getMaxWait(), "concurrency-limit.max-wait");
      if (on(concurrencyOn, limit, concurrencyWait)) {
        if (limit == null) {
          problems.note(group("concurrency-limit.limit"), "must be set for a concurrency limit");
        } else {
          Duration w = concurrencyWait != null ? concurrencyWait.value() : Duration.ZERO;
          Map<String, Leaf<?>> paths = new HashMap<>();
          put(paths, "concurrency limit n", limit);
          put(paths, "concurrency limit maxWait", concurrencyWait);
          Limiter bulkhead = problems.core(() -> pins.get(limiterOwner, "concurrency", List.of(limit.value(), w),
              () -> Named.limiter(limiterOwner + ".concurrency-limit", Limiter.concurrency(limit.value(), w))), paths,
              group("concurrency-limit"));
          if (bulkhead != null) {
            limiters.add(bulkhead);
          }
        }
      }
      Limiter adaptive = adaptive(liveName);
      if (adaptive != null) {
        limiters.add(adaptive);
      }
      Limiter throttle = throttle(liveName);
      if (throttle != null) {
        limiters.add(throttle);
      }
      return limiters;
    }

    /**
     * The adaptive throttle: per policy (per host for the HTTP clients' copies), like the adaptive limit,
     * since what it counts is what one dependency accepted. What the properties leave out is the core's
     * default (K = 2 over two minutes); the core checks k and window.
     */
    private @Nullable Limiter throttle(String liveName) {
      Leaf<Boolean> enabled = leaf(p -> p.getThrottle().getEnabled(), "throttle.enabled");
      Leaf<Double> k = leaf(p -> p.getThrottle().getK(), "throttle.k");
      Leaf<Duration> window = leaf(p -> p.getThrottle().getWindow(), "throttle.window");
      if (!on(enabled, k, window)) {
        return null;
      }
      Map<String, Leaf<?>> paths = new HashMap<>();
      put(paths, "throttle k", k);
      put(paths, "throttle window", window);
      double kv = k != null ? k.value() : THROTTLE_K;
      Duration w = window != null ? window.value() : THROTTLE_WINDOW;
      TimeSource clock = time != null ? time : TimeSource.system();
      String name = throttleName(liveName);
      // one refusing when its settings change is kept, as it is, until it refuses no CRITICAL call (see Carry)
      return problems.core(() -> pins.get(liveName, "throttle", List.of(kv, w),
          (Limiter previous) -> Named.limiter(name, Limiter.throttle(kv, w, clock)), Carry::stillRefusing),
          paths, group("throttle"));
    }

    private @Nullable Limiter adaptive(String liveName) {
      Leaf<Boolean> enabled = leaf(p -> p.getAdaptiveLimit().getEnabled(), "adaptive-limit.enabled");
      Leaf<QuellProperties.AdaptiveMode> mode = leaf(p -> p.getAdaptiveLimit().getMode(), "adaptive-limit.mode");
      Leaf<Integer> initial = leaf(p -> p.getAdaptiveLimit().getInitialLimit(), "adaptive-limit.initial-limit");
      Leaf<Integer> min = leaf(p -> p.getAdaptiveLimit().getMinLimit(), "adaptive-limit.min-limit");
      Leaf<Integer> max = leaf(p -> p.getAdaptiveLimit().getMaxLimit(), "adaptive-limit.max-limit");
      Leaf<Double> backoffRatio = leaf(p -> p.getAdaptiveLimit().getBackoffRatio(), "adaptive-limit.backoff-ratio");
      Leaf<Double> tolerance = leaf(p -> p.getAdaptiveLimit().getTolerance(), "adaptive-limit.tolerance");
      Leaf<Double> smoothing = leaf(p -> p.getAdaptiveLimit().getSmoothing(), "adaptive-limit.smoothing");
      Leaf<Integer> longWindow = leaf(p -> p.getAdaptiveLimit().getLongWindow(), "adaptive-limit.long-window");
      if (!on(enabled, mode, initial, min, max, backoffRatio, tolerance, smoothing, longWindow)) {
        return null;
      }
      // each mode starts from its own defaults: loss and gradient from Netflix's, the knee from DEFAULT
      Limiter.AdaptiveConfig config = mode == null || mode.value() == QuellProperties.AdaptiveMode.KNEE
          ? Limiter.AdaptiveConfig.DEFAULT
          : mode.value() == QuellProperties.AdaptiveMode.GRADIENT ? Limiter.AdaptiveConfig.gradient()
          : Limiter.AdaptiveConfig.loss();
      String group = group("adaptive-limit");
      boolean ok = true;
      Limiter.AdaptiveConfig[] c = {config};
      ok &= apply(c, initial, v -> c[0].withInitialLimit(v), "adaptive initialLimit", group);
      ok &= apply(c, min, v -> c[0].withMinLimit(v), "adaptive minLimit", group);
      ok &= apply(c, max, v -> c[0].withMaxLimit(v), "adaptive maxLimit", group);
      ok &= apply(c, backoffRatio, v -> c[0].withBackoffRatio(v), "adaptive backoffRatio", group);
      ok &= apply(c, tolerance, v -> c[0].withTolerance(v), "adaptive tolerance", group);
      ok &= apply(c, smoothing, v -> c[0].withSmoothing(v), "adaptive smoothing", group);
      ok &= apply(c, longWindow, v -> c[0].withLongWindow(v), "adaptive longWindow", group);
      if (!ok) {
        return null;
      }
      Map<String, Leaf<?>> paths = new HashMap<>();
      put(paths, "adaptive initialLimit", initial);
      put(paths, "adaptive minLimit", min);
      put(paths, "adaptive maxLimit", max);
      Limiter.AdaptiveConfig done = c[0];
      return problems.core(() -> pins.get(liveName, "adaptive", done,
          (Limiter previous) -> Named.limiter(liveName, Limiter.adaptive(previous == null ? done : Carry.startingAt(previous, done))),
          previous -> false), paths, group);
    }

    private <V> boolean apply(Limiter.AdaptiveConfig[] config, @Nullable Leaf<V> leaf,
        Function<V, Limiter.AdaptiveConfig> with, String parameter, String group) {
      if (leaf == null) {
        return true;
      }
      Limiter.AdaptiveConfig next = problems.core(() -> with.apply(leaf.value()), Map.of(parameter, leaf), group);
      if (next == null) {
        return false;
      }
      config[0] = next;
      return true;
    }

    // hedging and measured timing ---------------------------------------------------------------------

    private Object[] hedge() {
      Leaf<Boolean> enabled = leaf(p -> p.getHedge().getEnabled(), "hedge.enabled");
      Leaf<Duration> delay0 = leaf(p -> p.getHedge().getDelay(), "hedge.delay");
      Leaf<Double> load0 = leaf(p -> p.getHedge().getMaxExtraLoad(), "hedge.max-extra-load");
      // a policy's own choice of fixed delay or measured load wins over the defaults' other choice (and its floor)
      boolean ownDelay = delay0 != null && !inherited(delay0);
      Leaf<Duration> delay = unless(load0 != null && !inherited(load0), delay0);
      Leaf<Double> load = unless(ownDelay, load0);
      Leaf<Integer> maxHedges = leaf(p -> p.getHedge().getMaxHedges(), "hedge.max-hedges");
      Leaf<Duration> floor = unless(ownDelay, leaf(p -> p.getHedge().getFloor(), "hedge.floor"));
      Leaf<Boolean> retries = leaf(p -> p.getHedge().getRetries(), "hedge.retries");
      if (!on(enabled, delay, load, maxHedges, floor, retries)) {
        return new Object[] {false, null};
      }
      if (delay != null && load != null) {
        problems.add(load.path(), load.value(), "cannot be given with hedge.delay (" + delay.path() + "): choose one");
        return new Object[] {true, null};
      }
      if (delay == null && load == null) {
        problems.note(group("hedge"), "needs hedge.delay or hedge.max-extra-load");
        return new Object[] {true, null};
      }
      Map<String, Leaf<?>> paths = new HashMap<>();
      put(paths, "hedge delay", delay);
      put(paths, "hedge maxExtraLoad", load);
      put(paths, "hedge maxHedges", maxHedges);
      put(paths, "hedge floor", floor);
      Hedge hedge = problems.core(() -> {
        Hedge h = delay != null ? Hedge.after(delay.value())
            : Hedge.maxExtraLoad(java.util.Objects.requireNonNull(load, "hedge.max-extra-load").value());
        if (maxHedges != null) {
          h = h.withMaxHedges(maxHedges.value());
        }
        if (floor != null) {
          h = h.withFloor(floor.value());
        }
        if (retries != null) {
          h = h.withRetries(retries.value());
        }
        return h;
      }, paths, group("hedge"));
      return new Object[] {true, hedge};
    }

    private Object[] measuredTiming() {
      Leaf<Boolean> enabled = leaf(p -> p.getMeasuredTiming().getEnabled(), "measured-timing.enabled");
      Leaf<Double> multiple = leaf(p -> p.getMeasuredTiming().getMultiple(), "measured-timing.multiple");
      Leaf<Duration> floor = leaf(p -> p.getMeasuredTiming().getFloor(), "measured-timing.floor");
      Leaf<Duration> window = leaf(p -> p.getMeasuredTiming().getWindow(), "measured-timing.window");
      Leaf<Integer> minSamples = leaf(p -> p.getMeasuredTiming().getMinSamples(), "measured-timing.min-samples");
      if (!on(enabled, multiple, floor, window, minSamples)) {
        return new Object[] {false, null};
      }
      if (multiple == null) {
        problems.note(group("measured-timing.multiple"), "must be set for measured timing");
        return new Object[] {true, null};
      }
      Map<String, Leaf<?>> paths = new HashMap<>();
      put(paths, "measured timing multiple", multiple);
      put(paths, "measured timing floor", floor);
      put(paths, "measured timing window", window);
      put(paths, "measured timing minSamples", minSamples);
      MeasuredTiming timing = problems.core(() -> {
        MeasuredTiming m = MeasuredTiming.multipleOfP95(multiple.value());
        if (floor != null) {
          m = m.withFloor(floor.value());
        }
        if (window != null) {
          m = m.withWindow(window.value());
        }
        if (minSamples != null) {
          m = m.withMinSamples(minSamples.value());
        }
        return m;
      }, paths, group("measured-timing"));
      return new Object[] {true, timing};
    }

    private void notApplicable(List<Leaf<?>> leaves, String what) {
      for (Leaf<?> leaf : leaves) {
        problems.add(leaf.path(), leaf.value(), "does not apply to " + what);
      }
    }
  }

  /** Whether {@code policy} gives any setting of {@code group} ({@code rate-limit}: its {@code rateLimit}). */
  private static boolean anySet(Policy policy, String group) {
    String property = java.beans.Introspector.decapitalize(java.util.Arrays.stream(group.split("-"))
        .map(p -> p.isEmpty() ? p : Character.toUpperCase(p.charAt(0)) + p.substring(1)).reduce("", String::concat));
    org.springframework.beans.BeanWrapper policyWrapper = new org.springframework.beans.BeanWrapperImpl(policy);
    if (!policyWrapper.isReadableProperty(property)) {
      return false;
    }
    Object settings = policyWrapper.getPropertyValue(property);
    if (settings == null) {
      return false;
    }
    org.springframework.beans.BeanWrapper w = new org.springframework.beans.BeanWrapperImpl(settings);
    for (java.beans.PropertyDescriptor d : w.getPropertyDescriptors()) {
      if (d.getReadMethod() != null && !d.getName().equals("class") && w.getPropertyValue(d.getName()) != null) {
        return true;
      }
    }
    return false;
  }

  /** The kind a budget's own parameters choose, or null when they choose none (or several). */
  private static @Nullable BudgetKind impliedKind(List<Leaf<?>> own) {
    java.util.Set<BudgetKind> kinds = java.util.EnumSet.noneOf(BudgetKind.class);
    for (Leaf<?> leaf : own) {
      String relative = leaf.path().substring(leaf.path().lastIndexOf('.') + 1);
      switch (relative) {
        case "fraction", "minimum-per-second" -> kinds.add(BudgetKind.TOKEN_BUCKET);
        case "token-ratio" -> kinds.add(BudgetKind.FEEDBACK);
        case "period" -> kinds.add(BudgetKind.REPLENISHING);
        case "percent", "minimum" -> kinds.add(BudgetKind.CONCURRENT);
        default -> { } // max-tokens: feedback or replenishing, the other parameters decide
      }
    }
    return kinds.size() == 1 ? kinds.iterator().next() : null;
  }

  /** Whether a budget of {@code kind} takes the parameter {@code relative}. */
  private static boolean takes(BudgetKind kind, String relative) {
    return switch (kind) {
      case TOKEN_BUCKET -> relative.equals("fraction") || relative.equals("minimum-per-second");
      case FEEDBACK -> relative.equals("max-tokens") || relative.equals("token-ratio");
      case REPLENISHING -> relative.equals("max-tokens") || relative.equals("period");
      case CONCURRENT -> relative.equals("percent") || relative.equals("minimum");
      default -> false;
    };
  }

  /**
   * A policy's budget parameters, each from its own properties or the defaults; an inherited one only
   * when {@code inherit} accepts its name.
   */
  private final class Layered implements Parameters {
    private final Layer layer;
    private final java.util.function.Predicate<String> inherit;

    Layered(Layer layer, java.util.function.Predicate<String> inherit) {
      this.layer = layer;
      this.inherit = inherit;
    }

    @Override
    public <T> @Nullable Leaf<T> get(Function<BudgetParameters, @Nullable T> read, String relative) {
      Leaf<T> leaf = layer.leaf(p -> read.apply(p.getBudget()), "budget." + relative);
      return layer.unless(!inherit.test(relative), leaf);
    }

    void notApplicable(List<Leaf<?>> leaves, String what) {
      layer.notApplicable(leaves, what);
    }
  }

  /** Budget parameters from wherever they are declared. */
  private interface Parameters {
    <T> @Nullable Leaf<T> get(Function<BudgetParameters, @Nullable T> read, String relative);

    default List<Leaf<?>> given() {
      return nonNull(get(BudgetParameters::getFraction, "fraction"), get(BudgetParameters::getMinimumPerSecond, "minimum-per-second"),
          get(BudgetParameters::getMaxTokens, "max-tokens"), get(BudgetParameters::getTokenRatio, "token-ratio"),
          get(BudgetParameters::getPeriod, "period"), get(BudgetParameters::getPercent, "percent"),
          get(BudgetParameters::getMinimum, "minimum"));
    }
  }

  /** A shared budget's parameters, declared under quell.budgets.NAME. */
  private static Parameters declared(BudgetParameters declared, String prefix) {
    return new Parameters() {
      @Override
      public <T> @Nullable Leaf<T> get(Function<BudgetParameters, @Nullable T> read, String relative) {
        T v = read.apply(declared);
        return v == null ? null : new Leaf<>(v, prefix + relative);
      }
    };
  }

  /**
   * Builds a budget of the kind {@code kindLeaf} names, or else the kind its parameters imply.
   *
   * @param owner the pins owner
   * @param name the budget's name: the policy's (policy:host for a per-host copy), or the shared budget's
   * @param prefix the property prefix of the parameters, ending in a dot
   * @param isShared whether this is a budget declared under quell.budgets
   */
  private @Nullable RetryBudget makeBudget(String owner, String name, @Nullable Leaf<BudgetKind> kindLeaf, Parameters params,
      String prefix, boolean isShared) {
    Leaf<Double> fraction = params.get(BudgetParameters::getFraction, "fraction");
    Leaf<Double> floor = params.get(BudgetParameters::getMinimumPerSecond, "minimum-per-second");
    Leaf<Integer> maxTokens = params.get(BudgetParameters::getMaxTokens, "max-tokens");
    Leaf<Double> tokenRatio = params.get(BudgetParameters::getTokenRatio, "token-ratio");
    Leaf<Duration> period = params.get(BudgetParameters::getPeriod, "period");
    Leaf<Double> percent = params.get(BudgetParameters::getPercent, "percent");
    Leaf<Integer> minimum = params.get(BudgetParameters::getMinimum, "minimum");
    BudgetKind kind = kindLeaf != null ? kindLeaf.value()
        : fraction != null || floor != null ? BudgetKind.TOKEN_BUCKET
        : tokenRatio != null ? BudgetKind.FEEDBACK
        : period != null ? BudgetKind.REPLENISHING
        : percent != null || minimum != null ? BudgetKind.CONCURRENT
        : maxTokens != null ? BudgetKind.FEEDBACK
        : isShared ? BudgetKind.TOKEN_BUCKET : BudgetKind.AUTOMATIC;
    if (isShared && (kind == BudgetKind.AUTOMATIC || kind == BudgetKind.NONE || kind == BudgetKind.SHARED)) {
      // (without budget.kind a shared budget is a token bucket: only a kind given can be one of these)
      problems.add(java.util.Objects.requireNonNull(kindLeaf).path(), kebab(kind),
          "must be token-bucket, feedback, replenishing or concurrent for a shared budget");
      return null;
    }
    List<Leaf<?>> applicable = switch (kind) {
      case TOKEN_BUCKET -> nonNull(fraction, floor);
      case FEEDBACK -> nonNull(maxTokens, tokenRatio);
      case REPLENISHING -> nonNull(maxTokens, period);
      case CONCURRENT -> nonNull(percent, minimum);
      default -> List.of();
    };
    boolean fine = true;
    for (Leaf<?> leaf : nonNull(fraction, floor, maxTokens, tokenRatio, period, percent, minimum)) {
      if (!applicable.contains(leaf)) {
        problems.add(leaf.path(), leaf.value(), "does not apply to budget kind " + kebab(kind));
        fine = false;
      }
    }
    if (!fine) {
      return null;
    }
    Map<String, Leaf<?>> paths = new HashMap<>();
    String group = prefix.substring(0, prefix.length() - 1);
    switch (kind) {
      case NONE:
        return RetryBudget.NONE;
      case AUTOMATIC:
        // the very bucket the core would give a policy of this name: its gauges carry the policy's name
        return budgetPin(owner, "automatic", () -> Resilience.DEFAULT.withName(owner).budget());
      case TOKEN_BUCKET: {
        double f = fraction != null ? fraction.value() : RetryBudget.DEFAULT_FRACTION;
        double m = floor != null ? floor.value() : RetryBudget.DEFAULT_MINIMUM_PER_SECOND;
        put(paths, "budget fraction", fraction);
        put(paths, "budget minimumPerSecond", floor);
        if (isShared) {
          return problems.core(() -> RetryBudget.shared(name, f, m), paths, group);
        }
        return problems.core(() -> budgetPin(owner, List.of("token-bucket", f, m), () -> Named.tokenBucket(name, f, m)), paths, group);
      }
      case FEEDBACK: {
        int t = maxTokens != null ? maxTokens.value() : 100;
        double r = tokenRatio != null ? tokenRatio.value() : 0.1;
        put(paths, "feedback maxTokens", maxTokens);
        put(paths, "feedback tokenRatio", tokenRatio);
        return problems.core(() -> budgetPin(owner, List.of("feedback", t, r), () -> Named.feedback(name, t, r)), paths, group);
      }
      case REPLENISHING: {
        if (maxTokens == null || period == null) {
          problems.note(group, "budget kind replenishing needs max-tokens and period");
          return null;
        }
        put(paths, "replenishing maxTokens", maxTokens);
        put(paths, "replenishing period", period);
        return problems.core(() -> budgetPin(owner, List.of("replenishing", maxTokens.value(), period.value()),
            () -> Named.replenishing(name, maxTokens.value(), period.value())), paths, group);
      }
      case CONCURRENT: {
        double p = percent != null ? percent.value() : 0.2;
        int m = minimum != null ? minimum.value() : 3;
        put(paths, "concurrent budget percent", percent);
        put(paths, "concurrent budget minimum", minimum);
        return problems.core(() -> budgetPin(owner, List.of("concurrent", p, m), () -> Named.concurrent(name, p, m)), paths, group);
      }
      default:
        throw new IllegalStateException("unreachable: " + kind);
    }
  }

  /** A policy's own budget: a new one (settings changed) takes over the spent share of the one it replaces. */
  private RetryBudget budgetPin(String owner, Object spec, java.util.function.Supplier<RetryBudget> make) {
    return pins.get(owner, "budget", spec, (RetryBudget previous) -> {
      RetryBudget made = make.get();
      if (previous != null) {
        Carry.spentShare(previous, made);
      }
      return made;
    }, previous -> false);
  }

  static String kebab(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  private static void put(Map<String, Leaf<?>> paths, String parameter, @Nullable Leaf<?> leaf) {
    if (leaf != null) {
      paths.put(parameter, leaf);
    }
  }

  private static List<Leaf<?>> nonNull(@Nullable Leaf<?>... leaves) {
    List<Leaf<?>> out = new ArrayList<>();
    for (Leaf<?> l : leaves) {
      if (l != null) {
        out.add(l);
      }
    }
    return out;
  }

}
