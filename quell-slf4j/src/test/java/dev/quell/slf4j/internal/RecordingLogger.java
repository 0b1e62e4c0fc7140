package dev.quell.slf4j.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** An SLF4J logger that keeps what it is given, at a chosen threshold. For unit tests of the listener. */
final class RecordingLogger extends LegacyAbstractLogger {
  private static final long serialVersionUID = 1L;

  /** One logged line. */
  record Line(Level level, String message) {
    /** The event name: the first word. */
    String event() {
      return message.split(" ", 2)[0];
    }
  }

  final List<Line> lines = new ArrayList<>();
  private final Level threshold;

  RecordingLogger(Level threshold) {
    this.threshold = threshold;
    this.name = LoggingListener.LOGGER_NAME;
  }

  private boolean enabled(Level level) {
    return level.toInt() >= threshold.toInt();
  }

  @Override public boolean isTraceEnabled() { return enabled(Level.TRACE); }
  @Override public boolean isDebugEnabled() { return enabled(Level.DEBUG); }
  @Override public boolean isInfoEnabled() { return enabled(Level.INFO); }
  @Override public boolean isWarnEnabled() { return enabled(Level.WARN); }
  @Override public boolean isErrorEnabled() { return enabled(Level.ERROR); }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
      Throwable throwable) {
    assertThat(marker).isNull();
    lines.add(new Line(level, MessageFormatter.basicArrayFormat(pattern, arguments)));
  }

  List<String> messages() {
    return lines.stream().map(Line::message).toList();
  }
}
