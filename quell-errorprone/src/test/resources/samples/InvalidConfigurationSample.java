import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.time.Duration;

/** Deliberately wrong: configuration that throws every time it runs. */
class InvalidConfigurationSample {
  static final Resilience NO_ATTEMPTS = Resilience.DEFAULT.withAttempts(0); // expect: QuellInvalidConfiguration
  static final RetryBudget ALL_OF_IT = RetryBudget.of(1.5, 3); // expect: QuellInvalidConfiguration
  static final Backoff BACKWARDS = Backoff.constant(Duration.ofMillis(-100)); // expect: QuellInvalidConfiguration
  static final CircuitBreaker.Config NEVER_CLOSES = CircuitBreaker.Config.DEFAULT.withProbeSuccesses(0); // expect: QuellInvalidConfiguration
  static final Limiter NOTHING_PASSES = Limiter.concurrency(0); // expect: QuellInvalidConfiguration
}
