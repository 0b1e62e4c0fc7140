package dev.quell.errorprone;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellBackoffBeyondDeadlineTest {
  private final CompilationTestHelper helper =
      CompilationTestHelper.newInstance(QuellBackoffBeyondDeadline.class, getClass());

  @Test
  void aFirstWaitAsLongAsTheDeadlineOrLongerIsReported() {
    helper.addSourceLines("Waits.java", """
        import dev.quell.Backoff;
        import dev.quell.Jitter;
        import dev.quell.Resilience;
        import java.time.Duration;
        class Waits {
          static final Backoff SLOW = Backoff.constant(Duration.ofSeconds(2));
          static final Resilience BASE =
              Resilience.DEFAULT.withAttemptTimeout(Duration.ofMillis(200)).withDeadline(Duration.ofMillis(900));
          // BUG: Diagnostic contains: makes the first retry wait at least 2000 ms, longer than the deadline (1000 ms)
          static final Resilience A = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(1)).withBackoff(SLOW);
          // BUG: Diagnostic contains: as long as the deadline (500 ms)
          static final Resilience B = Resilience.HTTP.with(s -> s.backoff(Backoff.constant(Duration.ofMillis(500)))
              .deadline(Duration.ofMillis(500)).attemptTimeout(Duration.ofMillis(100)));
          // BUG: Diagnostic contains: at least 1000 ms
          static final Resilience C = BASE.withBackoff(Backoff.exponential(Duration.ofSeconds(1)).withJitter(Jitter.NONE));
          // BUG: Diagnostic contains: at least 1000 ms
          static final Resilience D = BASE.withBackoff(Backoff.exponential(Duration.ofSeconds(2)).withJitter(Jitter.EQUAL));
        }
        """).doTest();
  }

  @Test
  void waitsThatFitOrMayBeShorterAreNotReported() {
    helper.addSourceLines("Fits.java", """
        import dev.quell.Backoff;
        import dev.quell.Jitter;
        import dev.quell.Resilience;
        import java.time.Duration;
        class Fits {
          static final Resilience A = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(1)).withAttemptTimeout(Duration.ofMillis(300))
              .withBackoff(Backoff.constant(Duration.ofMillis(999)));
          // full jitter (the default) may draw any wait down to zero
          static final Resilience B = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(1)).withAttemptTimeout(Duration.ofMillis(300))
              .withBackoff(Backoff.exponential(Duration.ofSeconds(5)));
          // equal jitter waits at least half: 900 ms of a 1 s deadline
          static final Resilience C = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(1)).withAttemptTimeout(Duration.ofMillis(300))
              .withBackoff(Backoff.exponential(Duration.ofMillis(1800)).withJitter(Jitter.EQUAL));
          // one attempt never waits
          static final Resilience D = Resilience.DEFAULT.withAttempts(1).withDeadline(Duration.ofSeconds(1))
              .withAttemptTimeout(Duration.ofMillis(300)).withBackoff(Backoff.constant(Duration.ofSeconds(5)));
          // no deadline
          static final Resilience E = Resilience.DEFAULT.withoutDeadline().withBackoff(Backoff.constant(Duration.ofMinutes(5)));
          static Resilience unknown(Backoff backoff) {
            return Resilience.DEFAULT.withDeadline(Duration.ofSeconds(1)).withAttemptTimeout(Duration.ofMillis(300)).withBackoff(backoff);
          }
        }
        """).doTest();
  }
}
