package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@code explain()}'s worst call is an upper bound in every configuration (issue 19, item 5), also
 * when the dependency pushes back: answers judged THROTTLED, with or without a Retry-After (which may
 * ask for more than the backoff's maximum, and is then capped by it), at random moments, with or
 * without a deadline, hedged or not.
 */
class ExplainThrottledProperties {

  @Property(tries = 600)
  void noCallOutlastsTheStatedWorstWhateverTheDependencyAnswers(
      @ForAll @IntRange(min = 1, max = 5) int attempts,
      @ForAll @IntRange(min = 1, max = 2000) int timeoutMs,
      @ForAll @IntRange(min = 0, max = 20000) int deadlineMs,
      @ForAll @IntRange(min = 1, max = 5000) int backoffMaxMs,
      @ForAll @IntRange(min = 0, max = 2) int hedgeKind,
      @ForAll long seed) {
    VirtualTime time = VirtualTime.create(seed);
    Random random = new Random(seed);
    Duration backoffMax = Duration.ofMillis(backoffMaxMs);
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withTimeSource(time).withAttempts(attempts)
        .withAttemptTimeout(Duration.ofMillis(timeoutMs))
        .withBackoff(Backoff.exponential(Duration.ofMillis(Math.min(100, backoffMaxMs)),
            Duration.ofMillis(Math.min(1000, backoffMaxMs)), 2, backoffMax))
        .withClassifier((result, failure) -> failure instanceof Pushback ? ((Pushback) failure).verdict
            : failure != null ? Verdict.TRANSIENT : Verdict.OK);
    p = deadlineMs == 0 ? p.withoutDeadline() : p.withDeadline(Duration.ofMillis(deadlineMs));
    if (hedgeKind == 1 && attempts > 1) {
      p = p.withHedge(Hedge.after(Duration.ofMillis(timeoutMs / 3)));
    } else if (hedgeKind == 2 && attempts > 1) {
      p = p.withHedge(Hedge.after(Duration.ofMillis(timeoutMs / 2)).withRetries(true));
    }
    Explanation e = new Explanation(p);
    long stated = e.statedWorstNanos();
    for (int run = 0; run < 3; run++) {
      CompletableFuture<Outcome<Object>> f = p.runAsync(attempt -> {
        CompletableFuture<Object> stage = new CompletableFuture<>();
        int kind = random.nextInt(4);
        long after = (long) (random.nextDouble() * timeoutMs * 1.2) * 1_000_000L;
        Exception answer = kind == 0 ? new IOException("down")
            : new Pushback(kind == 1 ? Verdict.THROTTLED
                : Verdict.throttled(Duration.ofMillis(random.nextInt(2 * backoffMaxMs + 1))));
        if (kind != 3 || random.nextBoolean()) {
          time.schedule(() -> stage.completeExceptionally(answer), after);
        } // else: it hangs until its timeout
        return stage;
      });
      time.runUntilIdle(Duration.ofDays(3650));
      assertThat(f).isDone();
      Outcome<Object> o = f.join();
      assertThat(o.elapsed().toNanos()).as("%s%n%s", o, p.explain()).isLessThanOrEqualTo(stated);
    }
  }

  /** A dependency's answer that the classifier judges as it says. */
  static final class Pushback extends Exception {
    final Verdict verdict;

    Pushback(Verdict verdict) {
      super("pushback", null, false, false);
      this.verdict = verdict;
    }
  }
}
