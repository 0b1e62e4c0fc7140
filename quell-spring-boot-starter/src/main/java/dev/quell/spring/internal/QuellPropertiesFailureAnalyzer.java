package dev.quell.spring.internal;

import dev.quell.spring.QuellPropertiesException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns bad {@code quell.*} properties at startup into a list of what to change, not a stack trace. */
public final class QuellPropertiesFailureAnalyzer extends AbstractFailureAnalyzer<QuellPropertiesException> {
  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, QuellPropertiesException cause) {
    StringBuilder description = new StringBuilder("Quell cannot build its policies from the quell.* properties:\n");
    for (String problem : cause.problems()) {
      description.append("\n    ").append(problem);
    }
    return new FailureAnalysis(description.toString(),
        "Change the properties named above. docs/spring-boot.md lists every quell.* property with what it allows.",
        cause);
  }
}
