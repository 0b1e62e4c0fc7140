package dev.quell.internal.jfr;

import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.FlightRecorderListener;
import jdk.jfr.Recording;

/**
 * Watches Flight Recorder's recordings and keeps {@link QuellJfr}'s flags. Loaded only once
 * {@link QuellJfr} has found {@code jdk.jfr} there (it implements a {@code jdk.jfr} interface, so
 * loading it anywhere else would fail).
 */
final class Recorder implements FlightRecorderListener {
  private Recorder() {}

  /** Starts listening, and reads the recordings already running (one started on the command line, say). */
  static void watch() {
    try {
      FlightRecorder.addListener(new Recorder());
      if (FlightRecorder.isInitialized()) {
        update();
      }
    } catch (RuntimeException | LinkageError e) {
      // no permission, or no Flight Recorder in this JVM: Quell records nothing, and calls go on as before
    }
  }

  @Override
  public void recordingStateChanged(Recording recording) {
    update();
  }

  /** Reads which of Quell's events running recordings enable now. */
  static void update() {
    try {
      boolean calls = enabled(AttemptEvent.class) || enabled(CallEvent.class) || enabled(BudgetRefusalEvent.class)
          || enabled(LimiterRefusalEvent.class);
      QuellJfr.set(calls, enabled(BreakerTransitionEvent.class));
    } catch (RuntimeException | LinkageError e) {
      QuellJfr.set(false, false);
    }
  }

  private static boolean enabled(Class<? extends Event> event) {
    return EventType.getEventType(event).isEnabled();
  }
}
