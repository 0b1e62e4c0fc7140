package dev.quell.errorprone;

import static com.google.errorprone.BugCheckerRefactoringTestHelper.TestMode.TEXT_MATCH;

import com.google.errorprone.BugCheckerRefactoringTestHelper;
import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellDiscardedConfigurationTest {
  private final CompilationTestHelper helper =
      CompilationTestHelper.newInstance(QuellDiscardedConfiguration.class, getClass());
  private final BugCheckerRefactoringTestHelper refactoring =
      BugCheckerRefactoringTestHelper.newInstance(QuellDiscardedConfiguration.class, getClass());

  @Test
  void aCopyDroppedAsAStatementIsReported() {
    helper.addSourceLines("Dropped.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Hedge;
        import dev.quell.Resilience;
        import java.time.Duration;
        import java.util.List;
        class Dropped {
          static final Resilience POLICY = Resilience.DEFAULT.withName("dropped");
          static {
            // BUG: Diagnostic contains: Resilience is immutable: withAttempts(...) returns a changed copy and leaves POLICY
            POLICY.withAttempts(5);
          }
          void configure(CircuitBreaker.Config config, Hedge hedge, List<Resilience> all) {
            // BUG: Diagnostic contains: QuellDiscardedConfiguration
            config.withMinimumCalls(10).withFailureRate(0.2);
            // BUG: Diagnostic contains: Hedge is immutable
            hedge.withMaxHedges(2);
            // BUG: Diagnostic contains: QuellDiscardedConfiguration
            POLICY.withoutDeadline();
            // BUG: Diagnostic contains: QuellDiscardedConfiguration
            all.forEach(p -> p.withDeadline(Duration.ofSeconds(1)));
          }
        }
        """).doTest();
  }

  @Test
  void aCopyThatIsKeptIsNotReported() {
    helper.addSourceLines("Kept.java", """
        import static org.junit.jupiter.api.Assertions.assertThrows;

        import dev.quell.Resilience;
        import dev.quell.ResilienceConfigurationException;
        import java.util.List;
        import java.util.function.Function;
        class Kept {
          static final Resilience POLICY = Resilience.DEFAULT.withName("kept").withAttempts(5);
          Resilience policy = POLICY;
          Resilience returned() {
            return POLICY.withAttempts(2);
          }
          void assigned() {
            policy = policy.withAttempts(2);
          }
          List<Resilience> mapped(List<Resilience> all) {
            Function<Resilience, Resilience> once = p -> p.withAttempts(1);
            return all.stream().map(p -> p.withAttempts(2)).map(once).toList();
          }
          String executed() throws Exception {
            POLICY.execute(() -> "a result that may be ignored");
            POLICY.once();
            return "x";
          }
          void expected() {
            assertThrows(ResilienceConfigurationException.class, () -> POLICY.withAttempts(0));
            try {
              POLICY.withAttempts(-1);
            } catch (ResilienceConfigurationException expected) {
              // the point of the call is that it throws
            }
          }
        }
        """).doTest();
  }

  @Test
  void fixFoldsTheChangeIntoTheLocalItFollowsOrAssignsItBack() {
    refactoring.addInputLines("Fixed.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Fixed {
          static final Resilience POLICY = Resilience.DEFAULT.withName("fixed");
          String folded(boolean fast) throws Exception {
            final Resilience policy = fast ? POLICY : Resilience.HTTP;
            policy.withAttempts(2).withDeadline(Duration.ofSeconds(1));
            return policy.execute(() -> "x");
          }
          String assigned(boolean fast) throws Exception {
            Resilience policy = POLICY;
            if (fast) {
              policy.withAttempts(2);
            }
            return policy.once().execute(() -> "x");
          }
          String captured(boolean fast) throws Exception {
            Resilience policy = POLICY;
            if (fast) {
              policy.withAttempts(2);
            }
            Runnable later = () -> policy.toString();
            later.run();
            return "no fix: the lambda needs the local effectively final";
          }
          static {
            POLICY.withAttempts(5);
          }
        }
        """).addOutputLines("Fixed.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Fixed {
          static final Resilience POLICY = Resilience.DEFAULT.withName("fixed");
          String folded(boolean fast) throws Exception {
            final Resilience policy = (fast ? POLICY : Resilience.HTTP).withAttempts(2).withDeadline(Duration.ofSeconds(1));
            return policy.execute(() -> "x");
          }
          String assigned(boolean fast) throws Exception {
            Resilience policy = POLICY;
            if (fast) {
              policy = policy.withAttempts(2);
            }
            return policy.once().execute(() -> "x");
          }
          String captured(boolean fast) throws Exception {
            Resilience policy = POLICY;
            if (fast) {
              policy.withAttempts(2);
            }
            Runnable later = () -> policy.toString();
            later.run();
            return "no fix: the lambda needs the local effectively final";
          }
          static {
            POLICY.withAttempts(5);
          }
        }
        """).allowBreakingChanges().doTest(TEXT_MATCH);
  }
}
