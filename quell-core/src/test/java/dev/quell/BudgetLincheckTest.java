package dev.quell;

import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions;
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * Linearizability of the lock-free budgets, checked by Lincheck against their own sequential
 * behaviour: every concurrent history of spends, deposits and reads must match some sequential
 * order. The clock is frozen, so only the operations move the balance.
 */
class BudgetLincheckTest {

  /** The token bucket: 0.5 tokens per deposit, capacity 2 tokens, starting full. */
  public static class TokenBucketOps {
    private final RetryBudget budget = RetryBudget.of(0.5, 0.2, new ManualClock());

    @Operation
    public boolean trySpend() {
      return budget.trySpend();
    }

    @Operation
    public boolean trySpendSheddable() {
      return budget.trySpend(Criticality.SHEDDABLE);
    }

    @Operation
    public void deposit() {
      budget.deposit();
    }

    @Operation
    public double tokens() {
      return budget.tokens();
    }
  }

  /** The feedback throttle: 3 tokens, 0.5 per success. */
  public static class FeedbackOps {
    private final RetryBudget budget = RetryBudget.feedback(3, 0.5);

    @Operation
    public boolean trySpend() {
      return budget.trySpend();
    }

    @Operation
    public void deposit() {
      budget.deposit();
    }

    @Operation
    public void recordFailure() {
      budget.recordFailure();
    }

    @Operation
    public double tokens() {
      return budget.tokens();
    }
  }

  @Test
  void tokenBucketIsLinearizableUnderStress() {
    LinChecker.check(TokenBucketOps.class, new StressOptions().iterations(10).invocationsPerIteration(1_000));
  }

  @Test
  void tokenBucketIsLinearizableUnderModelChecking() {
    LinChecker.check(TokenBucketOps.class, new ModelCheckingOptions().iterations(10).invocationsPerIteration(200));
  }

  @Test
  void feedbackThrottleIsLinearizable() {
    LinChecker.check(FeedbackOps.class, new ModelCheckingOptions().iterations(10).invocationsPerIteration(200));
  }
}
