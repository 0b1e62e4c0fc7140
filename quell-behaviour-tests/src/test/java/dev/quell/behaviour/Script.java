package dev.quell.behaviour;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A scripted dependency: attempt n takes step n, which answers after its latency (virtual time) with
 * a value or a failure. The dependency counts the attempts it sees, as a server would; an attempt
 * past the end of the script fails the test.
 */
final class Script {
  /** One attempt's answer. */
  static final class Step {
    final Duration latency;
    final @Nullable Object value;
    final @Nullable Exception failure;
    /** Work that ignores cancellation and interrupts, and answers anyway. */
    final boolean stubborn;

    private Step(Duration latency, @Nullable Object value, @Nullable Exception failure, boolean stubborn) {
      this.latency = latency;
      this.value = value;
      this.failure = failure;
      this.stubborn = stubborn;
    }

    static Step ok(Object value) {
      return new Step(Duration.ZERO, value, null, false);
    }

    static Step fail(Exception failure) {
      return new Step(Duration.ZERO, null, failure, false);
    }

    Step after(Duration latency) {
      return new Step(latency, value, failure, stubborn);
    }

    Step after(long millis) {
      return after(Duration.ofMillis(millis));
    }

    /** The same answer, from work that ignores cancellation: it answers at its time anyway. */
    Step stubborn() {
      return new Step(latency, value, failure, true);
    }

    long latencyMillis() {
      return latency.toMillis();
    }
  }

  private final Step[] steps;
  private final AtomicInteger attempts = new AtomicInteger();
  /** Attempts whose work saw its cancellation (an interrupt, a cancelled future or subscription, a cancelled coroutine). */
  final AtomicInteger cancelled = new AtomicInteger();
  /** Values that were produced after their attempt was no longer wanted, as the work saw them leave. */
  final List<Object> answered = Collections.synchronizedList(new ArrayList<>());

  private Script(Step[] steps) {
    this.steps = steps;
  }

  static Script of(Step... steps) {
    return new Script(steps);
  }

  /** The next attempt's step; counts the attempt. */
  Step next() {
    int n = attempts.getAndIncrement();
    if (n >= steps.length) {
      throw new AssertionError("attempt " + (n + 1) + " ran past a script of " + steps.length);
    }
    return steps[n];
  }

  int attempts() {
    return attempts.get();
  }

  int length() {
    return steps.length;
  }
}
