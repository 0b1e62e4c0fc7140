package dev.quell.errorprone;

import static com.google.errorprone.BugCheckerRefactoringTestHelper.TestMode.TEXT_MATCH;

import com.google.errorprone.BugCheckerRefactoringTestHelper;
import org.junit.jupiter.api.Test;

/**
 * The hoisting fix on classes with several findings, applied together as Error Prone's patch mode
 * applies them: every new field gets a name of its own that hides nothing, goes where its
 * initializer can read what it needs and where the code that uses it can see it, and is written on
 * its own line, indented like its neighbours. Each output is then compiled by the helper, and must
 * be free of the finding it fixed.
 */
class QuellGuardPerCallFixTest {
  private final BugCheckerRefactoringTestHelper refactoring =
      BugCheckerRefactoringTestHelper.newInstance(QuellGuardPerCall.class, getClass());

  @Test
  void twoLimitersInOneClassGetTwoNames() {
    refactoring.addInputLines("Limits.java", """
        import dev.quell.Limiter;
        class Limits {
          int a() {
            return Limiter.concurrency(4).available();
          }
          int b() {
            return Limiter.concurrency(8).available();
          }
        }
        """).addOutputLines("Limits.java", """
        import dev.quell.Limiter;
        class Limits {
          private static final Limiter LIMITER = Limiter.concurrency(4);
          private static final Limiter LIMITER_2 = Limiter.concurrency(8);
          int a() {
            return LIMITER.available();
          }
          int b() {
            return LIMITER_2.available();
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void localsOfTheSameNameBesideAFieldOfThatNameGetNamesOfTheirOwn() {
    refactoring.addInputLines("Stock.java", """
        import dev.quell.Resilience;
        class Stock {
          static final Resilience POLICY = Resilience.DEFAULT.withName("stock");

          String reserve(String sku) throws Exception {
            Resilience policy = Resilience.HTTP.withName("reserve");
            return policy.execute(() -> sku);
          }

          String release(String sku) throws Exception {
            Resilience policy = Resilience.HTTP.withName("release");
            return policy.execute(() -> sku) + POLICY.execute(() -> sku);
          }
        }
        """).addOutputLines("Stock.java", """
        import dev.quell.Resilience;
        class Stock {
          static final Resilience POLICY = Resilience.DEFAULT.withName("stock");

          private static final Resilience POLICY_2 = Resilience.HTTP.withName("reserve");
          private static final Resilience POLICY_3 = Resilience.HTTP.withName("release");
          String reserve(String sku) throws Exception {
            return POLICY_2.execute(() -> sku);
          }

          String release(String sku) throws Exception {
            return POLICY_3.execute(() -> sku) + POLICY.execute(() -> sku);
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void theFieldGoesBeforeTheStaticFieldWhoseLambdaUsesItAndAfterTheFieldsItReads() {
    refactoring.addInputLines("Handler.java", """
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.util.function.Function;
        class Handler {
          static final Resilience BASE = Resilience.DEFAULT.withName("backend");
          static final Function<String, String> HANDLE = request -> {
            RetryBudget budget = RetryBudget.of(0.2, 5);
            try {
              return BASE.withBudget(budget).execute(() -> request);
            } catch (Exception e) {
              return "failed";
            }
          };
        }
        """).addOutputLines("Handler.java", """
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.util.function.Function;
        class Handler {
          static final Resilience BASE = Resilience.DEFAULT.withName("backend");
          private static final RetryBudget BUDGET = RetryBudget.of(0.2, 5);
          static final Function<String, String> HANDLE = request -> {
            try {
              return BASE.withBudget(BUDGET).execute(() -> request);
            } catch (Exception e) {
              return "failed";
            }
          };
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void theFieldGoesAfterAFieldItReadsThatIsDeclaredBelowTheMethod() {
    refactoring.addInputLines("Late.java", """
        import dev.quell.Resilience;
        class Late {
          String call() throws Exception {
            return BASE.withName("late").execute(() -> "x");
          }

          static final Resilience BASE = Resilience.DEFAULT.withAttempts(4);
        }
        """).addOutputLines("Late.java", """
        import dev.quell.Resilience;
        class Late {
          String call() throws Exception {
            return LATE.execute(() -> "x");
          }

          static final Resilience BASE = Resilience.DEFAULT.withAttempts(4);
          private static final Resilience LATE = BASE.withName("late");
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void aBlankFinalIsReadOnlyAfterTheStaticBlockThatAssignsIt() {
    refactoring.addInputLines("Blank.java", """
        import dev.quell.Limiter;
        class Blank {
          static final int BURST;
          static {
            BURST = 10;
          }

          int free() {
            return Limiter.rate(100, BURST).available();
          }
        }
        """).addOutputLines("Blank.java", """
        import dev.quell.Limiter;
        class Blank {
          static final int BURST;
          static {
            BURST = 10;
          }

          private static final Limiter LIMITER = Limiter.rate(100, BURST);
          int free() {
            return LIMITER.available();
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void aMembersCommentsStayWithIt() {
    refactoring.addInputLines("Documented.java", """
        import dev.quell.Limiter;
        class Documented {
            /**
             * How many are free.
             */
            // and a line comment
            int free() {
                return Limiter.concurrency(4).available();
            }
        }
        """).addOutputLines("Documented.java", """
        import dev.quell.Limiter;
        class Documented {
            private static final Limiter LIMITER = Limiter.concurrency(4);
            /**
             * How many are free.
             */
            // and a line comment
            int free() {
                return LIMITER.available();
            }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void aGuardBuiltInsideAHoistedGuardMovesWithIt() {
    refactoring.addInputLines("Nested.java", """
        import dev.quell.Limiter;
        import dev.quell.Resilience;
        class Nested {
          String call() throws Exception {
            return Resilience.DEFAULT.withName("nested").withLimiter(Limiter.concurrency(4)).execute(() -> "x");
          }
        }
        """).addOutputLines("Nested.java", """
        import dev.quell.Limiter;
        import dev.quell.Resilience;
        class Nested {
          private static final Resilience NESTED = Resilience.DEFAULT.withName("nested").withLimiter(Limiter.concurrency(4));
          String call() throws Exception {
            return NESTED.execute(() -> "x");
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void aNameUsedAnywhereInTheFileIsNotTakenSoNothingIsHidden() {
    refactoring.addInputLines("Outer.java", """
        import dev.quell.Limiter;
        class Outer {
          static final Limiter LIMITER = Limiter.concurrency(2);
          static class Inner {
            int free() {
              return Limiter.concurrency(4).available() + LIMITER.available();
            }
          }
        }
        """).addOutputLines("Outer.java", """
        import dev.quell.Limiter;
        class Outer {
          static final Limiter LIMITER = Limiter.concurrency(2);
          static class Inner {
            private static final Limiter LIMITER_2 = Limiter.concurrency(4);
            int free() {
              return LIMITER_2.available() + LIMITER.available();
            }
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void eachBranchOfAConditionalGetsAField() {
    refactoring.addInputLines("Choice.java", """
        import dev.quell.Resilience;
        class Choice {
          String call(boolean fast) throws Exception {
            return (fast ? Resilience.DEFAULT.withName("fast").withAttempts(2) : Resilience.HTTP.withName("slow"))
                .execute(() -> "x");
          }
        }
        """).addOutputLines("Choice.java", """
        import dev.quell.Resilience;
        class Choice {
          private static final Resilience FAST = Resilience.DEFAULT.withName("fast").withAttempts(2);
          private static final Resilience SLOW = Resilience.HTTP.withName("slow");
          String call(boolean fast) throws Exception {
            return (fast ? FAST : SLOW)
                .execute(() -> "x");
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void aHelperThatBuildsAPolicyForEachCallerReturnsAFieldInstead() {
    refactoring.addInputLines("Helper.java", """
        import dev.quell.Resilience;
        class Helper {
          private Resilience policy() {
            return Resilience.DEFAULT.withName("helper");
          }

          String a() throws Exception {
            return policy().execute(() -> "a");
          }

          String b() throws Exception {
            return policy().execute(() -> "b");
          }
        }
        """).addOutputLines("Helper.java", """
        import dev.quell.Resilience;
        class Helper {
          private static final Resilience HELPER = Resilience.DEFAULT.withName("helper");
          private Resilience policy() {
            return HELPER;
          }

          String a() throws Exception {
            return policy().execute(() -> "a");
          }

          String b() throws Exception {
            return policy().execute(() -> "b");
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void inAnEnumTheFieldGoesAfterTheConstants() {
    refactoring.addInputLines("Mode.java", """
        import dev.quell.Limiter;
        enum Mode {
          A, B;
          int free() {
            return Limiter.concurrency(4).available();
          }
        }
        """).addOutputLines("Mode.java", """
        import dev.quell.Limiter;
        enum Mode {
          A, B;
          private static final Limiter LIMITER = Limiter.concurrency(4);
          int free() {
            return LIMITER.available();
          }
        }
        """).doTest(TEXT_MATCH);
  }

  @Test
  void inARecordTheFieldIsAStaticMemberLikeAnyOther() {
    refactoring.addInputLines("Order.java", """
        import dev.quell.Limiter;
        record Order(String id) {
          int free() {
            return Limiter.concurrency(4).available();
          }
        }
        """).addOutputLines("Order.java", """
        import dev.quell.Limiter;
        record Order(String id) {
          private static final Limiter LIMITER = Limiter.concurrency(4);
          int free() {
            return LIMITER.available();
          }
        }
        """).doTest(TEXT_MATCH);
  }
}
