package dev.quell.errorprone;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellAttemptTimeoutBeyondDeadlineTest {
  private final CompilationTestHelper helper =
      CompilationTestHelper.newInstance(QuellAttemptTimeoutBeyondDeadline.class, getClass());

  @Test
  void aTimeoutLongerThanTheDeadlineIsReported() {
    helper.addSourceLines("Timeouts.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Timeouts {
          static final Duration DEADLINE = Duration.ofSeconds(2);
          // BUG: Diagnostic contains: The attempt timeout (5000 ms) is longer than the deadline (2000 ms)
          static final Resilience A = Resilience.DEFAULT.withDeadline(DEADLINE).withAttemptTimeout(Duration.ofSeconds(5));
          // BUG: Diagnostic contains: The attempt timeout (10000 ms, the preset's default) is longer than the deadline (1000 ms)
          static final Resilience B = Resilience.HTTP.withDeadline(Duration.ofSeconds(1));
          // BUG: Diagnostic contains: The attempt timeout (60000 ms) is longer than the deadline (30000 ms)
          static final Resilience C = Resilience.DEFAULT.with(s -> s.attemptTimeout(Duration.ofMinutes(1)));
          static final Resilience BASE =
              Resilience.DEFAULT.withName("base").withAttemptTimeout(Duration.ofSeconds(1)).withDeadline(Duration.ofSeconds(3));
          // BUG: Diagnostic contains: QuellAttemptTimeoutBeyondDeadline
          static final Resilience D = BASE.withAttemptTimeout(Duration.ofSeconds(4));
          // derived from a policy already reported, without touching its timing: not reported again
          static final Resilience E = D.withName("e").withAttempts(5);
        }
        """).doTest();
  }

  @Test
  void anAttemptTimeoutAsLongAsTheDeadlineIsReportedToo() {
    helper.addSourceLines("Equal.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Equal {
          // BUG: Diagnostic contains: The attempt timeout (10000 ms, the preset's default) is as long as the deadline (10000 ms)
          static final Resilience A = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(10));
          // BUG: Diagnostic contains: is as long as the deadline (2000 ms)
          static final Resilience B = Resilience.HTTP.withAttemptTimeout(Duration.ofSeconds(2)).withDeadline(Duration.ofMillis(2000));
          // a millisecond shorter leaves a millisecond: not provably useless
          static final Resilience C = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(2)).withAttemptTimeout(Duration.ofMillis(1999));
        }
        """).doTest();
  }

  @Test
  void timeoutsWithinTheDeadlineOrUnknownAreNotReported() {
    helper.addSourceLines("Fine.java", """
        import dev.quell.Resilience;
        import java.time.Duration;
        class Fine {
          static final Resilience A = Resilience.DEFAULT;
          static final Resilience B = Resilience.DEFAULT.withDeadline(Duration.ofMillis(10_001));
          static final Resilience C = Resilience.DEFAULT.withDeadline(Duration.ofSeconds(2)).withoutAttemptTimeout();
          static final Resilience D = Resilience.DEFAULT.withAttemptTimeout(Duration.ofMinutes(1)).withoutDeadline();
          // the end of the chain is what counts: the deadline is set after the timeout
          static final Resilience E = Resilience.DEFAULT.withAttemptTimeout(Duration.ofMinutes(1))
              .withDeadline(Duration.ofMinutes(3));
          static Resilience configured(Duration deadline) {
            return Resilience.DEFAULT.withDeadline(deadline);
          }
          static Resilience unknownBase(Resilience base) {
            return base.withAttemptTimeout(Duration.ofMinutes(5));
          }
          @org.junit.jupiter.api.Test
          void theDeadlineCapsTheAttemptTimeout() {
            Resilience onPurpose = Resilience.DEFAULT.withDeadline(Duration.ofMillis(300));
          }
        }
        """).doTest();
  }
}
