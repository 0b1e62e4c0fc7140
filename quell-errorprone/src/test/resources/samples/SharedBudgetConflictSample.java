import dev.quell.RetryBudget;

/** Deliberately wrong: one shared budget asked for with two sets of parameters. */
class SharedBudgetConflictSample {
  static final RetryBudget READS = RetryBudget.shared("payments", 0.1, 3);
  static final RetryBudget WRITES = RetryBudget.shared("payments", 0.2, 1); // expect: QuellSharedBudgetConflict
}
