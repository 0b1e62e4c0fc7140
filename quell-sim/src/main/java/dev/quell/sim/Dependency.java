package dev.quell.sim;

import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * A modelled dependency: how long it takes, how much it can do at once, and what goes wrong with it
 * when.
 *
 * <pre>{@code
 * Dependency inventory = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
 *     .named("inventory")
 *     .capacity(400)
 *     .incident(Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3)));
 * }</pre>
 *
 * <p><b>Latency</b> is lognormal, fixed by the two quantiles you give: {@code mu = ln(p50)} and
 * {@code sigma = (ln(p99) - ln(p50)) / 2.3263}, so the median is exactly {@code p50} and the 99th
 * percentile exactly {@code p99}. Its mean is {@code p50 × exp(sigma² / 2)} (25.4 ms for 20/100 ms).
 * A lognormal is the usual shape of service latency: most calls near the median, a long right tail.
 *
 * <p><b>Capacity</b> is how many attempts it serves at once; the rest wait in a first-in, first-out
 * queue, and their waiting adds to their latency. Work whose caller gave up (an attempt timeout, a
 * cancelled call) is not withdrawn: the dependency cannot know, so it keeps the work queued or in
 * service until it finishes. That is what lets a retry storm sustain itself. What happens past
 * capacity is a model choice, {@link #overload(Overload)}: an unbounded queue (the default), a
 * bounded queue that refuses when full, or a concurrency limit.
 *
 * <p>Immutable: every method returns a changed copy.
 */
public final class Dependency implements Target {
  /** The 99th percentile of the standard normal distribution. */
  static final double Z99 = 2.3263478740408408;

  private final String name;
  private final Duration p50;
  private final Duration p99;
  private final int capacity;
  private final Overload overload;
  private final double errorRate;
  private final List<Incident> incidents;

  private Dependency(String name, Duration p50, Duration p99, int capacity, Overload overload, double errorRate,
      List<Incident> incidents) {
    this.name = name;
    this.p50 = p50;
    this.p99 = p99;
    this.capacity = capacity;
    this.overload = overload;
    this.errorRate = errorRate;
    this.incidents = List.copyOf(incidents);
  }

  /**
   * A dependency named "dependency" whose latency has median {@code p50} and 99th percentile
   * {@code p99}, with unlimited capacity, no errors and no incidents.
   *
   * @throws IllegalArgumentException unless {@code 0 < p50 <= p99}
   */
  public static Dependency latency(Duration p50, Duration p99) {
    Objects.requireNonNull(p50, "p50");
    Objects.requireNonNull(p99, "p99");
    if (p50.isNegative() || p50.isZero() || p99.compareTo(p50) < 0) {
      throw new IllegalArgumentException("dependency latency must have 0 < p50 <= p99, was p50 " + p50.toMillis()
          + " ms and p99 " + p99.toMillis() + " ms");
    }
    return new Dependency("dependency", p50, p99, Integer.MAX_VALUE, Overload.unboundedQueue(), 0.0, List.of());
  }

  /** A copy with another name, used in reports. */
  public Dependency named(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("dependency name must not be blank");
    }
    return new Dependency(name, p50, p99, capacity, overload, errorRate, incidents);
  }

  /**
   * A copy that serves at most {@code concurrent} attempts at once (across this pod and its
   * {@link Load#peers(int) peers}); the rest queue.
   *
   * @param concurrent at least 1
   */
  public Dependency capacity(int concurrent) {
    if (concurrent < 1) {
      throw new IllegalArgumentException(
          "dependency capacity must be at least 1 concurrent attempt, was " + concurrent);
    }
    return new Dependency(name, p50, p99, concurrent, overload, errorRate, incidents);
  }

  /**
   * A copy that meets overload with {@code model}: an {@link Overload#unboundedQueue() unbounded
   * queue} (the default), a {@link Overload#boundedQueue(int) bounded queue} that refuses when full,
   * or a server-side {@link Overload#concurrencyLimit(int) concurrency limit}.
   */
  public Dependency overload(Overload model) {
    Objects.requireNonNull(model, "model");
    return new Dependency(name, p50, p99, capacity, model, errorRate, incidents);
  }

  /**
   * A copy that fails this share of its work at all times, after the usual latency.
   *
   * @param rate in [0, 1]
   */
  public Dependency errorRate(double rate) {
    if (!(rate >= 0 && rate <= 1)) {
      throw new IllegalArgumentException("dependency errorRate must be in [0, 1], was " + rate);
    }
    return new Dependency(name, p50, p99, capacity, overload, rate, incidents);
  }

  /** A copy with one more incident. */
  public Dependency incident(Incident incident) {
    Objects.requireNonNull(incident, "incident");
    List<Incident> more = new ArrayList<>(incidents);
    more.add(incident);
    return new Dependency(name, p50, p99, capacity, overload, errorRate, more);
  }

  @Override
  public String name() {
    return name;
  }

  /** The median latency. */
  public Duration p50() {
    return p50;
  }

  /** The 99th percentile of latency. */
  public Duration p99() {
    return p99;
  }

  /** How many attempts it serves at once; empty when unlimited. */
  public OptionalInt capacity() {
    return capacity == Integer.MAX_VALUE ? OptionalInt.empty() : OptionalInt.of(capacity);
  }

  /** What it does with attempts it has no room for. */
  public Overload overload() {
    return overload;
  }

  /** The share of work it fails outside incidents. */
  public double errorRate() {
    return errorRate;
  }

  /** Its incidents, in the order given. */
  public List<Incident> incidents() {
    return incidents;
  }

  /** The mean of the latency distribution when healthy: {@code p50 × exp(sigma² / 2)}. */
  public Duration meanLatency() {
    return Duration.ofNanos(Math.round(p50.toNanos() * Math.exp(sigma() * sigma() / 2)));
  }

  /** The lognormal's sigma. */
  double sigma() {
    return (Math.log(p99.toNanos()) - Math.log(p50.toNanos())) / Z99;
  }

  /** The lognormal's mu, in log-nanoseconds. */
  double mu() {
    return Math.log(p50.toNanos());
  }

  int rawCapacity() {
    return capacity;
  }



  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Dependency)) {
      return false;
    }
    Dependency d = (Dependency) o;
    return d.name.equals(name) && d.p50.equals(p50) && d.p99.equals(p99) && d.capacity == capacity
        && d.overload.equals(overload) && Double.compare(d.errorRate, errorRate) == 0 && d.incidents.equals(incidents);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, p50, p99, capacity, overload, errorRate, incidents);
  }

  /** For example "dependency: p50 20 ms, p99 100 ms, capacity 400; brownout ×8 from 2:00 to 3:00". */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(name).append(": p50 ").append(Text.millis(p50)).append(", p99 ")
        .append(Text.millis(p99));
    s.append(capacity == Integer.MAX_VALUE ? ", unlimited capacity" : ", capacity " + capacity);
    if (overload.kind() != Overload.Kind.UNBOUNDED_QUEUE) {
      s.append(", ").append(overload);
    }
    if (errorRate > 0) {
      s.append(", error rate ").append(Text.number(errorRate * 100)).append('%');
    }
    for (int i = 0; i < incidents.size(); i++) {
      s.append(i == 0 ? "; " : ", ").append(incidents.get(i));
    }
    return s.toString();
  }
}
