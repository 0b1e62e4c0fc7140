import dev.quell.Backoff;
import dev.quell.Resilience;
import java.time.Duration;

/** Deliberately wrong: a first retry that waits past the deadline. */
class BackoffBeyondDeadlineSample {
  static final Resilience NEVER_RETRIES = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(1)).withAttemptTimeout(Duration.ofMillis(300)).withBackoff(Backoff.constant(Duration.ofSeconds(2))); // expect: QuellBackoffBeyondDeadline
}
