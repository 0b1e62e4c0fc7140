package dev.quell.internal.jfr;

import dev.quell.CircuitBreaker;
import dev.quell.Resilience;
import dev.quell.internal.CallObserver;
import dev.quell.internal.Internal;

/**
 * What the rest of the core knows of Flight Recorder: two flags and two calls, and no {@code jdk.jfr}
 * type, so that the core loads and runs where the {@code jdk.jfr} module is absent (a trimmed runtime
 * image, a module graph without it); there the flags stay false for good.
 *
 * <p>The flags are kept by a {@link jdk.jfr.FlightRecorderListener} that looks again whenever a
 * recording starts or stops: {@link #calls()} is true while a running recording enables any of
 * Quell's call events (attempt, call, budget refusal, limiter refusal), {@code breakers} while one
 * enables the breaker transition. A policy reads {@link #calls()} once per call, where it chooses
 * the call's lane: false (no recording, or recordings without Quell's events, which are off unless
 * a settings file such as {@code quell.jfc} turns them on) keeps every fast lane as it is; true
 * sends the call down the observed path with {@link #observer} added, so a recording costs what any
 * observer costs.
 */
@Internal
public final class QuellJfr {
  private QuellJfr() {}

  /** A running recording enables one of Quell's call events. */
  private static volatile boolean calls;
  /** A running recording enables the breaker transition event. */
  private static volatile boolean breakers;

  static {
    if (flightRecorderPresent()) {
      Recorder.watch();
    }
  }

  /** Whether {@code jdk.jfr} is in the runtime and readable by the core. Links no {@code jdk.jfr} type. */
  private static boolean flightRecorderPresent() {
    try {
      Class<?> event = Class.forName("jdk.jfr.Event", false, ClassLoader.getPlatformClassLoader());
      return QuellJfr.class.getModule().canRead(event.getModule());
    } catch (ClassNotFoundException | LinkageError | SecurityException e) {
      return false;
    }
  }

  /** True while a running recording wants Quell's call events: the call must be observed. */
  public static boolean calls() {
    return calls;
  }

  /** Sets the flags; called by the recorder's listener only. */
  static void set(boolean callEvents, boolean breakerEvents) {
    calls = callEvents;
    breakers = breakerEvents;
  }

  /** The observer that turns {@code policy}'s calls into events; only asked for while {@link #calls()}. */
  public static CallObserver observer(Resilience policy) {
    return new JfrObserver(policy);
  }

  /**
   * {@code breaker} moved into {@code state}; {@code cause} is {@code attempts}, {@code isolate} or
   * {@code reset}. Recorded when a running recording enables the event; never throws.
   */
  public static void breakerMoved(String breaker, CircuitBreaker.State state, String cause) {
    if (breakers) {
      JfrObserver.breakerMoved(breaker, state, cause);
    }
  }
}
