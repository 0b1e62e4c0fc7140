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

  /** Every meter made here, so that {@link #retire} can take them out of the registry. */
  private final List<Meter> made = new CopyOnWriteArrayList<>();

  PolicyMeters(String policy, MeterRegistry registry) {
    this.policy = policy;
    this.registry = registry;
  }

  Counter attempts(int kind) {
    Counter c = attempts.get(kind);
    if (c == null) {
      c = Counter.builder(TelemetryNames.ATTEMPTS)
          .description("Attempts started, the first included; attempts / calls is the load multiplier")
          .tag(TelemetryNames.TAG_POLICY, policy).tag(TelemetryNames.TAG_KIND, TelemetryNames.kindName(kind))
          .register(registry);
      made.add(c);
      attempts.set(kind, c);
    }
    return c;
  }

  Counter calls(StopReason reason) {
    int i = reason.ordinal();
    Counter c = calls.get(i);
    if (c == null) {
      c = Counter.builder(TelemetryNames.CALLS).description("Calls ended, by stop reason")
          .tag(TelemetryNames.TAG_POLICY, policy).tag(TelemetryNames.TAG_OUTCOME, reason.name())
          .register(registry);
      made.add(c);
      calls.set(i, c);
    }
    return c;
  }

  Counter rejections(StopReason reason) {
    int i = reason.ordinal();
    Counter c = rejections.get(i);
    if (c == null) {
      c = Counter.builder(TelemetryNames.REJECTIONS)
          .description("Calls Quell ended by refusing work: budget, breaker, limiter or draining")
          .tag(TelemetryNames.TAG_POLICY, policy).tag(TelemetryNames.TAG_OUTCOME, reason.name())
          .register(registry);
      made.add(c);
      rejections.set(i, c);
    }
    return c;
  }

  Timer callDuration(StopReason reason) {
    int i = reason.ordinal();
    Timer t = callDurations.get(i);
    if (t == null) {
      t = Timer.builder(TelemetryNames.CALL_DURATION)
          .description("Time from the start of a call to its end, backoff and pauses included")
          .tag(TelemetryNames.TAG_POLICY, policy).tag(TelemetryNames.TAG_OUTCOME, reason.name())
          .register(registry);
      made.add(t);
      callDurations.set(i, t);
    }
    return t;
  }

  Timer attemptDuration(int verdict) {
    Timer t = attemptDurations.get(verdict);
    if (t == null) {
      t = Timer.builder(TelemetryNames.ATTEMPT_DURATION).description("Time one attempt ran, by the verdict on it")
          .tag(TelemetryNames.TAG_POLICY, policy).tag(TelemetryNames.TAG_VERDICT, TelemetryNames.verdictName(verdict))
          .register(registry);
      made.add(t);
      attemptDurations.set(verdict, t);
    }
    return t;
  }

  /** Takes this policy name's meters out of the registry. */
  void retire() {
    for (Meter m : made) {
      registry.remove(m);
    }
    made.clear();
  }
}
