package dev.quell.spring.internal;

import dev.quell.ResilienceConfigurationException;
import dev.quell.spring.QuellPropertiesException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.origin.Origin;

/**
 * Collects every problem with the {@code quell.*} properties, each as "PATH was VALUE (from ORIGIN):
 * RULE", so a user fixes them all in one round. Values are shown as written where the source still has
 * them. Ranges are the core's own: {@link #core} runs a core factory and renames the parameters in its
 * {@link ResilienceConfigurationException} to the properties they came from.
 */
final class ConfigProblems {
  private final PropertyOrigins origins;
  /** Each problem once: a bad default shows up in every policy that inherits it. */
  private final Set<String> problems = new LinkedHashSet<>();
  private int reported;

  ConfigProblems(PropertyOrigins origins) {
    this.origins = origins;
  }

  /** "{path} was {value}: {rule}". */
  void add(String path, @Nullable Object value, String rule) {
    report(was(path, value) + ": " + rule);
  }

  private void report(String problem) {
    reported++;
    problems.add(problem);
  }

  /** How many problems were reported so far, repeats included: a build compares it before and after. */
  int reported() {
    return reported;
  }

  /** A {@code quell.*} property that names no setting. */
  void unknown(ConfigurationProperty property) {
    Origin origin = property.getOrigin();
    report(property.getName() + " was " + property.getValue() + (origin != null ? " (from " + origin + ")" : "")
        + ": there is no such property (docs/spring-boot.md lists them all)");
  }

  /** A problem about a group of properties rather than one value. */
  void note(String path, String text) {
    report(path + ": " + text);
  }

  /**
   * Runs {@code build}, a call into the core; if it refuses, records each of its problems under the
   * property its parameter came from ({@code paths}: core parameter name → property path; a parameter
   * not in it is reported under {@code fallback}). Returns null when it refused.
   */
  <T> @Nullable T core(Supplier<T> build, Map<String, Leaf<?>> paths, String fallback) {
    try {
      return build.get();
    } catch (ResilienceConfigurationException e) {
      for (String problem : e.problems()) {
        report(rename(problem, paths, fallback));
      }
      return null;
    }
  }

  private String rename(String problem, Map<String, Leaf<?>> paths, String fallback) {
    String best = null;
    for (String parameter : paths.keySet()) {
      if (problem.startsWith(parameter + " was ") && (best == null || parameter.length() > best.length())) {
        best = parameter;
      }
    }
    if (best == null) {
      return fallback + ": " + problem;
    }
    Leaf<?> leaf = java.util.Objects.requireNonNull(paths.get(best)); // best is one of its keys
    int ruleAt = problem.indexOf(": ", best.length() + 5);
    String rule = (ruleAt < 0 ? problem : problem.substring(ruleAt + 2))
        .replace("use RetryBudget.NONE", "set budget.kind to none"); // the core speaks Java; the reader writes properties
    return was(leaf.path(), leaf.value()) + ": " + rule;
  }

  private String was(String path, @Nullable Object value) {
    ConfigurationProperty property = origins.find(path);
    Object shown = property != null ? property.getValue() : render(value);
    Origin origin = property != null ? property.getOrigin() : null;
    return path + " was " + shown + (origin != null ? " (from " + origin + ")" : "");
  }

  private static String render(@Nullable Object value) {
    if (value instanceof Duration) {
      return value.toString();
    }
    if (value instanceof Class) {
      return ((Class<?>) value).getName();
    }
    return String.valueOf(value);
  }

  boolean isEmpty() {
    return problems.isEmpty();
  }

  List<String> list() {
    return List.copyOf(problems);
  }

  void throwIfAny() {
    if (!problems.isEmpty()) {
      throw new QuellPropertiesException(List.copyOf(problems));
    }
  }
}
