package dev.quell;

/**
 * Receives a policy's events: every attempt, every retry decision, and exactly one terminal event
 * per call. Register with {@link Resilience#withListener}. Listeners run on the thread making the
 * decision, so they must be quick; an exception thrown by a listener is caught and ignored and never
 * affects the call.
 *
 * <p>A policy with no listener creates no events at all.
 */
@FunctionalInterface
public interface ResilienceListener {
  /** Called for each event, in order, on the thread that made the decision. */
  void onEvent(ResilienceEvent event);
}
