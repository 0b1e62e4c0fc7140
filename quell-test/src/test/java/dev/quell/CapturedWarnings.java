package dev.quell;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The warnings one logger writes while a test runs, kept instead of printed: a test that provokes a
 * warning on purpose asserts it, and the build's output stays free of warnings that mean nothing.
 * The JDK's {@code System.Logger} writes through java.util.logging when nothing else is bound, as here.
 */
final class CapturedWarnings implements AutoCloseable {
  private final Logger logger;
  private final boolean parents;
  private final List<String> messages = new ArrayList<>();
  private final Handler handler = new Handler() {
    @Override
    public void publish(LogRecord r) {
      String text = r.getMessage();
      Object[] params = r.getParameters();
      synchronized (messages) {
        messages.add(params == null ? text : java.text.MessageFormat.format(text, params));
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  private CapturedWarnings(String name) {
    this.logger = Logger.getLogger(name);
    this.parents = logger.getUseParentHandlers();
    logger.addHandler(handler);
    logger.setUseParentHandlers(false);
  }

  /** Captures what the logger called {@code name} writes until {@link #close()}. */
  static CapturedWarnings of(String name) {
    return new CapturedWarnings(name);
  }

  /** What was written, formatted. */
  List<String> messages() {
    synchronized (messages) {
      return List.copyOf(messages);
    }
  }

  @Override
  public void close() {
    logger.removeHandler(handler);
    logger.setUseParentHandlers(parents);
  }
}
