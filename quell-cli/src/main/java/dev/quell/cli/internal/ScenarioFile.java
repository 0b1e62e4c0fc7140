package dev.quell.cli.internal;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Hedge;
import dev.quell.Jitter;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import dev.quell.sim.Dependency;
import dev.quell.sim.Incident;
import dev.quell.sim.Load;
import dev.quell.sim.Overload;
import dev.quell.sim.Scenario;
import dev.quell.sim.Service;
import dev.quell.sim.Simulate;
import dev.quell.sim.Simulation;
import dev.quell.sim.Target;
import dev.quell.sim.internal.Text;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.MalformedInputException;
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
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * A scenario written in YAML (see docs/simulation.md for the format). Every key and value is checked
 * before anything runs: a misspelt key, a duplicate key, a value out of range or an incident outside
 * the run is a {@link ScenarioException} whose one-line message names the key path, the value and
 * what is allowed there.
 *
 * <p>The parsed YAML tree is kept, so that a sweep can change one key and read the scenario again,
 * and a report can show the scenario it ran.
 */
public final class ScenarioFile {
  /** The keys of a policy. */
  static final List<String> POLICY_KEYS = List.of("name", "attempts", "deadline", "attemptTimeout", "backoff", "budget",
      "breaker", "limiter", "limiters", "hedge", "measuredTiming");

  private final Scenario scenario;
  private final long @Nullable [] seeds;
  private final Map<String, Object> tree;
  private final String source;

  private ScenarioFile(Scenario scenario, long @Nullable [] seeds, Map<String, Object> tree, String source) {
    this.scenario = scenario;
    this.seeds = seeds;
    this.tree = tree;
    this.source = source;
  }

  /** The scenario the file describes. */
  public Scenario scenario() {
    return scenario;
  }

  /** The seeds the file asks for, if it names any. */
  public Optional<long[]> seeds() {
    return Optional.ofNullable(seeds).map(long[]::clone);
  }

  /** The YAML as read: nested maps, lists and scalars (a deep copy, free to change). */
  public Map<String, Object> tree() {
    return Trees.copy(tree);
  }

  /** The text it was read from. */
  public String source() {
    return source;
  }

