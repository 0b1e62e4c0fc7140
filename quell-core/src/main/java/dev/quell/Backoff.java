package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * How long to wait before each retry.
 *
 * <p>A Retry-After named by the dependency (or by a limiter) replaces the backoff for that retry,
 * capped by {@link #max()} and never jittered. A delay that would end after the call's deadline is
 * not slept: the call ends at once with {@link StopReason#DEADLINE_EXCEEDED}.
 *
 * <p>Implementations must be immutable and thread-safe; write your own as a lambda-friendly class
 * or use {@link #of(Delay)}.
 */
public interface Backoff {

  /** Retry at once. */
  Backoff NONE = constant(Duration.ZERO);

  /**
   * The delay before retry number {@code retry} (1 for the first retry) after an attempt judged
   * {@code verdict}, drawing any randomness from {@code random}.
   */
  Duration delay(int retry, Verdict verdict, RandomGenerator random);

  /** The longest delay this backoff produces, and the cap on a dependency's Retry-After. 30 s unless the backoff says otherwise. */
  default Duration max() {
    return Exponential.DEFAULT_MAX;
  }

  /**
   * Exponential backoff with full jitter: 100 ms for a transient failure, 1 s when throttled, doubling
   * each retry, at most 30 s.
   */
  static Exponential exponential() {
    return Exponential.DEFAULT;
  }

  /** Exponential backoff from {@code base} (for transient and throttled failures alike), doubling, at most 30 s, full jitter. */
  static Exponential exponential(Duration base) {
    return new Exponential(base, base, 2.0, Exponential.DEFAULT_MAX, Jitter.FULL);
  }

  /** Exponential backoff with every parameter given, full jitter. */
  static Exponential exponential(Duration transientBase, Duration throttledBase, double factor, Duration max) {
    return new Exponential(transientBase, throttledBase, factor, max, Jitter.FULL);
  }

  /** The same delay before every retry, no jitter. */
  static Backoff constant(Duration delay) {
    new Problems().notNegative("backoff delay", delay).throwIfAny(); // (null is reported as a problem too)
    return new Constant(delay);
  }

  /**
   * A custom backoff from a function of the retry number and verdict. Its delays are capped at 30 s
   * (its {@link #max()}); a function that throws or returns null ends retrying for that call (it
   * stops with {@link StopReason#PERMANENT} and the last failure) and is reported once in the log.
   */
  static Backoff of(Delay delay) {
    Objects.requireNonNull(delay, "delay");
    return (retry, verdict, random) -> delay.delay(retry, verdict);
  }

  /** A custom delay function for {@link #of(Delay)}. */
  @FunctionalInterface
  interface Delay {
    /** The delay before retry number {@code retry} (1 for the first retry). */
    Duration delay(int retry, Verdict verdict);
  }

  /**
   * Exponential backoff: {@code base × factor^(retry-1)}, capped at {@code max}, then jittered. The
   * base is {@code throttledBase} after a {@link Verdict.Kind#THROTTLED} verdict without a
   * Retry-After, {@code transientBase} otherwise. Immutable: each {@code with…} returns a new one.
   */
  @dev.quell.internal.CheckReturnValue
  final class Exponential implements Backoff {
    static final Duration DEFAULT_MAX = Duration.ofSeconds(30);
    static final Exponential DEFAULT =
        new Exponential(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0, DEFAULT_MAX, Jitter.FULL);

    private final Duration transientBase;
    private final Duration throttledBase;
    private final double factor;
    private final Duration max;
    private final Jitter jitter;

    Exponential(Duration transientBase, Duration throttledBase, double factor, Duration max, Jitter jitter) {
      Problems p = new Problems()
          .notNegative("backoff transientBase", transientBase)
          .notNegative("backoff throttledBase", throttledBase)
          .require(factor >= 1.0 && Double.isFinite(factor), "backoff factor", factor, "must be a finite number of at least 1")
          .notNegative("backoff max", max);
      if (p.isEmpty() && max.compareTo(transientBase) < 0) {
        p.require(false, "backoff max", max, "must not be less than transientBase (" + Problems.duration(transientBase) + ")");
      }
      p.throwIfAny();
      this.transientBase = transientBase;
      this.throttledBase = throttledBase;
      this.factor = factor;
      this.max = max;
      this.jitter = Objects.requireNonNull(jitter, "jitter");
    }

    /** A copy with another base for transient failures. */
    public Exponential withTransientBase(Duration base) {
      return new Exponential(base, throttledBase, factor, max, jitter);
    }

    /** A copy with another base for throttled failures. */
    public Exponential withThrottledBase(Duration base) {
      return new Exponential(transientBase, base, factor, max, jitter);
    }

    /** A copy with another growth factor (at least 1). */
    public Exponential withFactor(double factor) {
      return new Exponential(transientBase, throttledBase, factor, max, jitter);
    }

    /** A copy with another cap. */
    public Exponential withMax(Duration max) {
      return new Exponential(transientBase, throttledBase, factor, max, jitter);
    }

    /** A copy with another jitter mode. */
    public Exponential withJitter(Jitter jitter) {
      return new Exponential(transientBase, throttledBase, factor, max, jitter);
    }

    /** The jitter mode. */
    public Jitter jitter() {
      return jitter;
    }

    @Override
    public Duration max() {
      return max;
    }

    @Override
    public Duration delay(int retry, Verdict verdict, RandomGenerator random) {
      return Duration.ofNanos(delayNanos(retry, verdict, random));
    }

    /** The delay in nanoseconds, saturated; what the core reads, so a retry allocates no Duration. */
    long delayNanos(int retry, Verdict verdict, RandomGenerator random) {
      Duration base = verdict.kind() == Verdict.Kind.THROTTLED ? throttledBase : transientBase;
      double nanos = Durations.toNanosSaturated(base) * Math.pow(factor, Math.max(0, retry - 1));
      long capped = (long) Math.min(nanos, (double) Durations.toNanosSaturated(max));
      return jitter.apply(capped, random);
    }

    @Override
    public boolean equals(@Nullable Object o) {
      if (!(o instanceof Exponential)) {
        return false;
      }
      Exponential e = (Exponential) o;
      return e.transientBase.equals(transientBase) && e.throttledBase.equals(throttledBase)
          && Double.compare(e.factor, factor) == 0 && e.max.equals(max) && e.jitter == jitter;
    }

    @Override
    public int hashCode() {
      return Objects.hash(transientBase, throttledBase, factor, max, jitter);
    }

    @Override
    public String toString() {
      return "exponential(" + Problems.duration(transientBase) + " transient, " + Problems.duration(throttledBase)
          + " throttled, ×" + factor + ", max " + Problems.duration(max) + ", " + jitter + " jitter)";
    }
  }

  /** A constant delay. */
  final class Constant implements Backoff {
    private final Duration delay;
    private final long nanos;

    Constant(Duration delay) {
      this.delay = delay;
      this.nanos = Durations.toNanosSaturated(delay);
    }

    long delayNanos() {
      return nanos;
    }

    @Override
    public Duration delay(int retry, Verdict verdict, RandomGenerator random) {
      return delay;
    }

    /** The delay itself when it is longer than 30 s: a constant backoff is never cut short. */
    @Override
    public Duration max() {
      return delay.compareTo(Exponential.DEFAULT_MAX) > 0 ? delay : Exponential.DEFAULT_MAX;
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof Constant && ((Constant) o).delay.equals(delay);
    }

    @Override
    public int hashCode() {
      return delay.hashCode();
    }

    @Override
    public String toString() {
      return delay.isZero() ? "none" : "constant(" + Problems.duration(delay) + ")";
    }
  }
}
