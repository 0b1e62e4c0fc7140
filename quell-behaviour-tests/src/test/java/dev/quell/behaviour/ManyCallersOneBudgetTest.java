package dev.quell.behaviour;

import static dev.quell.behaviour.Script.Step.fail;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.TimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;

/**
 * Many callers against one budget, on every driver, with exact accounting at the end (issue 22
 * item 5; STYLE.md, "many threads against one budget"): threads for the synchronous, asynchronous
 * and Reactor drivers, coroutines for Kotlin's, calls interleaved on one clock for the simulator's.
 * The dependency is down, so every call asks for retries until its attempts or the budget run out.
 * Counted from what the dependency saw and how each call ended, never from the budget's own word:
 * every retry asked for was either spent (the dependency saw it) or refused (the call ended
 * BUDGET_EXHAUSTED), and the budget's tokens went down by exactly the retries spent.
 */
@Timeout(120) // a hang guard only
class ManyCallersOneBudgetTest {
  static final int CALLERS = 8;
  /**
   * Calls per caller: fewer on the real clock, where each refused call serves the core's guarded
   * pause (100 ms) for real before it returns.
   */
  static int callsPerCaller(Driver driver) {
    return driver.realClock ? 5 : 50;
  }
  static final int ATTEMPTS = 3;

  enum Kind {
    /** 20 tokens, refilled over a year: none come back during a run. */
    REPLENISHING(t -> RetryBudget.replenishing(20, Duration.ofDays(365), t)),
    /** gRPC's token bucket with no floor: only successes refill it, and here none succeed. */
    TOKEN_BUCKET(t -> RetryBudget.of(0.1, 0, t));

    final Function<TimeSource, RetryBudget> make;

    Kind(Function<TimeSource, RetryBudget> make) {
      this.make = make;
    }
  }

