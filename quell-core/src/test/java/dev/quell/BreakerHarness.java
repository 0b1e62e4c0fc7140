package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** Drives a breaker's gate the way the core does: one record per attempt, the clock's now for each step. */
final class BreakerHarness {
  final CircuitBreaker breaker;
  final SeededClock clock;
  final Gate gate;
  /** The record of the latest refused attempt, for its Retry-After. */
  @Nullable AttemptRecord lastRefused;

  BreakerHarness(CircuitBreaker.Config config) {
    this(config, new SeededClock());
  }

  BreakerHarness(CircuitBreaker.Config config, SeededClock clock) {
    this.clock = clock;
    this.breaker = CircuitBreaker.of("test", config, clock);
    this.gate = breaker.gate();
  }

  /** A fresh record, as the core makes before asking its gates. */
  AttemptRecord record() {
    return new AttemptRecord().reset(1, AttemptRecord.FIRST, Criticality.CRITICAL, clock.nanoTime(), 1);
  }

  /** Asks the gate; returns the record if admitted, null if refused. */
  @Nullable AttemptRecord tryAdmit() {
    AttemptRecord r = record();
    if (gate.tryAdmit(r, 0, clock.nanoTime())) {
      return r;
    }
    lastRefused = r;
    return null;
  }

  AttemptRecord admitted() {
    AttemptRecord r = tryAdmit();
    assertThat(r).as("admitted in state %s", breaker.state()).isNotNull();
    return r;
  }

  AttemptRecord refused() {
    AttemptRecord r = tryAdmit();
    assertThat(r).as("refused in state %s", breaker.state()).isNull();
    return lastRefused;
  }

  void end(AttemptRecord r, int how) {
    gate.release(r, 0, how, clock.nanoTime());
  }

  /** One attempt, admitted and ended at once. */
  AttemptRecord call(int how) {
    AttemptRecord r = admitted();
    end(r, how);
    return r;
  }

  /** One attempt that runs for {@code took} before it ends. */
  AttemptRecord call(int how, Duration took) {
    AttemptRecord r = admitted();
    clock.advance(took);
    end(r, how);
    return r;
  }

  void calls(int n, int how) {
    for (int i = 0; i < n; i++) {
      call(how);
    }
  }

  /** Retry-After of the latest refusal, in nanos. */
  long lastRetryAfter() {
    return lastRefused == null ? Long.MIN_VALUE : lastRefused.retryAfterNanos;
  }

  static String how(int how) {
    switch (how) {
      case Gate.SUCCEEDED: return "SUCCEEDED";
      case Gate.FAILED: return "FAILED";
      case Gate.TIMED_OUT: return "TIMED_OUT";
      case Gate.THROTTLED: return "THROTTLED";
      case Gate.REJECTED: return "REJECTED";
      case Gate.CANCELLED: return "CANCELLED";
      case Gate.NOT_STARTED: return "NOT_STARTED";
      default: return "how " + how;
    }
  }
}
