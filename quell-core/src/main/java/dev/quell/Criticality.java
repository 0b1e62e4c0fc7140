package dev.quell;

/**
 * How much a call matters, in the four levels Google's SRE practice and NResilience use. A call with
 * no label is {@link #CRITICAL}.
 *
 * <p>Criticality decides which retries a nearly spent budget still funds: every level may spend
 * while the budget is healthy; as it drains, {@link #SHEDDABLE} work stops retrying first (once
 * more than half the budget is spent), then {@link #SHEDDABLE_PLUS} (once more than three
 * quarters is spent), and {@link #CRITICAL} and {@link #CRITICAL_PLUS} may spend the last token.
 */
public enum Criticality {
  /** Work whose failure is directly visible to a user and must not be shed; never accepted from outside. */
  CRITICAL_PLUS(0.0),
  /** The default: work a user is waiting for. */
  CRITICAL(0.0),
  /** Work that can be shed under pressure, but after {@link #SHEDDABLE}. */
  SHEDDABLE_PLUS(0.25),
  /** Background or batch work, the first to be shed. */
  SHEDDABLE(0.5);

  private final double reserve;

  Criticality(double reserve) {
    this.reserve = reserve;
  }

  /**
   * The share of a budget's capacity (0..1) that a retry at this level must leave unspent: 0 for
   * the critical levels, 0.25 for {@code SHEDDABLE_PLUS}, 0.5 for {@code SHEDDABLE}.
   */
  public double reserve() {
    return reserve;
  }

  /** The wire name, as sent in {@code X-Criticality}: {@code CRITICAL_PLUS}, {@code CRITICAL}, … */
  public String wireName() {
    return name();
  }
}
