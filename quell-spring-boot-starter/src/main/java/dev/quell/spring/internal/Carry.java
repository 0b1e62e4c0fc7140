package dev.quell.spring.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Limiter;
import dev.quell.RetryBudget;

/**
 * What a guard rebuilt with new settings takes over from the one it replaces, so that changing a setting
 * during an outage does not hand the failing dependency a burst: the spent share of a retry budget, an
 * adaptive limit's current limit; a circuit breaker that is not closed, or an adaptive throttle that is
 * refusing, is not replaced at all until it has closed or refuses nothing (see {@link Pins}).
 *
 * <p>quell-core has no way to hand one guard's state to another (the seam it needs is in the report of
 * issue 20). Until it does, the budget's share is reproduced with the budget's own public operations —
 * spending whole tokens, then depositing successes — so it lands within one success's deposit of the
 * share it had, never by a rule written here.
 */
final class Carry {
  /** More than any budget's whole capacity in tokens and deposits: a bound, never reached in practice. */
  private static final int MAX_STEPS = 2_000_000;
  private static final double EPSILON = 1e-9;

  private Carry() {}

  /**
   * Brings {@code to} (new, not yet used) to the share of its capacity that {@code from} holds now. A
   * budget that holds nothing of its own (none, concurrent: it counts calls in flight) has nothing to carry.
   */
  static void spentShare(RetryBudget from, RetryBudget to) {
    if (from.isUnbounded() || to.isUnbounded() || !holdsTokens(from) || !holdsTokens(to)) {
      return;
    }
    double target = to.capacity() * (from.tokens() / from.capacity());
    // down in whole tokens, to at most the target
    for (int i = 0; i < MAX_STEPS && to.tokens() - target > EPSILON; i++) {
      double before = to.tokens();
      if (!to.trySpend(Criticality.CRITICAL) || to.tokens() >= before) {
        to.recordFailure(); // a budget a retry does not charge (feedback) is lowered by a failure
        if (to.tokens() >= before) {
          break;
        }
      }
    }
    // up by successes' deposits, to within one deposit of the target
    for (int i = 0; i < MAX_STEPS && target - to.tokens() > EPSILON; i++) {
      double before = to.tokens();
      to.deposit();
      if (to.tokens() <= before) {
        break;
      }
    }
  }

  private static boolean holdsTokens(RetryBudget budget) {
    double capacity = budget.capacity();
    return capacity > 0 && Double.isFinite(capacity) && !QuellEndpoint.kind(budget).equals("concurrent");
  }

  /** The configuration of a new adaptive limit that starts where {@code from} is now, within its own bounds. */
  static Limiter.AdaptiveConfig startingAt(Limiter from, Limiter.AdaptiveConfig config) {
    int limit = Math.max(config.minLimit(), Math.min(config.maxLimit(), from.limit()));
    return config.withInitialLimit(limit);
  }

  /**
   * Whether an adaptive throttle must be kept, whatever its new settings say, until it refuses nothing: its
   * window of requests and accepts is the dependency's recent history, and quell-core has no way to hand it
   * to a new throttle, which would start refusing nothing — a burst at a dependency that was rejecting.
   * Read at {@code CRITICAL}, the probability a dashboard shows; sheddable work may still be refused a
   * little when it goes.
   */
  static boolean stillRefusing(Limiter throttle) {
    return throttle.rejectionProbability() > 0;
  }

  /** Whether a breaker must be kept, whatever its new settings say, until it has closed. */
  static boolean inTheMiddleOfAnOutage(CircuitBreaker breaker) {
    return breaker.state() != CircuitBreaker.State.CLOSED;
  }
}
