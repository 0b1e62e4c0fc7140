package dev.quell.sim;

import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
 * <p>A <b>heavy tail</b> is a model choice ({@link #tail(double, Duration, Duration)}): a share of
 * attempts, chosen independently at random, draws its latency from a second, slower lognormal
 * instead — a garbage collection, a cold cache, one bad replica. That is the shape hedging is for:
 * an attempt that drew from the tail is not slow because the dependency is, so a second attempt sent
 * beside it is very likely fast.
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
  private final @Nullable Tail tail;

  /**
   * The slow part of a heavy-tailed latency: {@code share} of the attempts take a latency drawn from a
   * lognormal with median {@code p50} and 99th percentile {@code p99} (see
   * {@link Dependency#tail(double, Duration, Duration)}).
   *
   * @param share the share of attempts that are slow, in (0, 1)
   * @param p50 the median of the slow attempts' latency
   * @param p99 the 99th percentile of the slow attempts' latency
   */
  public record Tail(double share, Duration p50, Duration p99) {
    /** Checks the tail. */
    public Tail {
      Objects.requireNonNull(p50, "p50");
      Objects.requireNonNull(p99, "p99");
      if (!(share > 0 && share < 1)) {
        throw new IllegalArgumentException("dependency tail share must be above 0 and below 1, was " + share);
      }
      if (p50.isNegative() || p50.isZero() || p99.compareTo(p50) < 0) {
        throw new IllegalArgumentException("dependency tail latency must have 0 < p50 <= p99, was p50 "
            + Text.millis(p50) + " and p99 " + Text.millis(p99));
      }
      if (p99.compareTo(Simulation.MAX_DURATION) > 0) {
        throw new IllegalArgumentException("dependency tail p99 must be at most a day (24h), was "
            + Text.duration(p99));
      }
    }

    double sigma() {
      return (Math.log(p99.toNanos()) - Math.log(p50.toNanos())) / Z99;
    }

    double mu() {
      return Math.log(p50.toNanos());
    }

    /** "tail of 2% at p50 400 ms, p99 1000 ms" */
    @Override
    public String toString() {
      return "tail of " + Text.number(share * 100) + "% at p50 " + Text.millis(p50) + ", p99 " + Text.millis(p99);
    }
  }

  private Dependency(String name, Duration p50, Duration p99, int capacity, Overload overload, double errorRate,
      List<Incident> incidents, @Nullable Tail tail) {
    this.name = name;
    this.p50 = p50;
    this.p99 = p99;
    this.capacity = capacity;
    this.overload = overload;
    this.errorRate = errorRate;
    this.incidents = List.copyOf(incidents);
    this.tail = tail;
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
    return new Dependency("dependency", p50, p99, Integer.MAX_VALUE, Overload.unboundedQueue(), 0.0, List.of(), null);
  }

  /** A copy with another name, used in reports. */
  public Dependency named(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("dependency name must not be blank");
    }
    return new Dependency(name, p50, p99, capacity, overload, errorRate, incidents, tail);
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
    return new Dependency(name, p50, p99, concurrent, overload, errorRate, incidents, tail);
  }

  /**
   * A copy that meets overload with {@code model}: an {@link Overload#unboundedQueue() unbounded
   * queue} (the default), a {@link Overload#boundedQueue(int) bounded queue} that refuses when full,
   * or a server-side {@link Overload#concurrencyLimit(int) concurrency limit}.
   */
  public Dependency overload(Overload model) {
    Objects.requireNonNull(model, "model");
    return new Dependency(name, p50, p99, capacity, model, errorRate, incidents, tail);
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
    return new Dependency(name, p50, p99, capacity, overload, rate, incidents, tail);
  }

  /** A copy with one more incident. */
  public Dependency incident(Incident incident) {
    Objects.requireNonNull(incident, "incident");
    List<Incident> more = new ArrayList<>(incidents);
    more.add(incident);
    return new Dependency(name, p50, p99, capacity, overload, errorRate, more, tail);
  }

  /**
   * A copy with a heavy tail: {@code share} of the attempts, chosen independently at random, take a
   * latency drawn from a second lognormal with median {@code p50} and 99th percentile {@code p99}; the
   * rest keep the latency of {@link #latency}. Incidents slow both alike. The latency this dependency
   * was made with then describes its usual attempts, not all of them: with a 2% tail, its overall
   * 99th percentile lies in the tail.
   *
   * <pre>{@code
   * Dependency tailed = Dependency.latency(Duration.ofMillis(10), Duration.ofMillis(40))
   *     .tail(0.02, Duration.ofMillis(400), Duration.ofSeconds(1));
   * }</pre>
   *
   * @param share in (0, 1)
   * @throws IllegalArgumentException unless {@code 0 < share < 1} and {@code 0 < p50 <= p99 <= 24h}
   */
  public Dependency tail(double share, Duration p50, Duration p99) {
    return new Dependency(name, this.p50, this.p99, capacity, overload, errorRate, incidents,
        new Tail(share, p50, p99));
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

  /** Its heavy tail, if it has one. */
  public Optional<Tail> tail() {
    return Optional.ofNullable(tail);
  }

  /**
   * The mean of the latency distribution when healthy: {@code p50 × exp(sigma² / 2)}; with a tail, the
   * mean of the mixture.
   */
  public Duration meanLatency() {
    double body = p50.toNanos() * Math.exp(sigma() * sigma() / 2);
    if (tail == null) {
      return Duration.ofNanos(Math.round(body));
    }
    double slow = tail.p50().toNanos() * Math.exp(tail.sigma() * tail.sigma() / 2);
    return Duration.ofNanos(Math.round((1 - tail.share()) * body + tail.share() * slow));
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
        && d.overload.equals(overload) && Double.compare(d.errorRate, errorRate) == 0 && d.incidents.equals(incidents)
        && Objects.equals(d.tail, tail);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, p50, p99, capacity, overload, errorRate, incidents, tail);
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
    if (tail != null) {
      s.append(", ").append(tail);
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
