package dev.quell.cli.internal;

import dev.quell.Backoff;
import dev.quell.Criticality;
import dev.quell.Jitter;
import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import dev.quell.sim.Dependency;
import dev.quell.sim.Incident;
import dev.quell.sim.Load;
import dev.quell.sim.Scenario;
import dev.quell.sim.Service;
import dev.quell.sim.Simulate;
import dev.quell.sim.Simulation;
import dev.quell.sim.Target;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * A scenario written in YAML (see docs/simulation.md for the format). Every key is checked: a typo
 * is an error that names the key and the keys allowed there, rather than a setting silently ignored.
 */
public final class ScenarioFile {
  private final Scenario scenario;
  private final long @Nullable [] seeds;

  private ScenarioFile(Scenario scenario, long @Nullable [] seeds) {
    this.scenario = scenario;
    this.seeds = seeds;
  }

  /** The scenario the file describes. */
  public Scenario scenario() {
    return scenario;
  }

  /** The seeds the file asks for, if it names any. */
  public Optional<long[]> seeds() {
    return Optional.ofNullable(seeds).map(long[]::clone);
  }

  /** Reads and checks a scenario file. */
  public static ScenarioFile read(Path file) {
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String fallbackName = file.getFileName().toString().replaceFirst("\\.ya?ml$", "");
      Object root = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
      return parse(root, fallbackName);
    } catch (IOException e) {
      throw new ScenarioException("cannot read scenario file " + file + ": " + e.getMessage(), e);
    } catch (YAMLException e) {
      throw new ScenarioException("scenario file " + file + " is not valid YAML: " + e.getMessage(), e);
    }
  }

  /** Reads a scenario from YAML text. */
  public static ScenarioFile parse(String yaml, String fallbackName) {
    try {
      Object root = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
      return parse(root, fallbackName);
    } catch (YAMLException e) {
      throw new ScenarioException("scenario is not valid YAML: " + e.getMessage(), e);
    }
  }

  private static ScenarioFile parse(@Nullable Object root, String fallbackName) {
    Section top = Section.of("scenario", root);
    top.only("name", "description", "duration", "seeds", "load", "dependency", "dependencies", "services", "target",
        "policy", "arms");
    String name = top.string("name", fallbackName);
    String description = top.string("description", "");
    Duration duration = top.duration("duration", Duration.ofMinutes(1));
    Load load = load(top.section("load"));

    Map<String, Dependency> dependencies = new LinkedHashMap<>();
    if (top.has("dependency") && top.has("dependencies")) {
      throw new ScenarioException("scenario: give either dependency or dependencies, not both");
    }
    if (top.has("dependency")) {
      Dependency d = dependency(top.section("dependency"), "dependency");
      dependencies.put(d.name(), d);
    }
    if (top.has("dependencies")) {
      Section all = top.section("dependencies");
      for (String key : all.keys()) {
        dependencies.put(key, dependency(all.section(key), key));
      }
    }
    Map<String, Section> services = new LinkedHashMap<>();
    if (top.has("services")) {
      Section all = top.section("services");
      for (String key : all.keys()) {
        if (dependencies.containsKey(key)) {
          throw new ScenarioException("scenario: '" + key + "' is both a dependency and a service");
        }
        services.put(key, all.section(key));
      }
    }
    if (dependencies.isEmpty()) {
      throw new ScenarioException("scenario: describe at least one dependency (dependency: or dependencies:)");
    }
    String target;
    if (top.has("target")) {
      target = top.string("target", "");
    } else if (services.isEmpty() && dependencies.size() == 1) {
      target = dependencies.keySet().iterator().next();
    } else {
      throw new ScenarioException("scenario: say where the load goes with target: (one of "
          + String.join(", ", names(dependencies, services)) + ")");
    }
    if (!dependencies.containsKey(target) && !services.containsKey(target)) {
      throw new ScenarioException("scenario: target '" + target + "' is neither a dependency nor a service (known: "
          + String.join(", ", names(dependencies, services)) + ")");
    }

    List<Section> armSections = new ArrayList<>();
    if (top.has("arms")) {
      if (top.has("policy")) {
        throw new ScenarioException("scenario: give policy: inside each arm, not beside arms:");
      }
      armSections.addAll(top.sections("arms"));
    } else if (top.has("policy")) {
      armSections.add(Section.of("scenario", Map.of("name", "policy", "policy", top.raw("policy"))));
    } else {
      throw new ScenarioException("scenario: give arms: (a list of {name, policy}) or a single policy:");
    }
    List<Scenario.Arm> arms = new ArrayList<>();
    Set<String> armNames = new HashSet<>();
    for (int i = 0; i < armSections.size(); i++) {
      Section arm = armSections.get(i).at("arms[" + i + "]");
      arm.only("name", "policy", "policies");
      String armName = arm.string("name", "arm " + (i + 1));
      if (!armNames.add(armName)) {
        throw new ScenarioException("scenario: two arms are named '" + armName + "'");
      }
      Section entryPolicy = arm.section("policy");
      Map<String, Section> named = new LinkedHashMap<>();
      if (arm.has("policies")) {
        Section all = arm.section("policies");
        for (String key : all.keys()) {
          named.put(key, all.section(key));
        }
      }
      Builder builder = new Builder(dependencies, services, entryPolicy, named);
      Target t = builder.target(target, new ArrayList<>());
      Simulation simulation = Simulate.policy(policy(entryPolicy, target)).against(t).under(load).lasting(duration);
      arms.add(new Scenario.Arm(armName, simulation));
    }
    long[] seeds = top.has("seeds") ? seeds(top.raw("seeds"), "scenario.seeds") : null;
    return new ScenarioFile(Scenario.of(name, description, arms), seeds);
  }

  private static List<String> names(Map<String, Dependency> dependencies, Map<String, Section> services) {
    List<String> all = new ArrayList<>(dependencies.keySet());
    all.addAll(services.keySet());
    return all;
  }

  /** Seeds as a count ("3" means 1, 2, 3) or a list. */
  static long[] seeds(@Nullable Object value, String where) {
    if (value instanceof Number) {
      long n = ((Number) value).longValue();
      if (n < 1 || n > 1000) {
        throw new ScenarioException(where + " as a count must be between 1 and 1000, was " + n);
      }
      long[] seeds = new long[(int) n];
      for (int i = 0; i < n; i++) {
        seeds[i] = i + 1;
      }
      return seeds;
    }
    if (value instanceof List) {
      List<?> list = (List<?>) value;
      if (list.isEmpty()) {
        throw new ScenarioException(where + " must not be empty");
      }
      long[] seeds = new long[list.size()];
      for (int i = 0; i < seeds.length; i++) {
        if (!(list.get(i) instanceof Number)) {
          throw new ScenarioException(where + "[" + i + "] must be a whole number, was " + list.get(i));
        }
        seeds[i] = ((Number) list.get(i)).longValue();
      }
      return seeds;
    }
    throw new ScenarioException(where + " must be a count or a list of whole numbers, was " + value);
  }

  private static Load load(Section s) {
    s.only("perSecond", "peers", "criticality");
    Load load = Load.perSecond(s.number("perSecond"));
    if (s.has("peers")) {
      load = load.peers((int) s.whole("peers"));
    }
    if (s.has("criticality")) {
      Section mix = s.section("criticality");
      for (String level : mix.keys()) {
        Criticality c;
        try {
          c = Criticality.valueOf(level.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
          throw new ScenarioException(mix.path + "." + level + " is not a criticality (CRITICAL_PLUS, CRITICAL,"
              + " SHEDDABLE_PLUS, SHEDDABLE)");
        }
        load = load.criticality(c, mix.number(level));
      }
    }
    return load;
  }

  private static Dependency dependency(Section s, String name) {
    s.only("name", "p50", "p99", "capacity", "queueLimit", "errorRate", "incidents");
    Duration p50 = s.duration("p50", null);
    Duration p99 = s.duration("p99", null);
    String named = s.string("name", name);
    Dependency d = s.check(() -> Dependency.latency(p50, p99).named(named));
    if (s.has("capacity")) {
      int capacity = (int) s.whole("capacity");
      Dependency base = d;
      d = s.check(() -> base.capacity(capacity));
    }
    if (s.has("queueLimit")) {
      int limit = (int) s.whole("queueLimit");
      Dependency base = d;
      d = s.check(() -> base.overload(dev.quell.sim.Overload.boundedQueue(limit)));
    }
    if (s.has("errorRate")) {
      double rate = s.number("errorRate");
      Dependency base = d;
      d = s.check(() -> base.errorRate(rate));
    }
    if (s.has("incidents")) {
      List<Section> incidents = s.sections("incidents");
      for (int i = 0; i < incidents.size(); i++) {
        d = d.incident(incident(incidents.get(i)));
      }
    }
    return d;
  }

  private static Incident incident(Section s) {
    s.only("brownout", "failing", "outage", "from", "to");
    int kinds = (s.has("brownout") ? 1 : 0) + (s.has("failing") ? 1 : 0) + (s.has("outage") ? 1 : 0);
    if (kinds != 1) {
      throw new ScenarioException(s.path + " must be exactly one of brownout: FACTOR, failing: RATE, outage: true");
    }
    Incident i;
    if (s.has("brownout")) {
      double factor = s.number("brownout");
      i = s.check(() -> Incident.brownout(factor));
    } else if (s.has("failing")) {
      double rate = s.number("failing");
      i = s.check(() -> Incident.failing(rate));
    } else {
      if (!Boolean.TRUE.equals(s.raw("outage"))) {
        throw new ScenarioException(s.path + ".outage must be true");
      }
      i = Incident.outage();
    }
    if (s.has("from") != s.has("to")) {
      throw new ScenarioException(s.path + ": give both from: and to:, or neither (the whole run)");
    }
    if (s.has("from")) {
      Duration from = s.duration("from", null);
      Duration to = s.duration("to", null);
      Incident whole = i;
      i = s.check(() -> whole.between(from, to));
    }
    return i;
  }

  /** A policy factory from a policy section; checked once now, so mistakes surface before any run. */
  static Function<TimeSource, Resilience> policy(Section s, String defaultName) {
    s.only("name", "attempts", "deadline", "attemptTimeout", "backoff", "budget");
    Function<TimeSource, Resilience> factory = clock -> build(s, defaultName, clock);
    factory.apply(TimeSource.system());
    return factory;
  }

  private static Resilience build(Section s, String defaultName, TimeSource clock) {
    Duration deadline = s.optionalDuration("deadline");
    Duration attemptTimeout = s.optionalDuration("attemptTimeout");
    Backoff backoff = s.has("backoff") ? backoff(s) : null;
    RetryBudget budget = s.has("budget") ? budget(s, clock) : null;
    try {
      return Resilience.DEFAULT.with(p -> {
        p.name(s.string("name", defaultName));
        if (s.has("attempts")) {
          p.attempts((int) s.whole("attempts"));
        }
        if (s.has("deadline")) {
          if (deadline == null) {
            p.noDeadline();
          } else {
            p.deadline(deadline);
          }
        }
        if (s.has("attemptTimeout")) {
          if (attemptTimeout == null) {
            p.noAttemptTimeout();
          } else {
            p.attemptTimeout(attemptTimeout);
          }
        }
        if (backoff != null) {
          p.backoff(backoff);
        }
        if (budget != null) {
          p.budget(budget);
        }
      });
    } catch (ResilienceConfigurationException e) {
      throw new ScenarioException(s.path + ": " + e.getMessage(), e);
    }
  }

  private static Backoff backoff(Section s) {
    Object raw = s.raw("backoff");
    String where = s.path + ".backoff";
    if ("none".equals(raw)) {
      return Backoff.NONE;
    }
    if (raw instanceof String) {
      return Backoff.exponential(Durations.parse((String) raw, where));
    }
    Section b = s.section("backoff");
    b.only("exponential", "constant", "factor", "max", "jitter");
    if (b.has("constant")) {
      if (b.has("exponential") || b.has("factor") || b.has("max") || b.has("jitter")) {
        throw new ScenarioException(where + ": a constant backoff takes no exponential, factor, max or jitter");
      }
      return Backoff.constant(b.duration("constant", null));
    }
    if (!b.has("exponential")) {
      throw new ScenarioException(where + " needs exponential: BASE or constant: DELAY");
    }
    Duration base = b.duration("exponential", null);
    Backoff.Exponential e = Backoff.exponential(base);
    try {
      if (b.has("factor")) {
        e = e.withFactor(b.number("factor"));
      }
      if (b.has("max")) {
        e = e.withMax(b.duration("max", null));
      }
      if (b.has("jitter")) {
        String j = b.string("jitter", "full").toUpperCase(Locale.ROOT);
        try {
          e = e.withJitter(Jitter.valueOf(j));
        } catch (IllegalArgumentException bad) {
          throw new ScenarioException(where + ".jitter must be full, equal or none, was " + b.raw("jitter"));
        }
      }
    } catch (ResilienceConfigurationException bad) {
      throw new ScenarioException(where + ": " + bad.getMessage(), bad);
    }
    return e;
  }

  private static RetryBudget budget(Section s, TimeSource clock) {
    Object raw = s.raw("budget");
    String where = s.path + ".budget";
    if ("none".equals(raw)) {
      return RetryBudget.NONE;
    }
    if ("automatic".equals(raw)) {
      return RetryBudget.AUTOMATIC;
    }
    if (raw instanceof String) {
      throw new ScenarioException(where + " must be none, automatic, {fraction, minimumPerSecond},"
          + " {maxTokens, tokenRatio} or {tokens, period}, was \"" + raw + "\"");
    }
    Section b = s.section("budget");
    b.only("fraction", "minimumPerSecond", "maxTokens", "tokenRatio", "tokens", "period");
    try {
      if (b.has("fraction") || b.has("minimumPerSecond")) {
        return RetryBudget.of(b.has("fraction") ? b.number("fraction") : RetryBudget.DEFAULT_FRACTION,
            b.has("minimumPerSecond") ? b.number("minimumPerSecond") : RetryBudget.DEFAULT_MINIMUM_PER_SECOND, clock);
      }
      if (b.has("maxTokens") || b.has("tokenRatio")) {
        return RetryBudget.feedback(b.has("maxTokens") ? (int) b.whole("maxTokens") : 100,
            b.has("tokenRatio") ? b.number("tokenRatio") : 0.1);
      }
      if (b.has("tokens")) {
        return RetryBudget.replenishing((int) b.whole("tokens"), b.duration("period", Duration.ofSeconds(1)), clock);
      }
    } catch (ResilienceConfigurationException e) {
      throw new ScenarioException(where + ": " + e.getMessage(), e);
    }
    throw new ScenarioException(where + " needs fraction/minimumPerSecond, maxTokens/tokenRatio or tokens/period");
  }

  /** Builds the target tree of one arm. */
  private static final class Builder {
    private final Map<String, Dependency> dependencies;
    private final Map<String, Section> services;
    private final Section defaultPolicy;
    private final Map<String, Section> named;
    private final Map<String, Target> built = new LinkedHashMap<>();

    Builder(Map<String, Dependency> dependencies, Map<String, Section> services, Section defaultPolicy,
        Map<String, Section> named) {
      this.dependencies = dependencies;
      this.services = services;
      this.defaultPolicy = defaultPolicy;
      this.named = named;
    }

    Target target(String name, List<String> path) {
      Target done = built.get(name);
      if (done != null) {
        return done;
      }
      Dependency d = dependencies.get(name);
      if (d != null) {
        built.put(name, d);
        return d;
      }
      Section s = services.get(name);
      if (s == null) {
        throw new ScenarioException("services." + path.get(path.size() - 1) + " calls '" + name
            + "', which is neither a dependency nor a service");
      }
      if (path.contains(name)) {
        throw new ScenarioException("services: " + String.join(" → ", path) + " → " + name + " is a cycle");
      }
      List<String> deeper = new ArrayList<>(path);
      deeper.add(name);
      s.only("calls");
      Service service = Service.named(name);
      if (s.has("calls")) {
        List<?> calls = s.list("calls");
        for (int i = 0; i < calls.size(); i++) {
          Object call = calls.get(i);
          String to;
          Section policy = defaultPolicy;
          if (call instanceof String) {
            to = (String) call;
          } else {
            Section c = Section.of(s.path + ".calls[" + i + "]", call);
            c.only("to", "policy");
            to = c.string("to", "");
            if (c.has("policy")) {
              String policyName = c.string("policy", "");
              policy = named.get(policyName);
              if (policy == null) {
                throw new ScenarioException(c.path + ".policy names '" + policyName
                    + "', which is not among the arm's policies (" + String.join(", ", named.keySet()) + ")");
              }
            }
          }
          service = service.calls(target(to, deeper), policy(policy, to));
        }
      }
      built.put(name, service);
      return service;
    }
  }

  /** A YAML mapping with the path that leads to it, for messages. */
  static final class Section {
    final String path;
    private final Map<?, ?> map;

    private Section(String path, Map<?, ?> map) {
      this.path = path;
      this.map = map;
    }

    static Section of(String path, @Nullable Object value) {
      if (!(value instanceof Map)) {
        throw new ScenarioException(path + " must be a mapping of keys to values, was "
            + (value == null ? "empty" : "\"" + value + "\""));
      }
      return new Section(path, (Map<?, ?>) value);
    }

    Section at(String newPath) {
      return new Section(newPath, map);
    }

    void only(String... allowed) {
      List<String> ok = List.of(allowed);
      for (Object key : map.keySet()) {
        if (!ok.contains(String.valueOf(key))) {
          throw new ScenarioException(path + ": unknown key '" + key + "' (allowed here: " + String.join(", ", ok)
              + ")");
        }
      }
    }

    boolean has(String key) {
      return map.containsKey(key);
    }

    @Nullable Object raw(String key) {
      return map.get(key);
    }

    List<String> keys() {
      List<String> keys = new ArrayList<>();
      for (Object k : map.keySet()) {
        keys.add(String.valueOf(k));
      }
      return keys;
    }

    Section section(String key) {
      if (!has(key)) {
        throw new ScenarioException(path + "." + key + " is missing");
      }
      return of(path + "." + key, map.get(key));
    }

    List<?> list(String key) {
      Object v = map.get(key);
      if (!(v instanceof List)) {
        throw new ScenarioException(path + "." + key + " must be a list");
      }
      return (List<?>) v;
    }

    List<Section> sections(String key) {
      List<?> list = list(key);
      List<Section> sections = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        sections.add(of(path + "." + key + "[" + i + "]", list.get(i)));
      }
      return sections;
    }

    String string(String key, String fallback) {
      Object v = map.get(key);
      if (v == null) {
        return fallback;
      }
      if (v instanceof Map || v instanceof List) {
        throw new ScenarioException(path + "." + key + " must be a single value");
      }
      return String.valueOf(v);
    }

    double number(String key) {
      Object v = map.get(key);
      if (!(v instanceof Number)) {
        throw new ScenarioException(path + "." + key + " must be a number, was " + (v == null ? "missing" : v));
      }
      return ((Number) v).doubleValue();
    }

    long whole(String key) {
      Object v = map.get(key);
      if (!(v instanceof Integer || v instanceof Long)) {
        throw new ScenarioException(path + "." + key + " must be a whole number, was " + (v == null ? "missing" : v));
      }
      return ((Number) v).longValue();
    }

    Duration duration(String key, @Nullable Duration fallback) {
      Object v = map.get(key);
      if (v == null) {
        if (fallback == null) {
          throw new ScenarioException(path + "." + key + " is missing");
        }
        return fallback;
      }
      if (v instanceof Number) {
        throw new ScenarioException(path + "." + key + " needs a unit, for example " + v + "ms or " + v + "s");
      }
      return Durations.parse(String.valueOf(v), path + "." + key);
    }

    /** A duration, or null for "none". */
    @Nullable Duration optionalDuration(String key) {
      return "none".equals(map.get(key)) || !has(key) ? null : duration(key, null);
    }

    /** Runs a model method and turns its complaint into one that says where in the file. */
    <T> T check(java.util.function.Supplier<T> make) {
      try {
        return make.get();
      } catch (IllegalArgumentException e) {
        throw new ScenarioException(path + ": " + e.getMessage(), e);
      }
    }
  }
}
