import dev.quell.Resilience;
import java.time.Duration;

/** Deliberately wrong: an attempt timeout that can never fire. */
class AttemptTimeoutBeyondDeadlineSample {
  static final Resilience SWAPPED = Resilience.DEFAULT.withDeadline(Duration.ofMillis(500)).withAttemptTimeout(Duration.ofSeconds(2)); // expect: QuellAttemptTimeoutBeyondDeadline
}