  static Stream<Arguments> configurations() {
    List<Arguments> all = new ArrayList<>();
    for (Driver driver : Driver.values()) {
      for (Kind kind : Kind.values()) {
        all.add(Arguments.of(driver, kind));
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} × {1}")
  @MethodSource("configurations")
  void everyRetryAskedForIsSpentOrRefusedAndTheTokensSpentAreExactlyTheRetriesSent(Driver driver, Kind kind)
      throws Exception {
    Driver.Rig rig = driver.rig();
    int perCaller = callsPerCaller(driver);
    int calls = CALLERS * perCaller;
    RetryBudget budget = kind.make.apply(rig.time());
    double before = budget.tokens();
    Resilience policy = Resilience.DEFAULT.withAttempts(ATTEMPTS).withBudget(budget).withBackoff(Backoff.NONE)
        .withDeadline(Duration.ofMinutes(10)).with(Resilience.Settings::clearListeners)
        .withTimeSource(rig.time());
    if (driver.listened) {
      policy = policy.withListener(rig.events::add);
    }
    // on a virtual clock each attempt takes 10 ms, so that the calls' attempts overlap in time
    Duration latency = driver.realClock ? Duration.ZERO : Duration.ofMillis(10);
    List<Script> scripts = new ArrayList<>();
    List<Ran> rans = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      IOException down = new IOException("down");
      scripts.add(Script.of(fail(down).after(latency), fail(down).after(latency), fail(down).after(latency)));
      rans.add(new Ran());
    }
    runAll(driver, rig, policy, scripts, rans, perCaller);

    int sent = 0;
    int spent = 0;
    int asked = 0;
    int refused = 0;
    for (int i = 0; i < calls; i++) {
      Ran r = rans.get(i);
      int attempts = scripts.get(i).attempts();
      assertThat(r.signals).as("call %d: one answer to its caller", i).isEqualTo(1);
      StopReason reason = reasonOf(r, attempts);
      assertThat(reason).as("call %d: %s", i, r).isIn(StopReason.ATTEMPTS_EXHAUSTED, StopReason.BUDGET_EXHAUSTED);
      if (reason == StopReason.BUDGET_EXHAUSTED) {
        refused++;
        assertThat(attempts).as("a refused call stopped before its last attempt").isLessThan(ATTEMPTS);
      } else {
        assertThat(attempts).isEqualTo(ATTEMPTS);
      }
      sent += attempts;
      spent += attempts - 1;
      asked += attempts == ATTEMPTS ? attempts - 1 : attempts; // every failed attempt but the last allowed asks
    }
    assertThat(spent + refused).as("spent + refused = asked").isEqualTo(asked);
    assertThat(refused).as("the budget ran out").isPositive();
    assertThat(spent).as("the budget funded some").isPositive();
    double tolerance = driver.realClock && kind == Kind.REPLENISHING ? 1e-3 : 1e-9; // a year's refill, for the run's real time
    assertThat(budget.tokens()).as("tokens conserved: before - spent").isCloseTo(before - spent, within(tolerance));
    assertThat(budget.tokens()).as("and none left to fund a retry").isLessThan(1.0);
    if (driver.listened) {
      List<ResilienceEvent> events = List.copyOf(rig.events);
      assertThat(events.stream().filter(ResilienceEvent::isTerminal)).as("one terminal event per call").hasSize(calls);
      assertThat(events.stream().filter(e -> e.type() == ResilienceEvent.Type.ATTEMPT_STARTED)).hasSize(sent);
      // RETRYING is told when the budget would fund the retry, and the token is taken when the retry
      // starts: with callers at once, another caller may take it in between (docs/behaviour-tests.md).
      // Every retry sent was told, and every retry told but not sent ended in a refusal.
      long told = events.stream().filter(e -> e.type() == ResilienceEvent.Type.RETRYING).count();
      assertThat(told).as("every retry sent was announced").isGreaterThanOrEqualTo(spent);
      assertThat(told - spent).as("an announced retry not sent was refused").isLessThanOrEqualTo(refused);
      assertThat(events.stream().filter(e -> e.type() == ResilienceEvent.Type.REJECTED_BY_BUDGET)).hasSize(refused);
    }
  }

  private static StopReason reasonOf(Ran r, int attempts) {
    if (r.reason != null) {
      return r.reason;
    }
    if (r.thrown instanceof CallRejectedException) {
      return ((CallRejectedException) r.thrown).reason();
    }
    return r.thrown instanceof IOException && attempts == ATTEMPTS ? StopReason.ATTEMPTS_EXHAUSTED : null;
  }

  /** Starts every call the driver's way, all against the one policy, and runs them to their end. */
  private static void runAll(Driver driver, Driver.Rig rig, Resilience policy, List<Script> scripts, List<Ran> rans,
      int perCaller) throws Exception {
    switch (driver) {
      case EXECUTE:
      case RUN: {
        Driver.SyncRig sync = (Driver.SyncRig) rig;
        for (int t = 0; t < CALLERS; t++) {
          int from = t * perCaller;
          sync.time.start("caller-" + t, () -> {
            for (int i = from; i < from + perCaller; i++) {
              sync.callHere(policy, scripts.get(i), rans.get(i));
            }
          });
        }
        sync.settle();
        break;
      }
      case SIMULATOR: {
        // confined to one thread: the calls interleave on the simulation clock
        for (int i = 0; i < scripts.size(); i++) {
          Script script = scripts.get(i);
          Ran r = rans.get(i);
          CompletableFuture<Outcome<Object>> f = policy.runAsync(a -> Driver.futureStep(rig.time(), script));
          f.whenComplete((o, e) -> {
            r.signals++;
            r.reason = o.stopReason();
            r.thrown = o.failure().orElse(null);
          });
        }
        rig.settle();
        break;
      }
      case KOTLIN_EXECUTE:
      case KOTLIN_RUN: {
        Driver.KotlinRig kotlin = (Driver.KotlinRig) rig;
        Coroutines.many(kotlin.scheduler, scripts.size(),
            i -> new Coroutines.CallOf(policy, driver == Driver.KOTLIN_RUN, scripts.get(i), rans.get(i)));
        break;
      }
      default:
        onThreads(driver, rig, policy, scripts, rans, perCaller);
        rig.settle();
    }
  }

  /** ASYNC, REACTOR and the real-clock lanes: CALLERS threads start their calls at once. */
  private static void onThreads(Driver driver, Driver.Rig rig, Resilience policy, List<Script> scripts,
      List<Ran> rans, int perCaller) throws InterruptedException {
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < CALLERS; t++) {
      int from = t * perCaller;
      Thread thread = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = from; i < from + perCaller; i++) {
          Script script = scripts.get(i);
          Ran r = rans.get(i);
          switch (driver) {
            case ASYNC:
              policy.executeAsync(() -> Driver.futureStep(rig.time(), script)).whenComplete((v, e) -> {
                r.signals++;
                r.thrown = Driver.unwrap(e);
              });
              break;
            case REACTOR:
              Driver.ReactorRig reactor = (Driver.ReactorRig) rig;
              Mono<Object> call = reactor.dependency(script).transformDeferred(dev.quell.reactor.QuellReactor.of(policy));
              call.subscribe(v -> { }, e -> {
                r.signals++;
                r.thrown = e;
              }, () -> r.signals++);
              break;
            default: // the real-clock lanes
              try {
                policy.execute(() -> {
                  Script.Step s = script.next();
                  throw s.failure;
                });
              } catch (Exception e) {
                r.thrown = e;
              }
              r.signals++;
          }
        }
      }, "caller-" + t);
      threads.add(thread);
      thread.start();
    }
    go.countDown();
    for (Thread thread : threads) {
      thread.join();
    }
  }
}
