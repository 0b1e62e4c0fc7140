package dev.quell.micrometer.internal;

import dev.quell.StopReason;
import dev.quell.internal.TelemetryNames;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The meters of one policy name, created on first use and then read from arrays indexed by enum
 * ordinal, so recording allocates nothing of ours.
 */
final class PolicyMeters {
  private static final StopReason[] REASONS = StopReason.values();

  final String policy;
  private final MeterRegistry registry;
  private final AtomicReferenceArray<Counter> attempts = new AtomicReferenceArray<>(TelemetryNames.KINDS);
  private final AtomicReferenceArray<Counter> calls = new AtomicReferenceArray<>(REASONS.length);
  private final AtomicReferenceArray<Counter> rejections = new AtomicReferenceArray<>(REASONS.length);
  private final AtomicReferenceArray<Timer> callDurations = new AtomicReferenceArray<>(REASONS.length);
  private final AtomicReferenceArray<Timer> attemptDurations = new AtomicReferenceArray<>(TelemetryNames.VERDICTS);
  private final AtomicReferenceArray<Counter> hedges = new AtomicReferenceArray<>(TelemetryNames.HEDGE_EVENTS);

  /** Every meter made here, so that {@link #retire} can take them out of the registry. */
  private final List<Meter> made = new CopyOnWriteArrayList<>();

  PolicyMeters(String policy, MeterRegistry registry) {
    this.policy = policy;
    this.registry = registry;
  }

  Counter attempts(int kind) {
    Counter c = attempts.get(kind);
    return c != null ? c : counter(attempts, kind, TelemetryNames.ATTEMPTS,
        "Attempts started, the first included; attempts / calls is the load multiplier",
        TelemetryNames.TAG_KIND, TelemetryNames.kindName(kind));
  }

  Counter calls(StopReason reason) {
    Counter c = calls.get(reason.ordinal());
    return c != null ? c : counter(calls, reason.ordinal(), TelemetryNames.CALLS, "Calls ended, by stop reason",
        TelemetryNames.TAG_OUTCOME, reason.name());
  }

  Counter rejections(StopReason reason) {
    Counter c = rejections.get(reason.ordinal());
    return c != null ? c : counter(rejections, reason.ordinal(), TelemetryNames.REJECTIONS,
        "Calls Quell ended by refusing work: budget, breaker, limiter or draining",
        TelemetryNames.TAG_OUTCOME, reason.name());
  }

  Counter hedges(int hedge) {
    Counter c = hedges.get(hedge);
    return c != null ? c : counter(hedges, hedge, TelemetryNames.HEDGES,
        "Hedges started, won, discarded (attempts that lost the race) and suppressed (due but refused)",
        TelemetryNames.TAG_HEDGE, TelemetryNames.hedgeName(hedge));
  }

  Timer callDuration(StopReason reason) {
    Timer t = callDurations.get(reason.ordinal());
    return t != null ? t : timer(callDurations, reason.ordinal(), TelemetryNames.CALL_DURATION,
        "Time from the start of a call to its end, backoff and pauses included",
        TelemetryNames.TAG_OUTCOME, reason.name());
  }

  Timer attemptDuration(int verdict) {
    Timer t = attemptDurations.get(verdict);
    return t != null ? t : timer(attemptDurations, verdict, TelemetryNames.ATTEMPT_DURATION,
        "Time one attempt ran, by the verdict on it", TelemetryNames.TAG_VERDICT, TelemetryNames.verdictName(verdict));
  }

  /** Registers the counter of slot {@code i} on first use (cold: once per policy name and tag value). */
  private Counter counter(AtomicReferenceArray<Counter> slots, int i, String name, String description, String tag,
      String value) {
    return keep(slots, i, Counter.builder(name).description(description)
        .tag(TelemetryNames.TAG_POLICY, policy).tag(tag, value).register(registry));
  }

  /** Registers the timer of slot {@code i} on first use (cold: once per policy name and tag value). */
  private Timer timer(AtomicReferenceArray<Timer> slots, int i, String name, String description, String tag,
      String value) {
    return keep(slots, i, Timer.builder(name).description(description)
        .tag(TelemetryNames.TAG_POLICY, policy).tag(tag, value).register(registry));
  }

  private <M extends Meter> M keep(AtomicReferenceArray<M> slots, int i, M meter) {
    made.add(meter);
    slots.set(i, meter);
    return meter;
  }

  /** Takes this policy name's meters out of the registry. */
  void retire() {
    for (Meter m : made) {
      registry.remove(m);
    }
    made.clear();
  }
}
