package dev.quell.behaviour;

import static dev.quell.behaviour.Script.Step.fail;
import static dev.quell.behaviour.Script.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent.Type;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Synchronous hedging on a deterministic clock (issue 19 item 8). On quell-test's VirtualTime a
 * hedge that sleeps on its executor thread moves the clock while the caller's attempt sleeps too,
 * so the same call can end at different virtual times. On {@link ControlledTime} only the test
 * thread moves the clock and each instant is played out before the next: the same hedged call,
 * run again and again, ends at the same virtual time with the same answer and the same events.
 */
@Timeout(60) // a hang guard only
class SyncHedgingOnAControlledClockTest {
  static final int RUNS = 50;

  private static Resilience hedged(Hedge hedge, List<Object> discarded) {
    return Resilience.DEFAULT.withBudget(RetryBudget.NONE).withBackoff(Backoff.NONE).withHedge(hedge)
        .withDeadline(Duration.ofMinutes(1)).withDiscard(discarded::add)
        .with(Resilience.Settings::clearListeners);
  }

  /** Runs the same call RUNS times, each on a fresh clock, and checks each run against the first. */
  private static Ran sameEveryTime(Driver driver, java.util.function.Function<List<Object>, Resilience> policy,
      java.util.function.Supplier<Script> dependency, List<Object> firstDiscarded) {
    Ran first = null;
    for (int i = 0; i < RUNS; i++) {
      List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
      Ran r = driver.rig().run(policy.apply(discarded), dependency.get());
      if (first == null) {
        first = r;
        firstDiscarded.addAll(discarded);
        continue;
      }
      assertThat(r.elapsed).as("run %d: %s", i, r).isEqualTo(first.elapsed);
      assertThat(r.value).as("run %d", i).isEqualTo(first.value);
      assertThat(r.reason).as("run %d", i).isEqualTo(first.reason);
      assertThat(r.attempts).as("run %d", i).isEqualTo(first.attempts);
      assertThat(r.types()).as("run %d: the events, in order", i).containsExactlyElementsOf(first.types());
      assertThat(discarded).as("run %d", i).containsExactlyElementsOf(firstDiscarded);
    }
    return first;
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(names = {"EXECUTE", "RUN"})
  void aHedgeThatAnswersFirstWinsAtTheSameVirtualTimeEveryRun(Driver driver) {
    List<Object> discarded = new ArrayList<>();
    Ran r = sameEveryTime(driver, d -> hedged(Hedge.after(Duration.ofMillis(100)), d),
        () -> Script.of(ok("slow").after(1_000), ok("fast").after(50)), discarded);
    assertThat(r.value).isEqualTo("fast");
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(150));
    assertThat(r.attempts).isEqualTo(2);
    assertThat(r.types()).contains(Type.HEDGE_STARTED, Type.HEDGE_WON);
    assertThat(discarded).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(names = {"EXECUTE", "RUN"})
  void aPrimaryThatAnswersFirstWinsAndTheStubbornHedgesLateValueIsDiscardedOnceEveryRun(Driver driver) {
    List<Object> discarded = new ArrayList<>();
    Ran r = sameEveryTime(driver, d -> hedged(Hedge.after(Duration.ofMillis(100)), d),
        () -> Script.of(ok("first").after(300), ok("late").after(1_000).stubborn()), discarded);
    assertThat(r.value).isEqualTo("first");
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(300));
    assertThat(discarded).containsExactly("late");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(names = {"EXECUTE", "RUN"})
  void aFailedPrimarySendsTheNextHedgeAtOnceEveryRun(Driver driver) {
    // grpc-java#10145: a transient failure skips the hedging delay
    List<Object> discarded = new ArrayList<>();
    Ran r = sameEveryTime(driver, d -> hedged(Hedge.after(Duration.ofSeconds(10)), d),
        () -> Script.of(fail(new IOException("reset")).after(20), ok("v").after(30)), discarded);
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("v");
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(50));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(names = {"EXECUTE", "RUN"})
  void twoHedgesAndTheDeadlineEndTogetherEveryRun(Driver driver) {
    List<Object> discarded = new ArrayList<>();
    Ran r = sameEveryTime(driver,
        d -> hedged(Hedge.after(Duration.ofMillis(100)).withMaxHedges(2), d).withAttempts(3)
            .withDeadline(Duration.ofMillis(250)),
        () -> Script.of(ok("a").after(5_000), ok("b").after(5_000), ok("c").after(5_000)), discarded);
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(250));
    assertThat(r.attempts).isEqualTo(3);
    assertThat(r.ofType(Type.HEDGE_STARTED)).hasSize(2);
  }
}
