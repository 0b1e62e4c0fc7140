package dev.quell;

/**
 * The retry budget as the last gate: it funds retries and hedges (never first attempts, which the
 * core does not ask it about), and hears when a funded attempt ends, for kinds that count what is in
 * flight. Deposits and failures are recorded by the core on every attempt, first ones included.
 */
final class BudgetGate extends Gate {
  private final RetryBudget budget;
  /** The policy's clock, which every {@code now} handed to this gate was read from. */
  private final TimeSource clock;

  BudgetGate(RetryBudget budget, TimeSource clock) {
    this.budget = budget;
    this.clock = clock;
  }

  @Override
  StopReason refusal() {
    return StopReason.BUDGET_EXHAUSTED;
  }

  @Override
  boolean tryAdmit(AttemptRecord attempt, int index, long now) {
    if (attempt.coarseNow) {
      now = clock.nanoTime(); // the budget refills from an exact reading
    }
    if (budget.trySpendAt(attempt.criticality, now, clock)) {
      return true;
    }
    attempt.retryAfterNanos = budget.retryAfterNanosAt(attempt.criticality, now, clock);
    return false;
  }

  /** Whether the budget would fund {@code attempt} at {@code now}, charging nothing; if not, sets its Retry-After. */
  boolean wouldFund(AttemptRecord attempt, long now) {
    if (attempt.coarseNow) {
      now = clock.nanoTime();
    }
    if (budget.wouldFundAt(attempt.criticality, now, clock)) {
      return true;
    }
    attempt.retryAfterNanos = budget.retryAfterNanosAt(attempt.criticality, now, clock);
    return false;
  }

  @Override
  boolean needsEndTime() {
    return false;
  }

  @Override
  void release(AttemptRecord attempt, int index, int how, long now) {
    budget.additionalEnded();
  }
}
