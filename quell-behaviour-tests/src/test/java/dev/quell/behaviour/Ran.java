package dev.quell.behaviour;

import dev.quell.ResilienceEvent;
import dev.quell.StopReason;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/** What one call did, whichever driver ran it. */
final class Ran {
  @Nullable Object value;
  @Nullable Throwable thrown;
  /** From the terminal event where the driver listens, else from the outcome; null when neither tells. */
  @Nullable StopReason reason;
  /** Attempts the dependency saw. */
  int attempts;
  /** Virtual time the call took; null on the real clock. */
  @Nullable Duration elapsed;
  /** Terminal signals the caller received (a return, a throw, a completed future, onError/onComplete, a resumption). */
  int signals;
  List<ResilienceEvent> events = List.of();

  List<ResilienceEvent> ofType(ResilienceEvent.Type type) {
    return events.stream().filter(e -> e.type() == type).collect(Collectors.toList());
  }

  List<ResilienceEvent.Type> types() {
    return events.stream().map(ResilienceEvent::type).collect(Collectors.toList());
  }

  @Override
  public String toString() {
    return "Ran[value=" + value + ", thrown=" + thrown + ", reason=" + reason + ", attempts=" + attempts
        + ", elapsed=" + elapsed + ", signals=" + signals + ", events=" + types() + "]";
  }
}
