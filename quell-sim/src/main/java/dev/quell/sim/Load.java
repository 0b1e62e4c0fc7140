package dev.quell.sim;

import dev.quell.Criticality;
import dev.quell.sim.internal.Text;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The calls offered to the policy: a rate of Poisson arrivals, an optional mix of criticalities, and
 * the number of peers (other pods offering the same load to the same dependencies).
 *
 * <pre>{@code
 * Load.perSecond(500)                                   // one pod, 500 calls a second
 * Load.perSecond(500).peers(49)                         // a fleet of 50 such pods
 * Load.perSecond(500).criticality(Criticality.SHEDDABLE, 0.2)
 *                    .criticality(Criticality.CRITICAL, 0.8)
 * }</pre>
 *
 * <p><b>Peers.</b> Only this pod is simulated call by call. Its {@code n} peers behave alike (same
 * load, same policy, same luck), so a dependency serves {@code n + 1} times what this pod sends it:
 * each attempt counts {@code n + 1} times toward the dependency's occupancy, queue and queue limit,
 * and this pod gets one {@code (n + 1)}-th of its capacity (rounded down, at least one attempt). Budgets
 * stay per pod, as they are in production.
 *
 * <p><b>Criticality.</b> With a mix, each call is labelled with a criticality drawn from the shares,
 * through {@code ResilienceContext}, and every policy that can use it (more than one attempt and a
 * budget) spends at the ambient criticality ({@code withAmbientCriticality(true)}): as the budget
 * drains, {@code SHEDDABLE} retries are refused first. Without a mix calls carry no label.
 *
 * <p>Immutable: every method returns a changed copy.
 */
public final class Load {
  private final double perSecond;
  private final int peers;
  private final Map<Criticality, Double> mix;

  private Load(double perSecond, int peers, Map<Criticality, Double> mix) {
    this.perSecond = perSecond;
    this.peers = peers;
    this.mix = mix;
  }

  /**
   * Calls arriving at {@code rate} per second on average, as a Poisson process.
   *
   * @param rate greater than 0, finite
   */
  public static Load perSecond(double rate) {
    if (!(rate > 0) || !Double.isFinite(rate)) {
      throw new IllegalArgumentException("load rate must be a finite number of calls per second above 0, was " + rate);
    }
    return new Load(rate, 0, Collections.unmodifiableMap(new EnumMap<>(Criticality.class)));
  }

  /**
   * A copy in which {@code n} other pods offer the same load to the same dependencies.
   *
   * @param n at least 0
   */
  public Load peers(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("load peers must be at least 0, was " + n);
    }
    return new Load(perSecond, n, mix);
  }

  /**
   * A copy in which {@code share} of the calls carry {@code criticality}. Shares are relative: they
   * are divided by their sum, so 0.2 and 0.8 mean the same as 1 and 4.
   *
   * @param share greater than 0, finite
   */
  public Load criticality(Criticality criticality, double share) {
    Objects.requireNonNull(criticality, "criticality");
    if (!(share > 0) || !Double.isFinite(share)) {
      throw new IllegalArgumentException("criticality share must be a finite number above 0, was " + share);
    }
    EnumMap<Criticality, Double> more = new EnumMap<>(Criticality.class);
    more.putAll(mix);
    more.put(criticality, share);
    return new Load(perSecond, peers, Collections.unmodifiableMap(more));
  }

  /** Calls per second offered by this pod. */
  public double rate() {
    return perSecond;
  }

  /** Other pods offering the same load. */
  public int peers() {
    return peers;
  }

  /** The criticality mix as shares that add up to 1; empty when calls carry no label. */
  public Map<Criticality, Double> mix() {
    double sum = 0;
    for (double v : mix.values()) {
      sum += v;
    }
    EnumMap<Criticality, Double> normalised = new EnumMap<>(Criticality.class);
    for (Map.Entry<Criticality, Double> e : mix.entrySet()) {
      normalised.put(e.getKey(), e.getValue() / sum);
    }
    return Collections.unmodifiableMap(normalised);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Load)) {
      return false;
    }
    Load l = (Load) o;
    return Double.compare(l.perSecond, perSecond) == 0 && l.peers == peers && l.mix().equals(mix());
  }

  @Override
  public int hashCode() {
    return Objects.hash(perSecond, peers, mix());
  }

  /** For example "500 calls/s, 49 peers, 80% CRITICAL, 20% SHEDDABLE". */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(Text.number(perSecond)).append(" calls/s");
    if (peers > 0) {
      s.append(", ").append(peers).append(peers == 1 ? " peer" : " peers");
    }
    for (Map.Entry<Criticality, Double> e : mix().entrySet()) {
      s.append(", ").append(Text.number(e.getValue() * 100)).append("% ").append(e.getKey());
    }
    return s.toString();
  }
}
