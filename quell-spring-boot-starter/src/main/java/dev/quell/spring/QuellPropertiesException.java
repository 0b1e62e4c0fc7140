package dev.quell.spring;

import dev.quell.ResilienceException;
import java.util.List;

/**
 * The {@code quell.*} properties describe policies Quell cannot build. {@link #problems()} lists every
 * problem found, each naming the property, the value given, where it came from and what is allowed. At
 * startup it stops the application, and Spring Boot prints those problems instead of a stack trace; on a
 * refresh the policies in force are kept and the problems are logged.
 */
public final class QuellPropertiesException extends ResilienceException {
  private static final long serialVersionUID = 1L;

  private final List<String> problems;

  /** An exception listing {@code problems} (at least one). */
  public QuellPropertiesException(List<String> problems) {
    super(describe(problems), null);
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("an exception about properties needs at least one problem");
    }
    this.problems = List.copyOf(problems);
  }

  /** Every problem, in the order the properties were read. */
  public List<String> problems() {
    return problems;
  }

  private static String describe(List<String> problems) {
    StringBuilder sb = new StringBuilder(problems.size() == 1 ? "1 problem" : problems.size() + " problems")
        .append(" with Quell's properties:");
    for (String p : problems) {
      sb.append("\n - ").append(p);
    }
    return sb.toString();
  }
}
