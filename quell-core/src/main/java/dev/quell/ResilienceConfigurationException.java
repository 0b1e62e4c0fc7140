package dev.quell;

import java.util.List;

/**
 * A policy, budget or limiter was configured with values it cannot work with. Thrown when the
 * object is built, never later at call time. {@link #problems()} lists every problem found, each
 * naming the parameter, the value given and what is allowed.
 */
public final class ResilienceConfigurationException extends ResilienceException {
  private static final long serialVersionUID = 1L;

  private final List<String> problems;

  /** Creates the exception from one or more problem descriptions. */
  public ResilienceConfigurationException(List<String> problems) {
    super(describe(problems), null);
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("a configuration exception needs at least one problem");
    }
    this.problems = List.copyOf(problems);
  }

  /** Creates the exception for a single problem. */
  public ResilienceConfigurationException(String problem) {
    this(List.of(problem));
  }

  /** Every problem found, in the order the settings were checked. */
  public List<String> problems() {
    return problems;
  }

  private static String describe(List<String> problems) {
    if (problems.size() == 1) {
      return problems.get(0);
    }
    StringBuilder sb = new StringBuilder(problems.size() + " configuration problems:");
    for (String p : problems) {
      sb.append("\n - ").append(p);
    }
    return sb.toString();
  }
}
