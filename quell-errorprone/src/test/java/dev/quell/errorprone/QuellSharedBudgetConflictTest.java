package dev.quell.errorprone;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellSharedBudgetConflictTest {
  private final CompilationTestHelper helper =
      CompilationTestHelper.newInstance(QuellSharedBudgetConflict.class, getClass());

  @Test
  void theSameNameWithOtherParametersIsReported() {
    helper.addSourceLines("Budgets.java", """
        import dev.quell.RetryBudget;
        class Budgets {
          static final String PAYMENTS = "payments";
          static final RetryBudget READS = RetryBudget.shared("payments", 0.1, 3);
          // BUG: Diagnostic contains: asks for fraction=0.2, minimumPerSecond=5.0 here, but line 4 asks for fraction=0.1, minimumPerSecond=3.0
          static final RetryBudget WRITES = RetryBudget.shared(PAYMENTS, 0.2, 5);
          static final RetryBudget SEARCH = RetryBudget.shared("search");
          RetryBudget perCall() {
            // BUG: Diagnostic contains: RetryBudget.shared("search") asks for fraction=0.5
            return RetryBudget.shared("search", 0.5, 3);
          }
        }
        """).doTest();
  }

  @Test
  void theSameParametersOtherNamesOrUnknownValuesAreNotReported() {
    helper.addSourceLines("Budgets.java", """
        import dev.quell.RetryBudget;
        class Budgets {
          static final RetryBudget A = RetryBudget.shared("payments");
          static final RetryBudget B = RetryBudget.shared("payments", 0.1, 3.0);
          static final RetryBudget C = RetryBudget.shared("payments", RetryBudget.DEFAULT_FRACTION,
              RetryBudget.DEFAULT_MINIMUM_PER_SECOND);
          static final RetryBudget D = RetryBudget.shared("search", 0.2, 5);
          static RetryBudget configured(String name, double fraction) {
            return RetryBudget.shared("payments", fraction, 3);
          }
          static RetryBudget named(String name) {
            return RetryBudget.shared(name, 0.5, 1);
          }
        }
        """).doTest();
  }
}
