package dev.quell;

/**
 * Reads whether a budget would fund a retry, without spending: package-private in the core, and
 * needed here only to empty a budget before a test (as quell-test's tests, in this package, do).
 */
public final class BudgetPeek {
  private BudgetPeek() {
  }

  public static boolean wouldFund(RetryBudget budget, Criticality criticality) {
    return budget.wouldFund(criticality);
  }
}
