package dev.quell.cli.internal;

/** A scenario file or an option that does not make sense; the message says where and why. */
public final class ScenarioException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  ScenarioException(String message) {
    super(message);
  }

  ScenarioException(String message, Throwable cause) {
    super(message, cause);
  }
}