  /** Reads and checks a scenario file. */
  public static ScenarioFile read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (MalformedInputException e) {
      throw new ScenarioException(file + " is not UTF-8 text");
    } catch (IOException e) {
      throw new ScenarioException("cannot read scenario file " + file + ": " + SimulateCommand.why(e), e);
    }
    String fallbackName = file.getFileName().toString().replaceFirst("\\.ya?ml$", "");
    return parse(text, fallbackName, file.getFileName().toString());
  }

  /** Reads a scenario from YAML text; {@code origin} names it in messages. */
  public static ScenarioFile parse(String yaml, String fallbackName, String origin) {
    Object root = load(yaml, origin);
    if (root == null) {
      throw new ScenarioException(origin + " is empty: a scenario needs at least load:, dependency: and a policy");
    }
    return of(root, fallbackName, origin, yaml);
  }

  /** Reads a scenario from YAML text. */
  public static ScenarioFile parse(String yaml, String fallbackName) {
    return parse(yaml, fallbackName, fallbackName);
  }

  /** Checks a YAML tree (as {@link #tree()} gives it, perhaps changed) and builds its scenario. */
  public static ScenarioFile of(Object root, String fallbackName, String origin, String source) {
    Section top = Section.of(origin, "", root);
    @SuppressWarnings("unchecked")
    Map<String, Object> tree = Trees.copy((Map<String, Object>) top.map);
    return new Parser(origin).scenario(top, fallbackName, tree, source);
  }

  static @Nullable Object load(String yaml, String origin) {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    try {
      return new Yaml(new SafeConstructor(options)).load(yaml);
    } catch (MarkedYAMLException e) {
      Mark mark = e.getProblemMark();
      String problem = e.getProblem() == null ? "not valid YAML" : e.getProblem().trim();
      if (problem.startsWith("found duplicate key")) {
        problem = "duplicate key '" + problem.substring("found duplicate key".length()).trim()
            + "' (each key may appear once in a mapping)";
      } else {
        problem = "not valid YAML: " + problem;
      }
      throw new ScenarioException(origin + (mark == null ? "" : " line " + (mark.getLine() + 1) + ", column "
          + (mark.getColumn() + 1)) + ": " + oneLine(problem), e);
    } catch (YAMLException e) {
      throw new ScenarioException(origin + ": not valid YAML: " + oneLine(String.valueOf(e.getMessage())), e);
    }
  }

  public static String oneLine(String s) {
    return s.replaceAll("\\s*\\R\\s*", " ").trim();
  }

  /** Seeds as a count ("3" means 1, 2, 3) or a list of distinct whole numbers. */
  static long[] seeds(@Nullable Object value, String where) {
    if (value instanceof Integer || value instanceof Long || value instanceof BigInteger) {
      Number n = (Number) value;
      if (value instanceof BigInteger || n.longValue() < 1 || n.longValue() > 1000) {
        throw new ScenarioException(where + " as a count must be from 1 to 1000, was " + value);
      }
      long[] seeds = new long[n.intValue()];
      for (int i = 0; i < seeds.length; i++) {
        seeds[i] = i + 1;
      }
      return seeds;
    }
    if (value instanceof List) {
      List<?> list = (List<?>) value;
      if (list.isEmpty() || list.size() > 1000) {
        throw new ScenarioException(where + " as a list must have from 1 to 1000 seeds, had " + list.size());
      }
      long[] seeds = new long[list.size()];
      Set<Long> seen = new HashSet<>();
      for (int i = 0; i < seeds.length; i++) {
        Object v = list.get(i);
        if (!(v instanceof Integer || v instanceof Long)) {
          throw new ScenarioException(where + "[" + i + "] must be a whole number, was " + show(v));
        }
        seeds[i] = ((Number) v).longValue();
        if (!seen.add(seeds[i])) {
          throw new ScenarioException(where + " names seed " + seeds[i] + " twice; each seed runs once");
        }
      }
      return seeds;
    }
    throw new ScenarioException(where + " must be a count from 1 to 1000 or a list of whole numbers, was "
        + show(value));
  }

  static String show(@Nullable Object v) {
    if (v == null) {
      return "empty";
    }
    if (v instanceof String) {
      return "\"" + v + "\"";
    }
    if (v instanceof Map) {
      return "a mapping";
    }
    if (v instanceof List) {
      return "a list";
    }
    if (v instanceof Boolean) {
      // an unquoted off, no, on or yes is a boolean to YAML: the user wrote a word and is owed why it became one
      return (Boolean) v ? "true (YAML reads an unquoted on, yes or true as true)"
          : "false (YAML reads an unquoted off, no or false as false)";
    }
    return String.valueOf(v);
  }

  /** {@link #show} for a key that takes {@code none}: a false there was meant as none, so say to write none. */
  static String showWhereNoneIsAllowed(@Nullable Object v) {
    return Boolean.FALSE.equals(v) ? show(v).replaceFirst("\\)$", "; write none to turn it off)") : show(v);
  }

  /** Speaks YAML where the core's messages speak Java. */
  static String yamlHints(String message) {
    return message.replace("RetryBudget.NONE", "budget: none").replace("RetryBudget.AUTOMATIC", "budget: automatic");
  }

  /** Reads one scenario; knows the file's name for messages. */
  private static final class Parser {
    private final String origin;

    Parser(String origin) {
      this.origin = origin;
    }

    ScenarioFile scenario(Section top, String fallbackName, Map<String, Object> tree, String source) {
      top.only("name", "description", "duration", "seeds", "load", "dependency", "dependencies", "services",
          "target", "policy", "arms");
      String name = top.has("name") ? top.text("name") : fallbackName;
      if (name.isBlank()) {
        throw top.error("name", "must not be blank");
      }
      String description = top.has("description") ? top.text("description") : "";
      Duration duration = top.has("duration") ? top.duration("duration") : Duration.ofMinutes(1);
      if (duration.compareTo(Duration.ofSeconds(1)) < 0 || duration.compareTo(Simulation.MAX_DURATION) > 0) {
        throw top.error("duration", "must be from 1s to 24h, was " + Text.duration(duration));
      }
      if (!top.has("load")) {
        throw top.missing("load", "load: {perSecond: 500}");
      }
      Load load = load(top.section("load"));

      Map<String, Dependency> dependencies = new LinkedHashMap<>();
      if (top.has("dependency") && top.has("dependencies")) {
        throw new ScenarioException(origin + ": give either dependency: (one) or dependencies: (a map by name), not both");
      }
      if (top.has("dependency")) {
        Dependency d = dependency(top.section("dependency"), "dependency", duration);
        dependencies.put(d.name(), d);
      }
      if (top.has("dependencies")) {
        Section all = top.section("dependencies");
        if (all.keys().isEmpty()) {
          throw all.itself("must name at least one dependency");
        }
        for (String key : all.keys()) {
          dependencies.put(key, dependency(all.section(key), key, duration));
        }
      }
      if (dependencies.isEmpty()) {
        throw new ScenarioException(origin + ": describe the dependency, for example"
            + " dependency: {p50: 20ms, p99: 100ms, capacity: 400}");
      }
      Map<String, Section> services = new LinkedHashMap<>();
      if (top.has("services")) {
        Section all = top.section("services");
        for (String key : all.keys()) {
          if (dependencies.containsKey(key)) {
            throw all.error(key, "is both a dependency and a service; give them different names");
          }
          services.put(key, all.section(key));
        }
      }
      String target;
      if (top.has("target")) {
        target = top.text("target");
        if (!dependencies.containsKey(target) && !services.containsKey(target)) {
          throw top.error("target", "must name a dependency or a service (" + String.join(", ",
              names(dependencies, services)) + "), was " + show(target));
        }
      } else if (services.isEmpty() && dependencies.size() == 1) {
        target = dependencies.keySet().iterator().next();
      } else {
        throw top.missing("target", "target: NAME, where the load goes (one of " + String.join(", ",
            names(dependencies, services)) + ")");
      }

      List<Section> armSections = new ArrayList<>();
      if (top.has("arms")) {
        if (top.has("policy")) {
          throw new ScenarioException(origin + ": give policy: inside each arm, not beside arms:");
        }
        armSections.addAll(top.sections("arms"));
        if (armSections.isEmpty()) {
          throw top.error("arms", "must have at least one arm, for example arms: [{name: budget on, policy: {}}]");
        }
      } else if (top.has("policy")) {
        Map<String, Object> single = new LinkedHashMap<>();
        single.put("name", "policy");
        single.put("policy", top.raw("policy"));
        armSections.add(Section.of(origin, "", single));
      } else {
        throw top.missing("arms", "arms: (a list of {name, policy}) or a single policy:");
      }
      List<Scenario.Arm> arms = new ArrayList<>();
      Set<String> armNames = new HashSet<>();
      for (int i = 0; i < armSections.size(); i++) {
        Section arm = armSections.get(i);
        arm.only("name", "policy", "policies");
        String armName = arm.has("name") ? arm.text("name") : "arm " + (i + 1);
        if (!armNames.add(armName)) {
          throw arm.error("name", "repeats the arm name " + show(armName) + "; each arm needs its own");
        }
        Section entryPolicy = arm.has("policy") ? arm.section("policy") : arm.empty("policy");
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
      long[] seeds = top.has("seeds") ? seeds(top.raw("seeds"), top.where("seeds")) : null;
      return new ScenarioFile(Scenario.of(name, description, arms), seeds, tree, source);
    }

    private List<String> names(Map<String, Dependency> dependencies, Map<String, Section> services) {
      List<String> all = new ArrayList<>(dependencies.keySet());
      all.addAll(services.keySet());
      return all;
    }

    private Load load(Section s) {
      s.only("perSecond", "peers", "criticality");
      if (!s.has("perSecond")) {
        throw s.missing("perSecond", "perSecond: 500 (calls a second this pod offers)");
      }
      double rate = s.number("perSecond");
      if (!(rate > 0)) {
        throw s.error("perSecond", "must be a number of calls per second above 0, was " + Text.number(rate));
      }
      Load load = Load.perSecond(rate);
      if (s.has("peers")) {
        load = load.peers((int) s.whole("peers", 0, 1_000_000, "other pods offering the same load"));
      }
      if (s.has("criticality")) {
        Section mix = s.section("criticality");
        if (mix.keys().isEmpty()) {
          throw mix.itself("must give at least one level, for example {CRITICAL: 0.8, SHEDDABLE: 0.2}");
        }
        for (String level : mix.keys()) {
          Criticality c;
          try {
            c = Criticality.valueOf(level.toUpperCase(Locale.ROOT));
          } catch (IllegalArgumentException e) {
            throw mix.error(level, "is not a criticality: use CRITICAL_PLUS, CRITICAL, SHEDDABLE_PLUS or SHEDDABLE");
          }
          double share = mix.number(level);
          if (!(share > 0)) {
            throw mix.error(level, "must be a share above 0, was " + Text.number(share));
          }
          load = load.criticality(c, share);
        }
      }
      return load;
    }

    private Dependency dependency(Section s, String name, Duration run) {
      s.only("name", "p50", "p99", "tail", "capacity", "overload", "errorRate", "incidents");
      if (!s.has("p50") || !s.has("p99")) {
        throw s.missing(s.has("p50") ? "p99" : "p50", "p50: 20ms and p99: 100ms (its latency when healthy)");
      }
      Duration p50 = s.duration("p50");
      Duration p99 = s.duration("p99");
      if (p50.isNegative() || p50.isZero()) {
        throw s.error("p50", "must be above 0, was " + Text.duration(p50));
      }
      if (p99.compareTo(p50) < 0) {
        throw s.error("p99", "must be at least p50 (" + Text.duration(p50) + "), was " + Text.duration(p99));
      }
      if (p99.compareTo(Duration.ofHours(1)) > 0) {
        throw s.error("p99", "must be at most 1h, was " + Text.duration(p99));
      }
      String named = s.has("name") ? s.text("name") : name;
      if (named.isBlank()) {
        throw s.error("name", "must not be blank");
      }
      Dependency d = Dependency.latency(p50, p99).named(named);
      if (s.has("tail")) {
        d = tail(s, d);
      }
      if (s.has("capacity")) {
        d = d.capacity((int) s.whole("capacity", 1, 1_000_000_000, "attempts it serves at once"));
      }
      if (s.has("overload")) {
        d = d.overload(overload(s));
      }
      if (s.has("errorRate")) {
        double rate = s.number("errorRate");
        if (!(rate >= 0 && rate <= 1)) {
          throw s.error("errorRate", "must be a share from 0 to 1, was " + Text.number(rate));
        }
        d = d.errorRate(rate);
      }
      if (s.has("incidents")) {
        for (Section incident : s.sections("incidents")) {
          d = d.incident(incident(incident, run));
        }
      }
      return d;
    }

    /** {@code tail: {share: 0.02, p50: 400ms, p99: 1s}}: that share of attempts is slow. */
    private Dependency tail(Section s, Dependency d) {
      Section t = s.section("tail");
      t.only("share", "p50", "p99");
      if (!t.has("share") || !t.has("p50") || !t.has("p99")) {
        throw t.missing(!t.has("share") ? "share" : !t.has("p50") ? "p50" : "p99",
            "share: 0.02, p50: 400ms and p99: 1s (that share of attempts takes this slower latency)");
      }
      double share = t.number("share");
      if (!(share > 0 && share < 1)) {
        throw t.error("share", "must be a share above 0 and below 1, was " + Text.number(share));
      }
      Duration p50 = t.duration("p50");
      Duration p99 = t.duration("p99");
      if (p50.isNegative() || p50.isZero()) {
        throw t.error("p50", "must be above 0, was " + Text.duration(p50));
      }
      if (p99.compareTo(p50) < 0) {
        throw t.error("p99", "must be at least p50 (" + Text.duration(p50) + "), was " + Text.duration(p99));
      }
      if (p99.compareTo(Duration.ofHours(1)) > 0) {
        throw t.error("p99", "must be at most 1h, was " + Text.duration(p99));
      }
      return d.tail(share, p50, p99);
    }

    private Overload overload(Section s) {
      Object raw = s.raw("overload");
      String allowed = "unboundedQueue, {boundedQueue: WAITING} or {concurrencyLimit: LIMIT}";
      if ("unboundedQueue".equals(raw)) {
        return Overload.unboundedQueue();
      }
      if (!(raw instanceof Map)) {
        throw s.error("overload", "must be " + allowed + ", was " + show(raw));
      }
      Section o = s.section("overload");
      if (o.keys().size() != 1) {
        throw o.itself("must be exactly one of " + allowed);
      }
      o.only("boundedQueue", "concurrencyLimit");
      if (o.has("boundedQueue")) {
        return Overload.boundedQueue((int) o.whole("boundedQueue", 0, 1_000_000_000, "attempts that may wait"));
      }
      return Overload.concurrencyLimit((int) o.whole("concurrencyLimit", 1, 1_000_000_000,
          "attempts admitted at once"));
    }

    private Incident incident(Section s, Duration run) {
      s.only("brownout", "failing", "outage", "from", "to");
      int kinds = (s.has("brownout") ? 1 : 0) + (s.has("failing") ? 1 : 0) + (s.has("outage") ? 1 : 0);
      if (kinds != 1) {
        throw s.itself("must be exactly one of brownout: FACTOR, failing: RATE or outage: true");
      }
      Incident i;
      if (s.has("brownout")) {
        double factor = s.number("brownout");
        if (!(factor >= 1)) {
          throw s.error("brownout", "must be a slowdown factor of at least 1, was " + Text.number(factor));
        }
        i = Incident.brownout(factor);
      } else if (s.has("failing")) {
        double rate = s.number("failing");
        if (!(rate > 0 && rate <= 1)) {
          throw s.error("failing", "must be a share above 0 and at most 1, was " + Text.number(rate));
        }
        i = Incident.failing(rate);
      } else {
        if (!Boolean.TRUE.equals(s.raw("outage"))) {
          throw s.error("outage", "must be true, was " + show(s.raw("outage")));
        }
        i = Incident.outage();
      }
      if (s.has("from") != s.has("to")) {
        throw s.missing(s.has("from") ? "to" : "from", "both from: and to:, or neither (the whole run)");
      }
      if (s.has("from")) {
        Duration from = s.duration("from");
        Duration to = s.duration("to");
        if (from.isNegative()) {
          throw s.error("from", "must not be negative, was " + Text.duration(from));
        }
        if (from.compareTo(run) >= 0) {
          throw s.error("from", "is at or after the end of the run (duration " + Text.duration(run)
              + "), so the incident would never happen; it must start before " + Text.duration(run) + ", was "
              + Text.duration(from));
        }
        if (to.compareTo(from) <= 0) {
          throw s.error("to", "must be after from (" + Text.duration(from) + "), was " + Text.duration(to));
        }
        i = i.between(from, to);
      }
      return i;
    }

    /**
     * A policy factory from a policy section; checked once now, so mistakes surface before any run.
     * Every run gets its own budget, breaker and limiters, built on that run's clock.
     */
    Function<TimeSource, Resilience> policy(Section s, String defaultName) {
      s.only(POLICY_KEYS.toArray(new String[0]));
      if (s.has("limiter") && s.has("limiters")) {
        throw s.itself("gives both limiter: and limiters:; give one limiter, or a list of them under limiters:");
      }
      Function<TimeSource, Resilience> factory = clock -> build(s, defaultName, clock);
      Resilience unused = factory.apply(TimeSource.system()); // built once now, so a bad policy fails with its key
      return factory;
    }

    private Resilience build(Section s, String defaultName, TimeSource clock) {
      Duration deadline = s.optionalDuration("deadline");
      Duration attemptTimeout = s.optionalDuration("attemptTimeout");
      Backoff backoff = s.has("backoff") ? backoff(s) : null;
      RetryBudget budget = s.has("budget") ? budget(s, clock) : null;
      String name = s.has("name") ? s.text("name") : defaultName;
      int attempts = s.has("attempts") ? (int) s.whole("attempts", 1, 1000, "attempts a call may make, the first included")
          : 0;
      CircuitBreaker.Config breaker = s.has("breaker") ? breaker(s) : null;
      List<Limiter> limiters = limiters(s, clock);
      Hedge hedge = s.has("hedge") ? hedge(s) : null;
      MeasuredTiming timing = s.has("measuredTiming") ? measuredTiming(s) : null;
      try {
        return Resilience.DEFAULT.with(p -> {
          p.name(name);
          p.timeSource(clock); // first: a rate limiter refills from the clock the policy runs on
          if (attempts > 0) {
            p.attempts(attempts);
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
          if (breaker != null) {
            p.breaker(breaker);
          }
          for (Limiter l : limiters) {
            p.limiter(l);
          }
          if (hedge != null) {
            p.hedge(hedge);
          }
          if (timing != null) {
            p.measuredTiming(timing);
          }
        });
      } catch (ResilienceConfigurationException | IllegalArgumentException e) {
        throw new ScenarioException(s.label() + ": " + yamlHints(oneLine(String.valueOf(e.getMessage()))), e);
      }
    }

    private Backoff backoff(Section s) {
      Object raw = s.raw("backoff");
      if ("none".equals(raw)) {
        return Backoff.NONE;
      }
      if (raw instanceof String) {
        return Backoff.exponential(positive(s, "backoff", s.duration("backoff")));
      }
      if (!(raw instanceof Map)) {
        throw s.error("backoff", "must be none, a base such as 50ms, {exponential: 50ms, factor: 2, max: 5s,"
            + " jitter: full} or {constant: 100ms}, was " + showWhereNoneIsAllowed(raw));
      }
      Section b = s.section("backoff");
      b.only("exponential", "constant", "factor", "max", "jitter");
      if (b.has("constant")) {
        if (b.has("exponential") || b.has("factor") || b.has("max") || b.has("jitter")) {
          throw b.itself("is a constant backoff, which takes no exponential, factor, max or jitter");
        }
        return Backoff.constant(positive(b, "constant", b.duration("constant")));
      }
      if (!b.has("exponential")) {
        throw b.missing("exponential", "exponential: BASE or constant: DELAY");
      }
      Backoff.Exponential e = Backoff.exponential(positive(b, "exponential", b.duration("exponential")));
      try {
        if (b.has("factor")) {
          e = e.withFactor(b.number("factor"));
        }
        if (b.has("max")) {
          e = e.withMax(b.duration("max"));
        }
        if (b.has("jitter")) {
          String j = b.text("jitter").toUpperCase(Locale.ROOT);
          try {
            e = e.withJitter(Jitter.valueOf(j));
          } catch (IllegalArgumentException bad) {
            throw b.error("jitter", "must be full, equal or none, was " + show(b.raw("jitter")));
          }
        }
      } catch (ResilienceConfigurationException bad) {
        throw new ScenarioException(b.label() + ": " + yamlHints(oneLine(String.valueOf(bad.getMessage()))), bad);
      }
      return e;
    }

    private Duration positive(Section s, String key, Duration d) {
      if (d.isNegative()) {
        throw s.error(key, "must not be negative, was " + Text.duration(d));
      }
      return d;
    }

    private RetryBudget budget(Section s, TimeSource clock) {
      Object raw = s.raw("budget");
      String allowed = "none, automatic, {fraction: 0.1, minimumPerSecond: 3}, {maxTokens: 100, tokenRatio: 0.1}"
          + " or {tokens: 10, period: 1s}";
      if ("none".equals(raw)) {
        return RetryBudget.NONE;
      }
      if ("automatic".equals(raw)) {
        return RetryBudget.AUTOMATIC;
      }
      if (!(raw instanceof Map)) {
        throw s.error("budget", "must be " + allowed + ", was " + showWhereNoneIsAllowed(raw));
      }
      Section b = s.section("budget");
      b.only("fraction", "minimumPerSecond", "maxTokens", "tokenRatio", "tokens", "period");
      boolean bucket = b.has("fraction") || b.has("minimumPerSecond");
      boolean feedback = b.has("maxTokens") || b.has("tokenRatio");
      boolean replenishing = b.has("tokens") || b.has("period");
      if ((bucket ? 1 : 0) + (feedback ? 1 : 0) + (replenishing ? 1 : 0) != 1) {
        throw b.itself("must be one kind of budget: " + allowed);
      }
      try {
        if (bucket) {
          return RetryBudget.of(b.has("fraction") ? b.number("fraction") : RetryBudget.DEFAULT_FRACTION,
              b.has("minimumPerSecond") ? b.number("minimumPerSecond") : RetryBudget.DEFAULT_MINIMUM_PER_SECOND,
              clock);
        }
        if (feedback) {
          return RetryBudget.feedback(b.has("maxTokens") ? (int) b.whole("maxTokens", 1, 1_000_000, "tokens") : 100,
              b.has("tokenRatio") ? b.number("tokenRatio") : 0.1);
        }
        if (!b.has("tokens")) {
          throw b.missing("tokens", "tokens: 10 beside period:");
        }
        return RetryBudget.replenishing((int) b.whole("tokens", 1, 1_000_000, "tokens a period"),
            b.has("period") ? b.duration("period") : Duration.ofSeconds(1), clock);
      } catch (ResilienceConfigurationException e) {
        throw new ScenarioException(b.label() + ": " + yamlHints(oneLine(String.valueOf(e.getMessage()))), e);
      }
    }

    /** {@code breaker: default}, {@code {}} or a mapping of the Config's settings; null for {@code none}. */
    private CircuitBreaker.@Nullable Config breaker(Section s) {
      Object raw = s.raw("breaker");
      String allowed = "none, default, or a mapping of failureRate, minimumCalls, window, consecutiveFailures,"
          + " slowCalls: {duration, rate}, probes, probeSuccesses, breakDuration, maxBreakDuration, ramp";
      if ("none".equals(raw)) {
        return null;
      }
      if ("default".equals(raw)) {
        return CircuitBreaker.Config.DEFAULT;
      }
      if (!(raw instanceof Map)) {
        throw s.error("breaker", "must be " + allowed + ", was " + showWhereNoneIsAllowed(raw));
      }
      Section b = s.section("breaker");
      b.only("failureRate", "minimumCalls", "window", "consecutiveFailures", "slowCalls", "probes", "probeSuccesses",
          "breakDuration", "maxBreakDuration", "ramp");
      // whole numbers and durations are read here (so a huge or fractional one is named as such); the
      // core checks every range, all at once, and its message names each setting and value
      Double failureRate = b.has("failureRate") ? b.number("failureRate") : null;
      Integer minimumCalls = b.has("minimumCalls") ? (int) b.whole("minimumCalls", 1, 1_000_000_000,
          "attempts the window must hold before its rates count") : null;
      Duration window = b.has("window") ? b.duration("window") : null;
      Integer consecutive = b.has("consecutiveFailures") ? (int) b.whole("consecutiveFailures", 0, 1_000_000_000,
          "failures in a row that open it; 0 for off") : null;
      Duration slowDuration = null;
      Double slowRate = null;
      boolean noSlowCalls = "none".equals(b.raw("slowCalls"));
      if (b.has("slowCalls") && !noSlowCalls) {
        if (!(b.raw("slowCalls") instanceof Map)) {
          throw b.error("slowCalls", "must be none or {duration: 2s, rate: 0.5}, was " + show(b.raw("slowCalls")));
        }
        Section slow = b.section("slowCalls");
        slow.only("duration", "rate");
        if (!slow.has("duration") || !slow.has("rate")) {
          throw slow.missing(slow.has("duration") ? "rate" : "duration",
              "duration: 2s (an attempt longer is slow) and rate: 0.5 (the share of slow attempts that opens it)");
        }
        slowDuration = slow.duration("duration");
        slowRate = slow.number("rate");
      }
      Integer probes = b.has("probes") ? (int) b.whole("probes", 1, 1000, "probes out at once when half-open")
          : null;
      Integer probeSuccesses = b.has("probeSuccesses") ? (int) b.whole("probeSuccesses", 1, 1_000_000,
          "successful probes that close it") : null;
      Duration breakDuration = b.has("breakDuration") ? b.duration("breakDuration") : null;
      Duration maxBreak = b.has("maxBreakDuration") ? b.duration("maxBreakDuration") : null;
      Duration ramp = b.has("ramp") ? b.duration("ramp") : null;
      Duration slowFor = slowDuration;
      Double slowShare = slowRate;
      try {
        return CircuitBreaker.Config.DEFAULT.with(c -> {
          if (failureRate != null) {
            c.failureRate(failureRate);
          }
          if (minimumCalls != null) {
            c.minimumCalls(minimumCalls);
          }
          if (window != null) {
            c.window(window);
          }
          if (consecutive != null) {
            c.consecutiveFailures(consecutive);
          }
          if (slowFor != null && slowShare != null) {
            c.slowCalls(slowFor, slowShare);
          }
          if (noSlowCalls) {
            c.noSlowCalls();
          }
          if (probes != null) {
            c.probes(probes);
          }
          if (probeSuccesses != null) {
            c.probeSuccesses(probeSuccesses);
          }
          if (breakDuration != null) {
            c.breakDuration(breakDuration);
          }
          if (maxBreak != null) {
            c.maxBreakDuration(maxBreak);
          }
          if (ramp != null) {
            c.ramp(ramp);
          }
        });
      } catch (ResilienceConfigurationException | IllegalArgumentException e) {
        throw new ScenarioException(b.label() + ": " + oneLine(String.valueOf(e.getMessage())), e);
      }
    }

    /** {@code limiter:} (one) or {@code limiters:} (a list), each built on {@code clock}. */
    private List<Limiter> limiters(Section s, TimeSource clock) {
      List<Limiter> limiters = new ArrayList<>();
      if (s.has("limiter")) {
        if ("none".equals(s.raw("limiter"))) {
          return limiters;
        }
        limiters.add(limiter(s.section("limiter"), clock));
      }
      if (s.has("limiters")) {
        List<Section> list = s.sections("limiters");
        if (list.size() > 10) {
          throw s.error("limiters", "may list at most 10 limiters, had " + list.size());
        }
        for (Section l : list) {
          limiters.add(limiter(l, clock));
        }
      }
      return limiters;
    }

    private Limiter limiter(Section l, TimeSource clock) {
      String allowed = "{rate: PER_SECOND, burst: N, maxWait: 0ms}, {concurrency: N, maxWait: 0ms},"
          + " {throttle: K, window: 2m} or {adaptive: default} (or a mapping of mode, initialLimit, minLimit, maxLimit, backoffRatio, tolerance,"
          + " smoothing, longWindow)";
      int kinds = (l.has("rate") ? 1 : 0) + (l.has("concurrency") ? 1 : 0) + (l.has("adaptive") ? 1 : 0)
          + (l.has("throttle") ? 1 : 0);
      if (kinds != 1) {
        throw l.itself("must be exactly one kind of limiter: " + allowed);
      }
      try {
        if (l.has("rate")) {
          l.only("rate", "burst", "maxWait");
          double perSecond = l.number("rate");
          if (!l.has("burst")) {
            throw l.missing("burst", "burst: N beside rate: (how many permits the bucket holds, at least 1)");
          }
          int burst = (int) l.whole("burst", 1, Integer.MAX_VALUE, "permits the bucket holds");
          Duration maxWait = l.has("maxWait") ? notNegative(l, "maxWait") : Duration.ZERO;
          return Limiter.rate(perSecond, burst, maxWait, clock);
        }
        if (l.has("throttle")) {
          // the SRE book's adaptive throttling: {throttle: K, window: 2m}, or {throttle: default}
          l.only("throttle", "window");
          double k = "default".equals(l.raw("throttle")) ? 2 : l.number("throttle");
          Duration window = l.has("window") ? notNegative(l, "window") : Duration.ofMinutes(2);
          return Limiter.throttle(k, window, clock);
        }
        if (l.has("concurrency")) {
          l.only("concurrency", "maxWait");
          int n = (int) l.whole("concurrency", 1, 1_000_000_000, "attempts in flight at once");
          Duration maxWait = l.has("maxWait") ? notNegative(l, "maxWait") : Duration.ZERO;
          return Limiter.concurrency(n, maxWait);
        }
        l.only("adaptive");
        Object raw = l.raw("adaptive");
        if ("default".equals(raw)) {
          return Limiter.adaptive();
        }
        if ("gradient".equals(raw)) {
          return Limiter.adaptive(Limiter.AdaptiveConfig.gradient());
        }
        if (!(raw instanceof Map)) {
          throw l.error("adaptive", "must be default, gradient, or a mapping of mode, initialLimit, minLimit, maxLimit,"
              + " backoffRatio, tolerance, smoothing, longWindow; was " + show(raw));
        }
        Section a = l.section("adaptive");
        a.only("mode", "initialLimit", "minLimit", "maxLimit", "backoffRatio", "tolerance", "smoothing", "longWindow");
        Limiter.AdaptiveConfig c = Limiter.AdaptiveConfig.DEFAULT;
        try {
          if (a.has("mode")) {
            String mode = a.text("mode").toUpperCase(Locale.ROOT);
            if (!mode.equals("KNEE") && !mode.equals("LOSS") && !mode.equals("GRADIENT")) {
              throw a.error("mode", "must be knee, loss or gradient, was " + show(a.raw("mode")));
            }
            // each mode starts from its own defaults: loss and gradient from Netflix's (20 to 200)
            c = mode.equals("LOSS") ? Limiter.AdaptiveConfig.loss()
                : mode.equals("GRADIENT") ? Limiter.AdaptiveConfig.gradient() : Limiter.AdaptiveConfig.DEFAULT;
          }
          String limit = "a concurrency limit from 1 to " + Limiter.AdaptiveConfig.MAX_LIMIT;
          if (a.has("initialLimit")) {
            c = c.withInitialLimit((int) a.whole("initialLimit", 1, Limiter.AdaptiveConfig.MAX_LIMIT, limit));
          }
          if (a.has("minLimit")) {
            c = c.withMinLimit((int) a.whole("minLimit", 1, Limiter.AdaptiveConfig.MAX_LIMIT, limit));
          }
          if (a.has("maxLimit")) {
            c = c.withMaxLimit((int) a.whole("maxLimit", 1, Limiter.AdaptiveConfig.MAX_LIMIT, limit));
          }
          if (a.has("backoffRatio")) {
            c = c.withBackoffRatio(a.number("backoffRatio"));
          }
          if (a.has("tolerance")) {
            c = c.withTolerance(a.number("tolerance"));
          }
          if (a.has("smoothing")) {
            c = c.withSmoothing(a.number("smoothing"));
          }
          if (a.has("longWindow")) {
            c = c.withLongWindow((int) a.whole("longWindow", 10, 1_000_000, "samples the long-run average spans"));
          }
          return Limiter.adaptive(c);
        } catch (ResilienceConfigurationException e) {
          throw new ScenarioException(a.label() + ": " + oneLine(String.valueOf(e.getMessage())), e);
        }
      } catch (ResilienceConfigurationException e) {
        throw new ScenarioException(l.label() + ": " + oneLine(String.valueOf(e.getMessage())), e);
      }
    }

    private Duration notNegative(Section s, String key) {
      Duration d = s.duration(key);
      if (d.isNegative()) {
        throw s.error(key, "must not be negative, was " + Text.duration(d));
      }
      return d;
    }

    /** {@code hedge: {after: 40ms}} or {@code {maxExtraLoad: 0.05}}, with maxHedges, floor, retries; null for none. */
    private @Nullable Hedge hedge(Section s) {
      Object raw = s.raw("hedge");
      String allowed = "none, {after: 40ms, maxHedges: 1} or {maxExtraLoad: 0.05, floor: 1ms, maxHedges: 1}"
          + " (either may add retries: true)";
      if ("none".equals(raw)) {
        return null;
      }
      if (!(raw instanceof Map)) {
        throw s.error("hedge", "must be " + allowed + ", was " + showWhereNoneIsAllowed(raw));
      }
      Section h = s.section("hedge");
      h.only("after", "maxExtraLoad", "maxHedges", "floor", "retries");
      if (h.has("after") == h.has("maxExtraLoad")) {
        throw h.itself("must give exactly one of after: (a fixed delay) or maxExtraLoad: (a share of extra attempts,"
            + " which hedges at the matching live quantile): " + allowed);
      }
      if (h.has("after") && h.has("floor")) {
        throw h.error("floor", "applies to maxExtraLoad: only (a fixed delay after: needs no floor)");
      }
      Hedge hedge;
      try {
        if (h.has("after")) {
          hedge = Hedge.after(notNegative(h, "after"));
        } else {
          double load = h.number("maxExtraLoad");
          if (!(load > 0 && load < 1)) {
            throw h.error("maxExtraLoad", "must be a share above 0 and below 1 (0.05 for 5% extra attempts), was "
                + Text.number(load));
          }
          hedge = Hedge.maxExtraLoad(load);
          if (h.has("floor")) {
            hedge = hedge.withFloor(notNegative(h, "floor"));
          }
        }
        if (h.has("maxHedges")) {
          hedge = hedge.withMaxHedges((int) h.whole("maxHedges", 1, 10, "hedges beside the first attempt"));
        }
        if (h.has("retries")) {
          Object r = h.raw("retries");
          if (!(r instanceof Boolean)) {
            throw h.error("retries", "must be true or false, was " + show(r));
          }
          hedge = hedge.withRetries((Boolean) r);
        }
        return hedge;
      } catch (ResilienceConfigurationException e) {
        throw new ScenarioException(h.label() + ": " + oneLine(String.valueOf(e.getMessage())), e);
      }
    }

    /** {@code measuredTiming: {multipleOfP95: 3, floor: 50ms, window: 30s, minSamples: 50}}; null for none. */
    private @Nullable MeasuredTiming measuredTiming(Section s) {
      Object raw = s.raw("measuredTiming");
      if ("none".equals(raw)) {
        return null;
      }
      if (!(raw instanceof Map)) {
        throw s.error("measuredTiming", "must be none or {multipleOfP95: 3, floor: 50ms, window: 30s, minSamples: 50},"
            + " was " + showWhereNoneIsAllowed(raw));
      }
      Section m = s.section("measuredTiming");
      m.only("multipleOfP95", "floor", "window", "minSamples");
      if (!m.has("multipleOfP95")) {
        throw m.missing("multipleOfP95", "multipleOfP95: 3 (each attempt's timeout is at most 3 × the live p95)");
      }
      try {
        MeasuredTiming t = MeasuredTiming.multipleOfP95(m.number("multipleOfP95"));
        if (m.has("floor")) {
          t = t.withFloor(notNegative(m, "floor"));
        }
        if (m.has("window")) {
          t = t.withWindow(m.duration("window"));
        }
        if (m.has("minSamples")) {
          t = t.withMinSamples((int) m.whole("minSamples", 1, 1_000_000_000, "samples before it measures"));
        }
        return t;
      } catch (ResilienceConfigurationException e) {
        throw new ScenarioException(m.label() + ": " + oneLine(String.valueOf(e.getMessage())), e);
      }
    }

    /** Builds the target tree of one arm. */
    private final class Builder {
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
          throw new ScenarioException(origin + ": services." + path.get(path.size() - 1) + " calls " + show(name)
              + ", which is neither a dependency nor a service");
        }
        if (path.contains(name)) {
          throw new ScenarioException(origin + ": services: " + String.join(" → ", path) + " → " + name
              + " is a cycle; a service may not call itself, directly or through others");
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
              Section c = Section.of(origin, s.path + ".calls[" + i + "]", call);
              c.only("to", "policy");
              if (!c.has("to")) {
                throw c.missing("to", "to: NAME (the dependency or service it calls)");
              }
              to = c.text("to");
              if (c.has("policy")) {
                String policyName = c.text("policy");
                policy = named.get(policyName);
                if (policy == null) {
                  throw c.error("policy", "must name one of the arm's policies (" + String.join(", ", named.keySet())
                      + "), was " + show(policyName));
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
  }

  /** A YAML mapping with the path that leads to it, for messages. */
  static final class Section {
    final String origin;
    final String path;
    final Map<?, ?> map;

    private Section(String origin, String path, Map<?, ?> map) {
      this.origin = origin;
      this.path = path;
      this.map = map;
    }

    static Section of(String origin, String path, @Nullable Object value) {
      if (!(value instanceof Map)) {
        throw new ScenarioException(origin + ": " + (path.isEmpty() ? "the scenario" : path)
            + " must be a mapping of keys to values, was " + show(value));
      }
      return new Section(origin, path, (Map<?, ?>) value);
    }

    Section empty(String key) {
      return new Section(origin, where(key), Map.of());
    }

    String where(String key) {
      return path.isEmpty() ? key : path + "." + key;
    }

    /** "file.yaml: arms[0].policy" */
    String label() {
      return origin + ": " + (path.isEmpty() ? "the scenario" : path);
    }

    ScenarioException error(String key, String problem) {
      return new ScenarioException(origin + ": " + where(key) + " " + problem);
    }

    ScenarioException itself(String problem) {
      return new ScenarioException(label() + " " + problem);
    }

    ScenarioException missing(String key, String example) {
      return new ScenarioException(origin + ": " + where(key) + " is missing; give " + example);
    }

    void only(String... allowed) {
      List<String> ok = List.of(allowed);
      for (Object key : map.keySet()) {
        if (!(key instanceof String) || !ok.contains(key)) {
          throw new ScenarioException(origin + ": " + where(String.valueOf(key)) + " is not a key here (allowed"
              + (path.isEmpty() ? " at the top" : " in " + path) + ": " + String.join(", ", ok) + ")");
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
      return of(origin, where(key), map.get(key));
    }

    List<?> list(String key) {
      Object v = map.get(key);
      if (!(v instanceof List)) {
        throw error(key, "must be a list, was " + show(v));
      }
      return (List<?>) v;
    }

    List<Section> sections(String key) {
      List<?> list = list(key);
      List<Section> sections = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        sections.add(of(origin, where(key) + "[" + i + "]", list.get(i)));
      }
      return sections;
    }

    String text(String key) {
      Object v = map.get(key);
      if (v == null || v instanceof Map || v instanceof List) {
        throw error(key, "must be a single value, was " + show(v));
      }
      return String.valueOf(v);
    }

    double number(String key) {
      Object v = map.get(key);
      if (!(v instanceof Number) || !Double.isFinite(((Number) v).doubleValue())) {
        throw error(key, "must be a finite number, was " + show(v));
      }
      return ((Number) v).doubleValue();
    }

    long whole(String key, long min, long max, String meaning) {
      Object v = map.get(key);
      if (!(v instanceof Integer || v instanceof Long || v instanceof BigInteger)) {
        throw error(key, "must be a whole number from " + min + " to " + max + " (" + meaning + "), was " + show(v));
      }
      if (v instanceof BigInteger || ((Number) v).longValue() < min || ((Number) v).longValue() > max) {
        throw error(key, "must be from " + min + " to " + max + " (" + meaning + "), was " + v);
      }
      return ((Number) v).longValue();
    }

    Duration duration(String key) {
      Object v = map.get(key);
      if (v == null) {
        throw error(key, "must be a duration such as 160ms, 1.5s, 2m or \"2:00\", was empty");
      }
      if (v instanceof Number) {
        throw error(key, "needs a unit, for example " + v + "ms or " + v + "s, was " + v);
      }
      if (v instanceof Map || v instanceof List) {
        throw error(key, "must be a duration such as 160ms, 1.5s, 2m or \"2:00\", was " + show(v));
      }
      return Durations.parse(String.valueOf(v), origin + ": " + where(key));
    }

    /** A duration, or null for "none". */
    @Nullable Duration optionalDuration(String key) {
      if (!has(key) || "none".equals(map.get(key))) {
        return null;
      }
      Duration d = duration(key);
      if (d.isNegative() || d.isZero()) {
        throw error(key, "must be above 0 or none, was " + Text.duration(d));
      }
      return d;
    }

    /** Runs a model method and turns its complaint into one that says where in the file. */
    <T> T check(Supplier<T> make) {
      try {
        return make.get();
      } catch (IllegalArgumentException e) {
        throw new ScenarioException(label() + ": " + oneLine(String.valueOf(e.getMessage())), e);
      }
    }
  }
}
