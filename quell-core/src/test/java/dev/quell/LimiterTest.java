package dev.quell;

import static dev.quell.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Limiter.AdaptiveConfig;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What every kind of limiter shares. */
class LimiterTest {
  private final SteppingClock clock = new SteppingClock();

  private List<Limiter> oneOfEach() {
    return List.of(
        Limiter.rate(10, 3, Duration.ofMillis(100), clock),
        Limiter.concurrency(3, Duration.ofMillis(100)),
        Limiter.adaptive(AdaptiveConfig.DEFAULT.withMinLimit(1).withInitialLimit(3)));
  }

  @Test
  void everyKindRefusesWithLimitedAndNamesItselfUniquely() {
    List<Limiter> limiters = oneOfEach();
    for (Limiter limiter : limiters) {
      assertThat(limiter.gate().refusal()).isEqualTo(StopReason.LIMITED);
      assertThat(limiter.gate().toString()).isEqualTo(limiter.toString());
    }
    assertThat(limiters).extracting(Limiter::name).doesNotHaveDuplicates();
  }

  @Test
  void aCopyHasTheSameConfigurationAndFreshState() {
    for (Limiter limiter : oneOfEach()) {
      long now = clock.nanoTime();
      for (int i = 0; i < 3; i++) {
        assertThat(limiter.gate().tryAdmit(attempt(now, 0), 0, now)).isTrue();
      }
      assertThat(limiter.available()).as("%s", limiter).isZero();
      Limiter copy = limiter.copy("per-key");
      assertThat(copy.name()).isEqualTo("per-key");
      assertThat(copy.getClass()).isEqualTo(limiter.getClass());
      assertThat(copy.limit()).isEqualTo(3);
      assertThat(copy.available()).as("%s", copy).isEqualTo(3);
      assertThat(copy.inFlight()).isZero();
      assertThat(copy.gate().maxWaitNanos()).isEqualTo(limiter.gate().maxWaitNanos());
      assertThat(limiter.available()).as("the original keeps its state").isZero();
    }
  }

  @Test
  void onlyABulkheadWithAWaitQueues() {
    for (Limiter limiter : oneOfEach()) {
      long now = clock.nanoTime();
      while (limiter.gate().tryAdmit(attempt(now, 0), 0, now)) {
        // fill it
      }
      boolean queued = limiter.gate().await(attempt(now), 0, () -> {});
      assertThat(queued).as("%s", limiter).isEqualTo(limiter instanceof ConcurrencyLimiter);
      assertThat(limiter.queued()).isEqualTo(queued ? 1 : 0);
    }
  }
}
