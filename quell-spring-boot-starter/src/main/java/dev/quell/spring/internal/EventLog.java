package dev.quell.spring.internal;

import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.StopReason;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * The most recent events of each policy, for the {@code quellevents} actuator endpoint (Resilience4j's
 * {@code circuitbreakerevents}, {@code retryevents}): how calls ended, retries, breaker transitions, hedges
 * that won or were held back, and fallbacks. Attempts starting and ending are left out: they are what the
 * meters count. Each policy keeps its last {@code size} in a ring written without a lock; reading takes a
 * snapshot. Policy names past {@value #MAX_POLICIES} share no ring: their events are not kept.
 */
public final class EventLog implements ResilienceListener {
  /** The most policy names (per-host copies included) that get a ring. */
  static final int MAX_POLICIES = 2000;

  /** One event as the endpoint shows it. */
  public record Entry(long sequence, Instant time, String policy, String type, int attempt, @Nullable String stopReason,
      @Nullable String failure, @Nullable String breakerState, @Nullable Duration delay, Duration elapsed) {
    /** As JSON-friendly values. */
    public Map<String, Object> toMap() {
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("time", time.toString());
      out.put("policy", policy);
      out.put("type", type);
      out.put("attempt", attempt);
      if (stopReason != null) {
        out.put("stopReason", stopReason);
      }
      if (failure != null) {
        out.put("failure", failure);
      }
      if (breakerState != null) {
        out.put("breakerState", breakerState);
      }
      if (delay != null) {
        out.put("delay", delay.toString());
      }
      out.put("elapsed", elapsed.toString());
      return out;
    }
  }

  private static final class Ring {
    final AtomicReferenceArray<@Nullable Entry> slots;
    final AtomicLong next = new AtomicLong();

    Ring(int size) {
      slots = new AtomicReferenceArray<>(size);
    }
  }

  private final int size;
  private final AtomicLong sequence = new AtomicLong();
  private final Map<String, Ring> rings = new ConcurrentHashMap<>();

  /** @param size events kept per policy; 0 keeps none */
  public EventLog(int size) {
    this.size = Math.max(0, size);
  }

  @Override
  public void onEvent(ResilienceEvent event) {
    switch (event.type()) {
      case ATTEMPT_STARTED, ATTEMPT_ENDED, HEDGE_STARTED, HEDGE_DISCARDED -> {
        return;
      }
      default -> { }
    }
    add(event.policy(), event.type().name(), event.attempt(), event.stopReason().map(StopReason::name).orElse(null),
        event.failure().map(EventLog::describe).orElse(null), event.breakerState().map(Enum::name).orElse(null),
        event.delay().orElse(null), event.elapsed());
  }

  /** A fallback answered a failed call of {@code policy}: {@code FALLBACK_SUCCEEDED} or {@code FALLBACK_FAILED}. */
  public void fallback(String policy, StopReason reason, Throwable failure, int attempts, boolean succeeded, Duration elapsed) {
    add(policy, succeeded ? "FALLBACK_SUCCEEDED" : "FALLBACK_FAILED", attempts, reason.name(), describe(failure), null, null,
        elapsed);
  }

  private void add(String policy, String type, int attempt, @Nullable String stopReason, @Nullable String failure,
      @Nullable String breakerState, @Nullable Duration delay, Duration elapsed) {
    if (size == 0) {
      return;
    }
    Ring ring = rings.get(policy);
    if (ring == null) {
      if (rings.size() >= MAX_POLICIES) {
        return;
      }
      ring = rings.computeIfAbsent(policy, p -> new Ring(size));
    }
    Entry e = new Entry(sequence.incrementAndGet(), Instant.now(), policy, type, attempt, stopReason, failure, breakerState,
        delay, elapsed);
    ring.slots.set((int) (ring.next.getAndIncrement() % size), e);
  }

  private static String describe(Throwable t) {
    String message = t.getMessage();
    return message == null ? t.getClass().getName() : t.getClass().getName() + ": " + message;
  }

  /** The events kept for {@code policy} and its per-host copies ({@code policy:host}), oldest first. */
  public List<Entry> events(String policy) {
    List<Entry> out = new ArrayList<>();
    rings.forEach((name, ring) -> {
      if (name.equals(policy) || name.startsWith(policy + ":")) {
        collect(ring, out);
      }
    });
    out.sort(Comparator.comparingLong(Entry::sequence));
    return out;
  }

  /** Every event kept, oldest first. */
  public List<Entry> events() {
    List<Entry> out = new ArrayList<>();
    rings.values().forEach(ring -> collect(ring, out));
    out.sort(Comparator.comparingLong(Entry::sequence));
    return out;
  }

  private static void collect(Ring ring, List<Entry> out) {
    for (int i = 0; i < ring.slots.length(); i++) {
      Entry e = ring.slots.get(i);
      if (e != null) {
        out.add(e);
      }
    }
  }
}
