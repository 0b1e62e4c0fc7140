package dev.quell;

/**
 * The retry budget as the last gate: it funds retries and hedges (never first attempts, which the
 * core does not ask it about), and hears when a funded attempt ends, for kinds that count what is in
 * flight. Deposits and failures are recorded by the core on every attempt, first ones included.
 */
final class BudgetGate extends Gate {
  private final RetryBudget budget;

  BudgetGate(RetryBudget budget) {
    this.budget = budget;
  }

  @Override
  StopReason refusal() {
    return StopReason.BUDGET_EXHAUSTED;
  }

  @Override
  boolean tryAdmit(AttemptRecord attempt, int index, long now) {
    if (budget.trySpend(attempt.criticality)) {
      return true;
    }
    attempt.retryAfterNanos = budget.retryAfterNanos(attempt.criticality);
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
