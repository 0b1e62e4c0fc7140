package dev.quell.sim;

import java.io.IOException;

/**
 * How a simulated attempt fails. It is an {@link IOException}, so {@code Classifier.DEFAULT} and
 * {@code Classifier.HTTP} treat it as transient, as they would a refused connection or a 503; a
 * classifier of your own can tell the kinds apart with {@link #kind()}.
 *
 * <p>Attempt timeouts are not simulated failures: the policy's own timer ends those attempts.
 * Instances are shared and carry no stack trace.
 */
public final class SimulatedFailure extends IOException {
  private static final long serialVersionUID = 1L;

  /** Why the attempt failed. */
  public enum Kind {
    /** The dependency failed the attempt ({@link Dependency#errorRate} or a {@code failing} incident). */
    ERROR,
    /** The dependency is down ({@code outage} incident) and refused the attempt at once. */
    OUTAGE,
    /** The dependency's queue was full and it refused the attempt at once. */
    QUEUE_FULL,
    /** A service failed the request because one of its downstream calls failed. */
    UPSTREAM
  }

  private final Kind kind;
  private final String target;

  SimulatedFailure(Kind kind, String target) {
    super(message(kind, target));
    this.kind = kind;
    this.target = target;
  }

  private static String message(Kind kind, String target) {
    switch (kind) {
      case ERROR:
        return target + " failed the attempt";
      case OUTAGE:
        return target + " is down: connection refused";
      case QUEUE_FULL:
        return target + " is full: its queue refused the attempt";
      default:
        return target + " answered 503: a downstream call failed";
    }
  }

  /** Why the attempt failed. */
  public Kind kind() {
    return kind;
  }

  /** The name of the dependency or service that failed it. */
  public String target() {
    return target;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this; // shared and thrown often: a stack trace would cost more than the rest of the attempt
  }
}
