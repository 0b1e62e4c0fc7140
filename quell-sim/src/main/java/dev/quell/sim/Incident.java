package dev.quell.sim;

import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Something going wrong with a {@link Dependency} for a window of simulated time: it gets slower
 * ({@link #brownout}), fails a share of its work ({@link #failing}), or refuses everything
 * ({@link #outage}). Without {@link #between} an incident lasts the whole run.
 *
 * <pre>{@code
 * Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3))
 * }</pre>
 *
 * <p>Immutable. Incidents on one dependency may overlap: slowdowns multiply, failure rates combine
 * as independent chances, and an outage wins.
 */
public final class Incident {

  /** What kind of trouble. */
  public enum Kind {
    /** Every attempt that starts service inside the window takes {@link #factor()} times as long. */
    BROWNOUT,
    /**
     * Each attempt that starts service inside the window fails with probability {@link #failureRate()},
     * after its usual latency (as a server answering 500 would); it occupies capacity like any other.
     */
    FAILING,
    /**
     * Each attempt that arrives inside the window is refused at once (as a refused connection would),
     * without occupying capacity. Work already in service finishes normally.
     */
    OUTAGE
  }

  private final Kind kind;
  private final double magnitude;
  private final Duration from;
  private final @Nullable Duration to;

  private Incident(Kind kind, double magnitude, Duration from, @Nullable Duration to) {
    this.kind = kind;
    this.magnitude = magnitude;
    this.from = from;
    this.to = to;
  }

  /**
   * The dependency gets {@code factor} times slower: every latency it draws is multiplied by it.
   *
   * @param factor at least 1, finite
   */
  public static Incident brownout(double factor) {
    if (!(factor >= 1) || !Double.isFinite(factor)) {
      throw new IllegalArgumentException("brownout factor must be a finite number of at least 1, was " + factor);
    }
    return new Incident(Kind.BROWNOUT, factor, Duration.ZERO, null);
  }

  /**
   * The dependency fails a share of its work.
   *
   * @param rate the chance that an attempt fails, in (0, 1]
   */
  public static Incident failing(double rate) {
    if (!(rate > 0 && rate <= 1)) {
      throw new IllegalArgumentException("failing rate must be in (0, 1], was " + rate);
    }
    return new Incident(Kind.FAILING, rate, Duration.ZERO, null);
  }

  /** The dependency is down: it refuses every attempt at once. */
  public static Incident outage() {
    return new Incident(Kind.OUTAGE, 1.0, Duration.ZERO, null);
  }

  /**
   * A copy that lasts from {@code from} to {@code to}, measured from the start of the run.
   *
   * @throws IllegalArgumentException unless {@code 0 <= from < to}
   */
  public Incident between(Duration from, Duration to) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    if (from.isNegative() || to.compareTo(from) <= 0) {
      throw new IllegalArgumentException("incident window must have 0 <= from < to, was from " + from + " to " + to);
    }
    return new Incident(kind, magnitude, from, to);
  }

  /** The kind of trouble. */
  public Kind kind() {
    return kind;
  }

  /** How many times slower a brownout makes the dependency; 1 for the other kinds. */
  public double factor() {
    return kind == Kind.BROWNOUT ? magnitude : 1.0;
  }

  /** The chance that an attempt fails: the rate for {@link Kind#FAILING}, 1 for an outage, 0 for a brownout. */
  public double failureRate() {
    return kind == Kind.BROWNOUT ? 0.0 : magnitude;
  }

  /** When the incident starts, from the start of the run. */
  public Duration from() {
    return from;
  }

  /** When it ends; empty when it lasts until the end of the run. */
  public Optional<Duration> to() {
    return Optional.ofNullable(to);
  }

  /** The incident in a few words, without its window: "brownout ×8", "failing 30%", "outage". */
  public String describe() {
    switch (kind) {
      case BROWNOUT:
        return "brownout ×" + Text.number(magnitude);
      case FAILING:
        return "failing " + Text.number(magnitude * 100) + "%";
      default:
        return "outage";
    }
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Incident)) {
      return false;
    }
    Incident i = (Incident) o;
    return i.kind == kind && Double.compare(i.magnitude, magnitude) == 0 && i.from.equals(from)
        && Objects.equals(i.to, to);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, magnitude, from, to);
  }

  /** For example "brownout ×8 from 2:00 to 3:00". */
  @Override
  public String toString() {
    if (to == null) {
      return describe() + (from.isZero() ? " for the whole run" : " from " + Text.clock(from));
    }
    return describe() + " from " + Text.clock(from) + " to " + Text.clock(to);
  }
}
