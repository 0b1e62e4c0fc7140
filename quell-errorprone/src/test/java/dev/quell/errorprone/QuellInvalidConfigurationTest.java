package dev.quell.errorprone;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellInvalidConfigurationTest {
  private final CompilationTestHelper helper =
      CompilationTestHelper.newInstance(QuellInvalidConfiguration.class, getClass());

  @Test
  void policySettingsThatValidationRefusesAreReported() {
    helper.addSourceLines("Policies.java", """
        import dev.quell.Backoff;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        class Policies {
          static final int NO_ATTEMPTS = 0;
          static final Duration TIMEOUT = Duration.ofMillis(-5);
          // BUG: Diagnostic contains: attempts was 0: must be at least 1 (attempts counts the first attempt too)
          static final Resilience A = Resilience.DEFAULT.withAttempts(0);
          // BUG: Diagnostic contains: attempts was 0
          static final Resilience B = Resilience.DEFAULT.withName("b").withAttempts(NO_ATTEMPTS);
          // BUG: Diagnostic contains: deadline was 0 ms: must be a positive duration
          static final Resilience C = Resilience.HTTP.withDeadline(Duration.ZERO);
          // BUG: Diagnostic contains: attemptTimeout was PT-0.005S: must be a positive duration
          static final Resilience D = Resilience.HTTP.withAttemptTimeout(TIMEOUT);
          // BUG: Diagnostic contains: name was "  ": must not be blank
          static final Resilience E = Resilience.DEFAULT.withName("  ");
          // BUG: Diagnostic contains: useAmbientCriticality was true: has no effect with attempts = 1
          static final Resilience F = Resilience.DEFAULT.withAmbientCriticality(true).withAttempts(1);
          // BUG: Diagnostic contains: has no effect without a budget (budget is RetryBudget.NONE)
          static final Resilience G = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withAmbientCriticality(true);
          // BUG: Diagnostic contains: attempts was 0
          static final Resilience H = Resilience.DEFAULT.with(s -> s.name("h").attempts(0).deadline(Duration.ofSeconds(1)));
          // BUG: Diagnostic contains: deadline was 0 ms
          static final Resilience I = Resilience.DEFAULT.with(s -> {
            s.attempts(2);
            s.deadline(Duration.ofSeconds(5).minusSeconds(5));
          });
          // BUG: Diagnostic contains: backoff was null: must not be null (use Backoff.NONE for no delay)
          static final Resilience J = Resilience.DEFAULT.withBackoff(null);
          // BUG: Diagnostic contains: has no effect without a budget
          static final Resilience K = Resilience.NONE.withAmbientCriticality(true);
        }
        """).doTest();
  }

  @Test
  void budgetsBackoffsAndScopesThatCanNeverBeBuiltAreReported() {
    helper.addSourceLines("Parts.java", """
        import dev.quell.Backoff;
        import dev.quell.PolicyScope;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        import java.time.temporal.ChronoUnit;
        class Parts {
          // BUG: Diagnostic contains: budget fraction was 0.0: must be in (0, 1]
          static final RetryBudget A = RetryBudget.of(0, 3);
          // BUG: Diagnostic contains: budget fraction was 1.5
          static final RetryBudget B = RetryBudget.of(1.5, 3);
          // BUG: Diagnostic contains: budget fraction was NaN
          static final RetryBudget C = RetryBudget.shared("payments", Double.NaN, 3);
          // BUG: Diagnostic contains: budget minimumPerSecond was -1.0
          static final RetryBudget D = RetryBudget.of(0.1, -1);
          // BUG: Diagnostic contains: shared budget name must not be blank
          static final RetryBudget E = RetryBudget.shared("");
          // BUG: Diagnostic contains: feedback maxTokens was 0: must be in [1, 1000000]
          static final RetryBudget F = RetryBudget.feedback(0, 0.1);
          // BUG: Diagnostic contains: feedback tokenRatio was 1.0E-4
          static final RetryBudget G = RetryBudget.feedback(100, 0.0001);
          // BUG: Diagnostic contains: replenishing maxTokens was 0
          static final RetryBudget H = RetryBudget.replenishing(0, Duration.ofMinutes(1));
          // BUG: Diagnostic contains: replenishing period was 0 ms: must be a positive duration
          static final RetryBudget I = RetryBudget.replenishing(10, Duration.of(0, ChronoUnit.SECONDS));
          // BUG: Diagnostic contains: backoff delay was PT-1S: must be zero or positive
          static final Backoff J = Backoff.constant(Duration.ofSeconds(-1));
          // BUG: Diagnostic contains: backoff max was 30000 ms: must not be less than transientBase (60000 ms)
          static final Backoff K = Backoff.exponential(Duration.ofMinutes(1));
          // BUG: Diagnostic contains: backoff factor was 0.5: must be a finite number of at least 1
          static final Backoff L = Backoff.exponential().withFactor(0.5);
          // BUG: Diagnostic contains: backoff max was 50 ms: must not be less than transientBase (100 ms)
          static final Backoff M = Backoff.exponential().withMax(Duration.ofMillis(50));
          // BUG: Diagnostic contains: backoff throttledBase was PT-0.001S
          static final Backoff N = Backoff.exponential(Duration.ofMillis(1), Duration.ofMillis(-1), 2, Duration.ofSeconds(1));
          // BUG: Diagnostic contains: scope maxKeys was 0: must be at least 1
          static final PolicyScope<String> O = PolicyScope.of(Resilience.DEFAULT, 0);
        }
        """).doTest();
  }

  @Test
  void validOrUnknownConfigurationIsNotReported() {
    helper.addSourceLines("Fine.java", """
        import dev.quell.Backoff;
        import dev.quell.PolicyScope;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        class Fine {
          static final Resilience A = Resilience.DEFAULT.withAttempts(1).withDeadline(Duration.ofMillis(1));
          static final Resilience B = Resilience.DEFAULT.withoutDeadline().withoutAttemptTimeout();
          static final Resilience C = Resilience.DEFAULT.with(s -> s.deadline(null).attemptTimeout(null));
          static final Resilience D = Resilience.DEFAULT.withAmbientCriticality(true).withAttempts(2);
          static final RetryBudget E = RetryBudget.of(1, 0);
          static final RetryBudget F = RetryBudget.feedback(1_000_000, 0.001);
          static final Backoff G = Backoff.exponential(Duration.ofSeconds(30)).withMax(Duration.ofMinutes(1));
          static final Backoff H = Backoff.constant(Duration.ZERO);
          static final PolicyScope<String> I = PolicyScope.of(Resilience.DEFAULT, 1);
          static Resilience fromConfiguration(int attempts, Duration deadline, double fraction) {
            return Resilience.DEFAULT.withAttempts(attempts).withDeadline(deadline)
                .withBudget(RetryBudget.of(fraction, 3));
          }
          static Resilience unknownBase(Resilience base) {
            return base.withAttempts(5).withAmbientCriticality(true); // base's budget is unknown
          }
        }
        """).doTest();
  }

  @Test
  void onlyTheFirstFailingStepOfAChainIsReported() {
    helper.addSourceLines("Chain.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Chain {
          static final Resilience BAD =
              // BUG: Diagnostic contains: attempts was -1
              Resilience.DEFAULT.withAttempts(-1)
                  .withDeadline(Duration.ofSeconds(-1))
                  .withName("never reached");
          static final Resilience FROM_BAD = BAD.withDeadline(Duration.ofSeconds(-2));
        }
        """).doTest();
  }

  @Test
  void codeWrittenToFailIsNotReported() {
    helper.addSourceLines("ValidationTest.java", """
        import static org.junit.jupiter.api.Assertions.assertThrows;
        import dev.quell.Resilience;
        import dev.quell.ResilienceConfigurationException;
        import dev.quell.RetryBudget;
        class ValidationTest {
          void refused() {
            assertThrows(ResilienceConfigurationException.class, () -> Resilience.DEFAULT.withAttempts(0));
            try {
              RetryBudget.of(0, 3);
            } catch (ResilienceConfigurationException expected) {
              // the point of the test
            }
            try {
              RetryBudget.of(2, 3);
            } catch (RuntimeException expected) {
              // a supertype catches it too
            }
          }
        }
        """).doTest();
  }
}
