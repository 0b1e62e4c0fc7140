package dev.quell.test;

import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A {@link ResilienceListener} that keeps every event it receives, in arrival order, for assertions:
 *
 * <pre>{@code
 * EventRecorder events = new EventRecorder();
 * Resilience policy = TestPolicy.instant().withListener(events);
 * policy.run(sequence);
 * assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).isEqualTo(3);
 * assertThat(events.terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED);
 * }</pre>
 *
 * <p>Thread-safe: asynchronous calls deliver events from scheduler threads, and concurrent calls
 * interleave theirs; every accessor returns a snapshot. Events carry no call identity, so the
 * checks on terminal events ({@link #terminal()}, {@link #terminals()}) count calls by their first
 * attempt: they hold once the recorded calls have finished.
 */
public final class EventRecorder implements ResilienceListener {
  private final List<ResilienceEvent> events = new ArrayList<>();

  /** A recorder with nothing recorded. */
  public EventRecorder() {}

  @Override
  public void onEvent(ResilienceEvent event) {
    Objects.requireNonNull(event, "event");
    synchronized (events) {
      events.add(event);
    }
  }

  /** Every event recorded, oldest first. */
  public List<ResilienceEvent> events() {
    synchronized (events) {
      return List.copyOf(events);
    }
  }

  /** The type of every event recorded, oldest first. */
  public List<ResilienceEvent.Type> types() {
    List<ResilienceEvent.Type> types = new ArrayList<>();
    for (ResilienceEvent e : events()) {
      types.add(e.type());
    }
    return types;
  }

  /** The events of one type, oldest first. */
  public List<ResilienceEvent> ofType(ResilienceEvent.Type type) {
    Objects.requireNonNull(type, "type");
    List<ResilienceEvent> matching = new ArrayList<>();
    for (ResilienceEvent e : events()) {
      if (e.type() == type) {
        matching.add(e);
      }
    }
    return matching;
  }

  /** How many events of {@code type} were recorded. */
  public int count(ResilienceEvent.Type type) {
    return ofType(type).size();
  }

  /**
   * The terminal event of the one call recorded.
   *
   * @throws AssertionError unless exactly one call was recorded and it ended exactly once; the
   *     message lists the events
   */
  public ResilienceEvent terminal() {
    List<ResilienceEvent> snapshot = events();
    List<ResilienceEvent> terminals = checkOneTerminalPerCall(snapshot);
    if (terminals.size() != 1) {
      throw new AssertionError("expected exactly one call with one terminal event, but recorded "
          + terminals.size() + " terminal events" + listing(snapshot));
    }
    return terminals.get(0);
  }

  /**
   * The terminal events of every call recorded, oldest first, after checking that each call ended
   * exactly once: for each policy, as many terminal events as calls that started (a call starts
   * with its first, non-hedge attempt, or ends before any attempt with a terminal event for zero
   * attempts).
   *
   * @throws AssertionError when some policy's calls ended more or fewer times than they started (a
   *     call still running counts as not ended); the message lists the events
   */
  public List<ResilienceEvent> terminals() {
    return checkOneTerminalPerCall(events());
  }

  /**
   * The most recent event.
   *
   * @throws AssertionError when nothing was recorded
   */
  public ResilienceEvent last() {
    synchronized (events) {
      if (events.isEmpty()) {
        throw new AssertionError("no event was recorded");
      }
      return events.get(events.size() - 1);
    }
  }

  /** Forgets everything recorded so far. */
  public void clear() {
    synchronized (events) {
      events.clear();
    }
  }

  private static List<ResilienceEvent> checkOneTerminalPerCall(List<ResilienceEvent> snapshot) {
    Map<String, int[]> perPolicy = new LinkedHashMap<>(); // policy -> {calls started, terminal events}
    List<ResilienceEvent> terminals = new ArrayList<>();
    for (ResilienceEvent e : snapshot) {
      int[] counts = perPolicy.computeIfAbsent(e.policy(), p -> new int[2]);
      if (e.type() == ResilienceEvent.Type.ATTEMPT_STARTED && e.attempt() == 1 && !e.isHedge()) {
        counts[0]++;
      }
      if (e.isTerminal()) {
        terminals.add(e);
        counts[1]++;
        if (e.attempt() == 0) {
          counts[0]++; // ended before its first attempt: it started and ended here
        }
      }
    }
    for (Map.Entry<String, int[]> entry : perPolicy.entrySet()) {
      int started = entry.getValue()[0];
      int ended = entry.getValue()[1];
      if (started != ended) {
        throw new AssertionError("policy '" + entry.getKey() + "': " + started + (started == 1 ? " call" : " calls")
            + " started but " + ended + (ended == 1 ? " terminal event" : " terminal events")
            + " recorded; each call must end exactly once" + listing(snapshot));
      }
    }
    return terminals;
  }

  private static String listing(List<ResilienceEvent> snapshot) {
    if (snapshot.isEmpty()) {
      return " (no events)";
    }
    StringBuilder sb = new StringBuilder(":");
    for (ResilienceEvent e : snapshot) {
      sb.append("\n  ").append(e);
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return "EventRecorder" + types();
  }
}
