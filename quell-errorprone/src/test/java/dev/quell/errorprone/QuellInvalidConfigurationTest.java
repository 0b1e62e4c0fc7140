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
          // BUG: Diagnostic contains: deadline was null: must be a positive duration; for no deadline use withoutDeadline()
          static final Resilience L = Resilience.DEFAULT.with(s -> s.deadline(null));
          // BUG: Diagnostic contains: attemptTimeout was null: must be a positive duration; for none use withoutAttemptTimeout()
          static final Resilience M = Resilience.DEFAULT.withAttemptTimeout(null);
          // BUG: Diagnostic contains: hedge was Hedge[after 10 ms, up to 1 hedge]: needs attempts of 2 or more: every hedge is an attempt
          static final Resilience N = Resilience.NONE.withHedge(dev.quell.Hedge.after(Duration.ofMillis(10)));
          // BUG: Diagnostic contains: hedge was Hedge[at p95.0 (max extra load 0.05, floor 1 ms), up to 1 hedge]: needs attempts of 2 or more
          static final Resilience O = Resilience.DEFAULT.withHedge(dev.quell.Hedge.maxExtraLoad(0.05)).withAttempts(1);
          // BUG: Diagnostic contains: hedge was Hedge[after 0 ms, up to 1 hedge]
          static final Resilience P = Resilience.DEFAULT.with(s -> s.attempts(1).hedge(dev.quell.Hedge.after(Duration.ZERO)));
          static final dev.quell.Hedge HEDGE = dev.quell.Hedge.after(Duration.ofMillis(20)).withExecutor(Runnable::run);
          // a hedge this check cannot build is named by its source
          // BUG: Diagnostic contains: hedge was HEDGE: needs attempts of 2 or more
          static final Resilience Q = Resilience.NONE.withHedge(HEDGE);
        }
        """).doTest();
  }

  @Test
  void breakerConfigurationsThatCanNeverBeBuiltAreReported() {
    helper.addSourceLines("Breakers.java", """
        import dev.quell.CircuitBreaker;
        import java.time.Duration;
        class Breakers {
          static final CircuitBreaker.Config BASE = CircuitBreaker.Config.DEFAULT;
          // BUG: Diagnostic contains: breaker failureRate was 50.0: must be in (0, 1]
          static final CircuitBreaker.Config A = CircuitBreaker.Config.DEFAULT.withFailureRate(50);
          // BUG: Diagnostic contains: breaker failureRate was NaN
          static final CircuitBreaker.Config B = BASE.withFailureRate(Double.NaN);
          // BUG: Diagnostic contains: breaker minimumCalls was 0: must be at least 1
          static final CircuitBreaker.Config C = BASE.withMinimumCalls(0);
          // BUG: Diagnostic contains: breaker window was PT0.0005S: must be at least 1 ms
          static final CircuitBreaker.Config D = BASE.withWindow(Duration.ofNanos(500_000));
          // BUG: Diagnostic contains: breaker window was null: must be at least 1 ms
          static final CircuitBreaker.Config E = BASE.withWindow(null);
          // BUG: Diagnostic contains: breaker consecutiveFailures was -1: must be at least 0 (0 turns this trip off)
          static final CircuitBreaker.Config F = BASE.withConsecutiveFailures(-1);
          // BUG: Diagnostic contains: breaker slowCallDuration was 0 ms: must be a positive duration (use noSlowCalls()
          static final CircuitBreaker.Config G = BASE.withSlowCalls(Duration.ZERO, 0.5);
          // BUG: Diagnostic contains: breaker slowCallRate was 0.0: must be in (0, 1]
          static final CircuitBreaker.Config H = BASE.withSlowCalls(Duration.ofSeconds(1), 0);
          // BUG: Diagnostic contains: breaker probes was 1001: must be between 1 and 1000
          static final CircuitBreaker.Config I = BASE.withProbes(1001);
          // BUG: Diagnostic contains: breaker probeSuccesses was 0: must be at least 1
          static final CircuitBreaker.Config J = BASE.withProbeSuccesses(0);
          // BUG: Diagnostic contains: breaker breakDuration was PT-1S: must be a positive duration
          static final CircuitBreaker.Config K = BASE.withBreakDuration(Duration.ofSeconds(-1));
          // how settings fit together is checked where a breaker is built, so they can come in any order
          static final CircuitBreaker.Config L = BASE.withMaxBreakDuration(Duration.ofSeconds(1));
          static final CircuitBreaker.Config M = BASE.withMaxBreakDuration(Duration.ofMinutes(1)).withBreakDuration(Duration.ofMinutes(10));
          static final CircuitBreaker.Config LONGER = BASE.withBreakDuration(Duration.ofMinutes(10))
              .withMaxBreakDuration(Duration.ofMinutes(30));
          static final CircuitBreaker FINE = CircuitBreaker.of("fine", LONGER);
          // BUG: Diagnostic contains: breaker maxBreakDuration was 1000 ms: must be at least breakDuration (5000 ms)
          static final CircuitBreaker BL = CircuitBreaker.of("l", L);
          // BUG: Diagnostic contains: breaker maxBreakDuration was 60000 ms: must be at least breakDuration (600000 ms)
          static final dev.quell.Resilience BM = dev.quell.Resilience.DEFAULT.withBreaker(M);
          // BUG: Diagnostic contains: breaker ramp was PT-0.001S: must be zero (no ramp) or positive
          static final CircuitBreaker.Config N = BASE.withRamp(Duration.ofMillis(-1));
          // BUG: Diagnostic contains: breaker probes was 0
          static final CircuitBreaker.Config O = BASE.with(s -> s.minimumCalls(5).probes(0));
          static final CircuitBreaker.Config P = BASE.with(s -> {
            s.breakDuration(Duration.ofSeconds(2));
            s.maxBreakDuration(Duration.ofSeconds(1));
          });
          // BUG: Diagnostic contains: breaker maxBreakDuration was 1000 ms: must be at least breakDuration (2000 ms)
          static final CircuitBreaker BP = CircuitBreaker.of("p", P, dev.quell.TimeSource.system());
        }
        """).doTest();
  }

  @Test
  void limitersThatCanNeverBeBuiltAreReported() {
    helper.addSourceLines("Limiters.java", """
        import dev.quell.Limiter;
        import dev.quell.TimeSource;
        import java.time.Duration;
        class Limiters {
          // BUG: Diagnostic contains: rate limiter perSecond was 0.0: must be a finite number greater than 0 and at most 1e9
          static final Limiter A = Limiter.rate(0, 10);
          // BUG: Diagnostic contains: rate limiter perSecond was 2.0E9
          static final Limiter B = Limiter.rate(2e9, 10);
          // BUG: Diagnostic contains: rate limiter burst was 0: must be at least 1
          static final Limiter C = Limiter.rate(100, 0);
          // BUG: Diagnostic contains: rate limiter burst / perSecond was 10 / 1.0E-9: refilling a full bucket must take at most 100 years
          static final Limiter D = Limiter.rate(1e-9, 10);
          // BUG: Diagnostic contains: rate limiter maxWait was PT-1S: must be zero or positive
          static final Limiter E = Limiter.rate(100, 10, Duration.ofSeconds(-1));
          // BUG: Diagnostic contains: rate limiter timeSource was null: must not be null; use TimeSource.system()
          static final Limiter F = Limiter.rate(100, 10, (TimeSource) null);
          // BUG: Diagnostic contains: rate limiter maxWait was null
          static final Limiter G = Limiter.rate(100, 10, null, TimeSource.system());
          // BUG: Diagnostic contains: concurrency limit n was 0: must be at least 1 and less than 2147483647
          static final Limiter H = Limiter.concurrency(0);
          // BUG: Diagnostic contains: concurrency limit n was 2147483647
          static final Limiter I = Limiter.concurrency(Integer.MAX_VALUE);
          // BUG: Diagnostic contains: concurrency limit maxWait was PT-0.001S: must be zero or positive
          static final Limiter J = Limiter.concurrency(8, Duration.ofMillis(-1));
          // BUG: Diagnostic contains: adaptive limiter config was null: must not be null; use AdaptiveConfig.DEFAULT
          static final Limiter K = Limiter.adaptive(null);
          static final Limiter.AdaptiveConfig SMALL = Limiter.AdaptiveConfig.DEFAULT.withMaxLimit(3);
          // BUG: Diagnostic contains: adaptive minLimit was 5: must not be above maxLimit (3)
          static final Limiter L = Limiter.adaptive(SMALL);
          // BUG: Diagnostic contains: adaptive initialLimit was 300: must be in [minLimit, maxLimit] = [20, 200]
          static final Limiter M = Limiter.adaptive(Limiter.AdaptiveConfig.gradient().withInitialLimit(300));
          // BUG: Diagnostic contains: adaptive initialLimit was 3000: must be in [minLimit, maxLimit] = [5, 1000]
          static final Limiter M2 = Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT.withInitialLimit(3000));
          // BUG: Diagnostic contains: adaptive initialLimit was 0: must be in [1, 1000000]
          static final Limiter.AdaptiveConfig N = Limiter.AdaptiveConfig.DEFAULT.withInitialLimit(0);
          // BUG: Diagnostic contains: adaptive maxLimit was 1000001: must be in [1, 1000000]
          static final Limiter.AdaptiveConfig O = Limiter.AdaptiveConfig.DEFAULT.withMaxLimit(1_000_001);
          // BUG: Diagnostic contains: adaptive backoffRatio was 1.0: must be at least 0.5 and less than 1
          static final Limiter.AdaptiveConfig P = Limiter.AdaptiveConfig.DEFAULT.withBackoffRatio(1);
          // BUG: Diagnostic contains: adaptive tolerance was 0.5: must be in [1, 100]
          static final Limiter.AdaptiveConfig Q = Limiter.AdaptiveConfig.gradient().withTolerance(0.5);
          // BUG: Diagnostic contains: adaptive smoothing was 0.0: must be in (0, 1]
          static final Limiter.AdaptiveConfig R = Limiter.AdaptiveConfig.gradient().withSmoothing(0);
          // BUG: Diagnostic contains: adaptive longWindow was 9: must be in [10, 1000000]
          static final Limiter.AdaptiveConfig S = Limiter.AdaptiveConfig.gradient().withLongWindow(9);
          // BUG: Diagnostic contains: adaptive mode was null: must be KNEE, LOSS or GRADIENT
          static final Limiter.AdaptiveConfig T = Limiter.AdaptiveConfig.DEFAULT.withMode(null);
        }
        """).doTest();
  }

  @Test
  void hedgesMeasuredTimingAndConcurrentBudgetsThatCanNeverBeBuiltAreReported() {
    helper.addSourceLines("Values.java", """
        import dev.quell.Hedge;
        import dev.quell.MeasuredTiming;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        class Values {
          // BUG: Diagnostic contains: hedge delay was PT-0.01S: must be zero or positive
          static final Hedge A = Hedge.after(Duration.ofMillis(-10));
          // BUG: Diagnostic contains: hedge delay was null: must be zero or positive
          static final Hedge B = Hedge.after(null);
          // BUG: Diagnostic contains: hedge maxExtraLoad was 1.0: must be in (0, 1): the share of extra attempts you accept
          static final Hedge C = Hedge.maxExtraLoad(1);
          // BUG: Diagnostic contains: hedge maxHedges was 11: must be between 1 and 10
          static final Hedge D = Hedge.after(Duration.ofMillis(40)).withMaxHedges(11);
          // BUG: Diagnostic contains: hedge floor was PT-1S: must be zero or positive
          static final Hedge E = Hedge.maxExtraLoad(0.05).withFloor(Duration.ofSeconds(-1));
          // BUG: Diagnostic contains: measured timing multiple was 0.5: must be between 1 and 1000 (a ceiling below the p95
          static final MeasuredTiming F = MeasuredTiming.multipleOfP95(0.5);
          // BUG: Diagnostic contains: measured timing floor was 0 ms: must be a positive duration
          static final MeasuredTiming G = MeasuredTiming.multipleOfP95(3).withFloor(Duration.ZERO);
          // BUG: Diagnostic contains: measured timing window was 500 ms: must be between 1 s and 1 h
          static final MeasuredTiming H = MeasuredTiming.multipleOfP95(3).withWindow(Duration.ofMillis(500));
          // BUG: Diagnostic contains: measured timing window was 7200000 ms
          static final MeasuredTiming I = MeasuredTiming.multipleOfP95(3).withWindow(Duration.ofHours(2));
          // BUG: Diagnostic contains: measured timing minSamples was 0: must be at least 1
          static final MeasuredTiming J = MeasuredTiming.multipleOfP95(3).withMinSamples(0);
          // BUG: Diagnostic contains: concurrent budget percent was 20.0: must be in (0, 1] (0.2 means 20%)
          static final RetryBudget K = RetryBudget.concurrent(20, 3);
          // BUG: Diagnostic contains: concurrent budget minimum was -1: must be in [0, 1000000]
          static final RetryBudget L = RetryBudget.concurrent(0.2, -1);
        }
        """).doTest();
  }

  @Test
  void aGrpcDeadlineSlackThatCanNeverBeSetIsReported() {
    RealIntegrations.with(CompilationTestHelper.newInstance(QuellInvalidConfiguration.class, getClass()))
        .addSourceLines("Slack.java", """
            import dev.quell.Resilience;
            import dev.quell.grpc.ResilienceInterceptor;
            import java.time.Duration;
            class Slack {
              static final ResilienceInterceptor BASE = ResilienceInterceptor.of(Resilience.DEFAULT);
              // BUG: Diagnostic contains: deadlineSlack was PT-0.001S: must be zero or positive
              static final ResilienceInterceptor A = BASE.withDeadlineSlack(Duration.ofMillis(-1));
              // BUG: Diagnostic contains: deadlineSlack was 120000 ms: must be at most 1 minute
              static final ResilienceInterceptor B = BASE.withDeadlineSlack(Duration.ofMinutes(2));
              // BUG: Diagnostic contains: deadlineSlack was null: must be zero or positive
              static final ResilienceInterceptor C = BASE.withDeadlineSlack(null);
              static final ResilienceInterceptor D = BASE.withDeadlineSlack(Duration.ofMinutes(1));
            }
            """).doTest();
  }

  @Test
  void aBackoffBaseTooLongForMillisecondsIsReportedWithoutCrashingTheCompiler() {
    helper.addSourceLines("HugeBase.java", """
        import dev.quell.Backoff;
        import java.time.Duration;
        class HugeBase {
          // BUG: Diagnostic contains: must not be less than transientBase (forever)
          static final Backoff B = Backoff.exponential(Duration.ofSeconds(Long.MAX_VALUE));
        }
        """).doTest();
  }

  @Test
  void validValuesAndValuesNotKnownAreNotReported() {
    helper.addSourceLines("FineValues.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Hedge;
        import dev.quell.Limiter;
        import dev.quell.MeasuredTiming;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        import java.time.temporal.ChronoUnit;
        class FineValues {
          static final CircuitBreaker.Config A = CircuitBreaker.Config.DEFAULT.withFailureRate(1).withMinimumCalls(1)
              .withWindow(Duration.ofMillis(1)).withProbes(1000).withRamp(Duration.ZERO)
              .withMaxBreakDuration(Duration.ofSeconds(5)).withSlowCalls(Duration.ofSeconds(1), 1).withoutSlowCalls();
          static final CircuitBreaker.Config B = CircuitBreaker.Config.DEFAULT.with(s -> s
              .breakDuration(Duration.ofMinutes(10)).maxBreakDuration(Duration.ofMinutes(20)));
          static final CircuitBreaker.Config C = CircuitBreaker.Config.DEFAULT.withWindow(ChronoUnit.FOREVER.getDuration());
          static final Limiter D = Limiter.rate(1e9, 1);
          static final Limiter E = Limiter.rate(0.001, 1_000_000, Duration.ZERO);
          static final Limiter F = Limiter.concurrency(Integer.MAX_VALUE - 1, Duration.ofMillis(50));
          static final Limiter G = Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT.withMinLimit(5).withInitialLimit(10)
              .withMaxLimit(100).withBackoffRatio(0.5));
          static final Limiter H = Limiter.adaptive(Limiter.AdaptiveConfig.gradient().withTolerance(100).withSmoothing(1)
              .withLongWindow(10));
          static final Hedge I = Hedge.after(Duration.ZERO).withMaxHedges(10).withFloor(Duration.ZERO);
          static final MeasuredTiming J = MeasuredTiming.multipleOfP95(1000).withWindow(Duration.ofHours(1))
              .withFloor(Duration.ofNanos(1)).withMinSamples(1);
          static final RetryBudget K = RetryBudget.concurrent(1, 0);
          static final Resilience L = Resilience.DEFAULT.withHedge(Hedge.maxExtraLoad(0.05)).withAttempts(2);
          static Limiter fromConfiguration(double perSecond, int burst, Limiter.AdaptiveConfig config) {
            return perSecond > 0 ? Limiter.rate(perSecond, burst) : Limiter.adaptive(config.withMaxLimit(10));
          }
          static CircuitBreaker.Config unknownBase(CircuitBreaker.Config base) {
            return base.withMaxBreakDuration(Duration.ofSeconds(1)); // base's break is not known
          }
        }
        """).doTest();
  }

  @Test
  void onlyTheFirstFailingStepOfAValueChainIsReported() {
    helper.addSourceLines("Chains.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Hedge;
        import dev.quell.Limiter;
        import java.time.Duration;
        class Chains {
          static final CircuitBreaker.Config BAD =
              // BUG: Diagnostic contains: breaker probes was 0
              CircuitBreaker.Config.DEFAULT.withProbes(0)
                  .withMinimumCalls(0);
          static final CircuitBreaker.Config FROM_BAD = BAD.withWindow(null);
          static final Hedge HEDGE =
              // BUG: Diagnostic contains: hedge delay was PT-1S
              Hedge.after(Duration.ofSeconds(-1))
                  .withMaxHedges(0);
          static final Limiter.AdaptiveConfig CONFIG =
              // BUG: Diagnostic contains: adaptive minLimit was 0
              Limiter.AdaptiveConfig.DEFAULT.withMinLimit(0)
                  .withBackoffRatio(2);
          static final Limiter NEVER_BUILT = Limiter.adaptive(CONFIG.withMaxLimit(1));
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
          static final Resilience C = Resilience.DEFAULT.with(s -> s.noDeadline().noAttemptTimeout());
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
