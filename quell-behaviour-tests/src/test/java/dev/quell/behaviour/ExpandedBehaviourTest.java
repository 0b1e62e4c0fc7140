package dev.quell.behaviour;

import static dev.quell.behaviour.Script.Step.fail;
import static dev.quell.behaviour.Script.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.AttemptTimeoutException;
import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Classifier;
import dev.quell.Criticality;
import dev.quell.DeadlineExceededException;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent.Type;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.behaviour.Configurations.Budget;
import dev.quell.behaviour.Configurations.Preset;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The core's behaviours expanded over configurations, as Caffeine's tests expand over cache specs
 * (issue 19 item 8, issue 22 item 5): every driver ({@link Driver}: sync throw style, sync result
 * style, async, the real-clock fast lanes with and without a listener, the simulator, Reactor,
 * Kotlin's executeSuspend and runSuspend) × every budget kind × the presets. Behaviours that need
 * time to pass (deadline, attempt timeout, Retry-After, hedging, cancellation) run on every driver
 * with a virtual clock. Each expected outcome is derived from the configuration (its attempts,
 * whether its budget can be emptied), never written per case; every listened run also checks that
 * the call reported exactly one terminal event ({@link Driver.Rig#run}).
 *
 * <p>Sync hedging runs on {@link ControlledTime}, which only the test thread moves: its timings are
 * exact, run after run.
 */
@Timeout(60) // a hang guard only: every case runs on a virtual clock or answers at once
class ExpandedBehaviourTest {

  @AfterEach
  void clear() {
    Thread.interrupted();
  }

  // ---------------------------------------------------------------- every driver

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#all")
  void aSuccessIsOneAttemptAndItsValue(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    Ran r = rig.run(Configurations.policy(preset, budget.make.apply(rig.time())), Script.of(ok("v")));
    assertThat(r.value).isEqualTo("v");
    assertThat(r.thrown).isNull();
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.signals).as("one answer to the caller").isEqualTo(1);
    if (r.reason != null) {
      assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#all")
  void aTransientFailureIsRetriedWhileAttemptsAndAFreshBudgetAllow(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time()));
    IOException flaky = new IOException("flaky");
    Ran r = rig.run(p, Script.of(fail(flaky), ok("v")));
    if (p.attempts() >= 2) {
      assertThat(r.value).isEqualTo("v");
      assertThat(r.attempts).isEqualTo(2);
    } else {
      assertThat(r.thrown).isSameAs(flaky);
      assertThat(r.attempts).isEqualTo(1);
    }
    assertThat(r.signals).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#all")
  void whenEveryAttemptFailsTheLastFailureComesBackAfterTheAttemptsAllowed(Driver driver, Budget budget,
      Preset preset) {
    Driver.Rig rig = driver.rig();
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time()));
    Script.Step[] steps = new Script.Step[p.attempts()];
    IOException last = null;
    for (int i = 0; i < steps.length; i++) {
      last = new IOException("down " + (i + 1));
      steps[i] = fail(last);
    }
    Ran r = rig.run(p, Script.of(steps));
    assertThat(r.attempts).isEqualTo(p.attempts());
    assertThat(r.thrown).isSameAs(last);
    if (r.reason != null) {
      assertThat(r.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#all")
  void aPermanentFailureIsNeitherRetriedNorCharged(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    RetryBudget made = budget.make.apply(rig.time());
    double before = made.tokens();
    IllegalArgumentException bug = new IllegalArgumentException("bug");
    Ran r = rig.run(Configurations.policy(preset, made), Script.of(fail(bug)));
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.thrown).isSameAs(bug);
    assertThat(made.tokens()).as("tokens after a permanent failure").isEqualTo(before);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#all")
  void anEmptyBudgetStopsTheRetryAndSaysSo(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    RetryBudget made = budget.make.apply(rig.time());
    Resilience p = Configurations.policy(preset, made);
    if (!budget.emptiable || p.attempts() < 2) {
      return; // nothing to empty, or nothing to retry: the other behaviours cover it
    }
    // spend it down (a feedback throttle is spent by failures, the others by retries)
    for (int i = 0; i < 100_000 && dev.quell.BudgetPeek.wouldFund(made, Criticality.CRITICAL_PLUS); i++) {
      made.trySpend(Criticality.CRITICAL_PLUS);
      made.recordFailure();
    }
    assertThat(dev.quell.BudgetPeek.wouldFund(made, Criticality.CRITICAL)).as("%s emptied", budget).isFalse();
    IOException down = new IOException("down");
    Ran r = rig.run(p, Script.of(fail(down), ok("never")));
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.reason).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(r.thrown).isInstanceOf(CallRejectedException.class).hasCause(down);
    assertThat(r.signals).isEqualTo(1);
  }

  // ---------------------------------------------------------------- every driver on a virtual clock

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtual")
  void theDeadlineEndsTheCallAtTheDeadline(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time())).withDeadline(Duration.ofMillis(300));
    Ran r = rig.run(p, Script.of(ok("late").after(5_000), ok("late").after(5_000), ok("late").after(5_000)));
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(300));
    assertThat(r.thrown).isInstanceOf(DeadlineExceededException.class);
    assertThat(r.value).isNull();
    assertThat(r.signals).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtual")
  void anAttemptThatOutlivesItsTimeoutIsAbandonedAndRetriedWhileAttemptsAllow(Driver driver, Budget budget,
      Preset preset) {
    Driver.Rig rig = driver.rig();
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time()))
        .withAttemptTimeout(Duration.ofMillis(250)).withDeadline(Duration.ofMinutes(1));
    Ran r = rig.run(p, Script.of(ok("late").after(5_000), ok("v")));
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(250));
    assertThat(r.ofType(Type.ATTEMPT_ENDED).get(0).failure()).get().isInstanceOf(AttemptTimeoutException.class);
    if (preset.retries()) {
      assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
      assertThat(r.value).isEqualTo("v");
      assertThat(r.attempts).isEqualTo(2);
    } else {
      assertThat(r.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
      assertThat(r.thrown).isInstanceOf(AttemptTimeoutException.class);
      assertThat(r.attempts).isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtual")
  void aServersRetryAfterSetsTheWaitBeforeTheRetry(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    Classifier throttling = Classifier.rules()
        .onFailure(e -> "slow down".equals(e.getMessage()), Verdict.throttled(Duration.ofSeconds(2)));
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time())).withClassifier(throttling)
        .withDeadline(Duration.ofMinutes(1));
    IOException slowDown = new IOException("slow down");
    Ran r = rig.run(p, Script.of(fail(slowDown), ok("v")));
    if (preset.retries()) {
      assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
      assertThat(r.value).isEqualTo("v");
      assertThat(r.ofType(Type.RETRYING)).singleElement().satisfies(e ->
          assertThat(e.delay()).contains(Duration.ofSeconds(2)));
      assertThat(r.elapsed).isEqualTo(Duration.ofSeconds(2));
    } else {
      assertThat(r.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
      assertThat(r.thrown).isSameAs(slowDown);
      assertThat(r.attempts).isEqualTo(1);
      assertThat(r.elapsed).as("no retry to wait for").isZero();
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtualRetrying")
  void aSlowAttemptIsHedgedAfterTheDelayTheFirstAnswerWinsAndTheLoserIsCancelled(Driver driver, Budget budget,
      Preset preset) {
    Driver.Rig rig = driver.rig();
    List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time()))
        .withHedge(Hedge.after(Duration.ofMillis(100))).withDeadline(Duration.ofMinutes(1)).withDiscard(discarded::add);
    Script dependency = Script.of(ok("slow").after(1_000), ok("fast").after(50));
    Ran r = rig.run(p, dependency);
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("fast");
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(150));
    assertThat(r.attempts).as("attempts counts every attempt sent").isEqualTo(2);
    assertThat(r.ofType(Type.HEDGE_STARTED)).hasSize(1);
    assertThat(r.ofType(Type.HEDGE_WON)).hasSize(1);
    assertThat(dependency.cancelled).as("the loser saw its cancellation").hasValue(1);
    assertThat(discarded).as("a cancelled loser has no value to discard").isEmpty();
    assertThat(r.signals).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtualRetrying")
  void anAnswerBeforeTheHedgeDelaySendsNoHedge(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    RetryBudget made = budget.make.apply(rig.time());
    Resilience p = Configurations.policy(preset, made).withHedge(Hedge.after(Duration.ofMillis(100)))
        .withDeadline(Duration.ofMinutes(1));
    Ran r = rig.run(p, Script.of(ok("quick").after(40)));
    assertThat(r.value).isEqualTo("quick");
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(40));
    assertThat(r.types()).doesNotContain(Type.HEDGE_STARTED, Type.HEDGE_SUPPRESSED);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#stubbornRetrying")
  void aLosersValueThatArrivesAnywayReachesTheDiscardHookExactlyOnce(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time()))
        .withHedge(Hedge.after(Duration.ofMillis(100))).withDeadline(Duration.ofMinutes(1)).withDiscard(discarded::add);
    // the primary answers at 300 ms; the hedge, sent at 100 ms, ignores its cancellation and answers at 1.1 s
    Script dependency = Script.of(ok("first").after(300), ok("late").after(1_000).stubborn());
    Ran r = rig.run(p, dependency);
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("first");
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(300));
    assertThat(r.attempts).isEqualTo(2);
    assertThat(dependency.answered).as("the loser answered after it was cancelled").containsExactly("late");
    assertThat(discarded).containsExactly("late");
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtual")
  void cancellingTheCallCancelsTheAttemptInFlightAndChargesNothing(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    RetryBudget made = budget.make.apply(rig.time());
    double before = made.tokens();
    Script dependency = Script.of(ok("v").after(1_000));
    Ran r = rig.run(Configurations.policy(preset, made), dependency, new Driver.Cancel(Duration.ofMillis(100), false));
    assertThat(r.reason).isEqualTo(StopReason.CANCELLED);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.value).isNull();
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(100));
    assertThat(dependency.cancelled).as("the attempt saw its cancellation").hasValue(1);
    assertThat(made.tokens()).as("nothing charged").isEqualTo(before);
    assertCancelledSignal(driver, r);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtual")
  void aCancellationThatComesFirstInTheInstantTheAnswerArrivesCancelsTheCall(Driver driver, Budget budget,
      Preset preset) {
    Driver.Rig rig = driver.rig();
    Script dependency = Script.of(ok("v").after(100));
    Ran r = rig.run(Configurations.policy(preset, budget.make.apply(rig.time())), dependency,
        new Driver.Cancel(Duration.ofMillis(100), true));
    assertThat(r.reason).isEqualTo(StopReason.CANCELLED);
    assertThat(r.value).isNull();
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(100));
    assertThat(dependency.cancelled).hasValue(1);
    assertCancelledSignal(driver, r);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtualButKotlin")
  void anAnswerThatComesFirstInTheInstantOfACancellationEndsTheCallAndTheCancellationIsMoot(Driver driver,
      Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    Script dependency = Script.of(ok("v").after(100));
    List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
    Ran r = rig.run(Configurations.policy(preset, budget.make.apply(rig.time())).withDiscard(discarded::add),
        dependency, new Driver.Cancel(Duration.ofMillis(100), false));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(discarded).as("the value reached the caller: nothing to discard (%s)", r).isEmpty();
    assertThat(r.value).isEqualTo("v");
    assertThat(r.thrown).isNull();
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(100));
    assertThat(dependency.cancelled).hasValue(0);
    assertThat(r.signals).isEqualTo(1);
  }

  /**
   * Kotlin's side of the race above. A coroutine cancelled while it waits for a value that is
   * already on its way is cancelled promptly (kotlinx-coroutines' prompt cancellation): the caller
   * then gets a {@code CancellationException}, which is right, but the value must not vanish — the
   * caller never gets it, so it is a value nobody can receive and belongs to the policy's discard
   * hook, once (issue 19 item 2: every value nobody receives reaches its discard hook exactly once,
   * on every driver).
   *
   * <p>The call ends SUCCEEDED with "v" at 100 ms, and the canceller due at the same instant runs
   * before the caller's coroutine resumes. {@code executeSuspend}/{@code runSuspend} resume the caller
   * with kotlinx's onCancellation handler, which hands the value to the policy's discard hook
   * ({@code Resilience.discard}); before that fix they used {@code CompletableFuture.await()}, which
   * dropped it, and this test failed on all its cases.
   */
  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#kotlin")
  void inKotlinAnAnswerInTheInstantOfACancellationReachesTheCallerOrTheDiscardHook(Driver driver, Budget budget,
      Preset preset) {
    Driver.Rig rig = driver.rig();
    Script dependency = Script.of(ok("v").after(100));
    List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
    Ran r = rig.run(Configurations.policy(preset, budget.make.apply(rig.time())).withDiscard(discarded::add),
        dependency, new Driver.Cancel(Duration.ofMillis(100), false));
    assertThat(r.reason).as("the call's own end").isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.signals).isEqualTo(1);
    if ("v".equals(r.value)) {
      assertThat(discarded).isEmpty();
    } else {
      assertThat(r.thrown).isInstanceOf(CancellationException.class);
      assertThat(discarded).as("the value nobody received").containsExactly("v");
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("dev.quell.behaviour.Configurations#virtualRetrying")
  void cancellingDuringTheBackoffEndsTheCallWithoutTheRetry(Driver driver, Budget budget, Preset preset) {
    Driver.Rig rig = driver.rig();
    Resilience p = Configurations.policy(preset, budget.make.apply(rig.time()))
        .withBackoff(Backoff.constant(Duration.ofSeconds(1))).withDeadline(Duration.ofMinutes(1));
    Ran r = rig.run(p, Script.of(fail(new IOException("flaky")), ok("never")),
        new Driver.Cancel(Duration.ofMillis(500), false));
    assertThat(r.reason).isEqualTo(StopReason.CANCELLED);
    assertThat(r.attempts).as("the retry never started").isEqualTo(1);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(500));
    assertCancelledSignal(driver, r);
  }

  /** What the caller of a cancelled call is told, in each driver's own terms. */
  private static void assertCancelledSignal(Driver driver, Ran r) {
    switch (driver) {
      case REACTOR:
        assertThat(r.signals).as("a disposed subscriber hears nothing more").isZero();
        break;
      case ASYNC:
      case SIMULATOR:
      case KOTLIN_EXECUTE:
      case KOTLIN_RUN:
        assertThat(r.signals).isEqualTo(1);
        assertThat(r.thrown).isInstanceOf(CancellationException.class);
        break;
      default: // the sync driver: the caller's interrupt stops the call
        assertThat(r.signals).isEqualTo(1);
        if (driver == Driver.EXECUTE) {
          assertThat(r.thrown).isNotNull();
        }
    }
  }
}
