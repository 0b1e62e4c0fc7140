package dev.quell;

import dev.quell.internal.Problems;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Timeouts that follow the dependency's measured latency instead of a number guessed once. Each
 * policy instance keeps a histogram of its successful attempts' latencies over a sliding window;
 * with measured timing on, an attempt's timeout is tightened to a multiple of the live 95th
 * percentile — never looser than the configured attempt timeout, never tighter than a floor — once
 * the window holds enough samples. Until then the configured values apply. A hedge configured by
 * {@link Hedge#maxExtraLoad} reads its delay from the same histogram.
 *
 * <pre>{@code
 * static final Resilience PRICING = Resilience.DEFAULT
 *     .withName("pricing")
 *     .withAttemptTimeout(Duration.ofSeconds(2))                 // the loosest it may be
 *     .withMeasuredTiming(MeasuredTiming.multipleOfP95(3)         // 3 × the live p95 ...
 *         .withFloor(Duration.ofMillis(50)));                    // ... but never under 50 ms
 * }</pre>
 *
 * <p>Why: a fixed attempt timeout is either loose enough for the worst day — and then a hung
 * attempt holds the caller for seconds on every ordinary day — or tight enough for an ordinary day
 * and cuts the slow day's answers off. A ceiling at a multiple of the live p95 ends the hung
 * attempts of an ordinary day early, and loosens (up to the configured timeout) when the
 * dependency slows down, within a window. It only ever tightens the configured timeout: measured
 * timing cannot make a policy wait longer than you said.
 *
 * <p>Immutable configuration; the live figures are {@link Resilience#timing()}.
 */
@dev.quell.internal.CheckReturnValue
public final class MeasuredTiming {
  /** The default window: 30 seconds, as Finagle's backup requests measure. */
  public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(30);
  /** The default number of samples the window must hold before the measured values apply. */
  public static final int DEFAULT_MIN_SAMPLES = 50;

  private final double multiple;
  private final long floorNanos;
  private final long windowNanos;
  private final int minSamples;

  private MeasuredTiming(double multiple, long floorNanos, long windowNanos, int minSamples) {
    this.multiple = multiple;
    this.floorNanos = floorNanos;
    this.windowNanos = windowNanos;
    this.minSamples = minSamples;
  }

  /**
   * An attempt ceiling of {@code multiple} × the live p95 (at least 1), with a floor of 10 ms, a
   * window of {@value #DEFAULT_MIN_SAMPLES} samples over 30 s.
   */
  public static MeasuredTiming multipleOfP95(double multiple) {
    new Problems().require(Double.isFinite(multiple) && multiple >= 1 && multiple <= 1000, "measured timing multiple",
        multiple, "must be between 1 and 1000 (a ceiling below the p95 would cut off one answer in twenty)")
        .throwIfAny();
    return new MeasuredTiming(multiple, 10_000_000L, DEFAULT_WINDOW.toNanos(), DEFAULT_MIN_SAMPLES);
  }

  /** A copy whose ceiling is never below {@code floor} (positive). */
  public MeasuredTiming withFloor(Duration floor) {
    new Problems().positive("measured timing floor", floor).throwIfAny();
    return new MeasuredTiming(multiple, Math.min(Durations.toNanosSaturated(floor), ResilienceContext.NO_LIMIT_NANOS),
        windowNanos, minSamples);
  }

  /** A copy measuring over {@code window} (between 1 s and 1 h). */
  public MeasuredTiming withWindow(Duration window) {
    new Problems().require(window != null && window.compareTo(Duration.ofSeconds(1)) >= 0
        && window.compareTo(Duration.ofHours(1)) <= 0, "measured timing window", window,
        "must be between 1 s and 1 h").throwIfAny();
    return new MeasuredTiming(multiple, floorNanos, Objects.requireNonNull(window).toNanos(), minSamples);
  }

  /** A copy that applies the measured values once the window holds at least {@code samples} (1 or more). */
  public MeasuredTiming withMinSamples(int samples) {
    new Problems().require(samples >= 1, "measured timing minSamples", samples, "must be at least 1").throwIfAny();
    return new MeasuredTiming(multiple, floorNanos, windowNanos, samples);
  }

  /** The multiple of the p95. */
  public double multiple() {
    return multiple;
  }

  /** The floor. */
  public Duration floor() {
    return Duration.ofNanos(floorNanos);
  }

  /** The window. */
  public Duration window() {
    return Duration.ofNanos(windowNanos);
  }

  /** The samples needed before the measured values apply. */
  public int minSamples() {
    return minSamples;
  }

  long floorNanos() {
    return floorNanos;
  }

  long windowNanos() {
    return windowNanos;
  }

  /** The live figures of one policy instance, for dashboards. Read when asked; each read is a snapshot. */
  public static final class Stats {
    private final long samples;
    private final long p95;
    private final long ceiling;
    private final long hedgeDelay;
    private final boolean measuring;

    Stats(long samples, long p95, long ceiling, long hedgeDelay, boolean measuring) {
      this.samples = samples;
      this.p95 = p95;
      this.ceiling = ceiling;
      this.hedgeDelay = hedgeDelay;
      this.measuring = measuring;
    }

    /** Successful attempts in the window. */
    public long samples() {
      return samples;
    }

    /** The live 95th percentile of successful attempts; empty until there are samples. */
    public Optional<Duration> p95() {
      return samples == 0 ? Optional.empty() : Optional.of(Duration.ofNanos(p95));
    }

    /** The attempt timeout in force now (measured or configured); empty when there is none. */
    public Optional<Duration> attemptCeiling() {
      return ceiling == Long.MAX_VALUE ? Optional.empty() : Optional.of(Duration.ofNanos(ceiling));
    }

    /** The hedge delay in force now; empty without hedging. */
    public Optional<Duration> hedgeDelay() {
      return hedgeDelay == Long.MAX_VALUE ? Optional.empty() : Optional.of(Duration.ofNanos(hedgeDelay));
    }

    /** True once the window holds enough samples for the measured values to apply. */
    public boolean isMeasuring() {
      return measuring;
    }

    @Override
    public String toString() {
      return "MeasuredTiming.Stats[samples=" + samples + ", p95=" + p95().map(d -> d.toNanos() / 1e6 + " ms").orElse("-")
          + ", ceiling=" + attemptCeiling().map(d -> d.toNanos() / 1e6 + " ms").orElse("none")
          + ", hedgeDelay=" + hedgeDelay().map(d -> d.toNanos() / 1e6 + " ms").orElse("none")
          + (measuring ? "" : " (configured values: too few samples)") + "]";
    }
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof MeasuredTiming)) {
      return false;
    }
    MeasuredTiming m = (MeasuredTiming) o;
    return Double.compare(m.multiple, multiple) == 0 && m.floorNanos == floorNanos && m.windowNanos == windowNanos
        && m.minSamples == minSamples;
  }

  @Override
  public int hashCode() {
    return Objects.hash(multiple, floorNanos, windowNanos, minSamples);
  }

  @Override
  public String toString() {
    return "MeasuredTiming[" + multiple + " × p95, floor " + floorNanos / 1_000_000 + " ms, window "
        + windowNanos / 1_000_000_000 + " s, " + minSamples + " samples]";
  }
}
