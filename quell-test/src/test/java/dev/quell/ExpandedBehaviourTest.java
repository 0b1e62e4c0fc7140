package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The core's behaviours expanded over configurations, as Caffeine's tests expand over cache specs
 * (issue 19, item 8): every way a call runs — sync throw style, sync result style and async on a
 * virtual clock with a listener; the real-clock fast lanes with no listener; the real clock with a
 * listener — × every budget kind × the presets. Each behaviour's expected outcome is derived from
 * the configuration (its attempts, whether its budget can be emptied), never hard-coded per case.
 */
class ExpandedBehaviourTest {

  @AfterEach
  void clear() {
    Thread.interrupted();
  }

  /** How a call runs. Real-clock lanes run immediate steps only. */
  enum Lane {
    EXECUTE(false, true), RUN(false, true), ASYNC(false, true), FAST(true, false), REAL_LISTENED(true, true);

    final boolean realClock;
    final boolean listened;

    Lane(boolean realClock, boolean listened) {
      this.realClock = realClock;
      this.listened = listened;
    }
  }

  /** Every kind of retry budget, made on the lane's clock; whether it can be emptied before a call. */
  enum Budget {
    TOKEN_BUCKET(t -> RetryBudget.of(0.1, 3, t), true),
    SHARED(t -> RetryBudget.shared("expanded-" + java.util.UUID.randomUUID()), true),
    FEEDBACK(t -> RetryBudget.feedback(), true),
    REPLENISHING(t -> RetryBudget.replenishing(5, Duration.ofHours(1), t), true),
    CONCURRENT(t -> RetryBudget.concurrent(), false),
    NONE(t -> RetryBudget.NONE, false);

    final Function<TimeSource, RetryBudget> make;
    final boolean emptiable;

    Budget(Function<TimeSource, RetryBudget> make, boolean emptiable) {
      this.make = make;
      this.emptiable = emptiable;
    }
  }

  enum Preset {
    DEFAULT(Resilience.DEFAULT), HTTP(Resilience.HTTP), NONE(Resilience.NONE);

    final Resilience policy;

    Preset(Resilience policy) {
      this.policy = policy;
    }
  }

  static Stream<Arguments> configurations() {
    List<Arguments> all = new ArrayList<>();
    for (Lane lane : Lane.values()) {
      for (Budget budget : Budget.values()) {
        for (Preset preset : Preset.values()) {
          all.add(Arguments.of(lane, budget, preset));
        }
      }
    }
    return all.stream();
  }

  /** What one call did. */
  static final class Ran {
    @Nullable Object value;
    @Nullable Throwable thrown;
    @Nullable StopReason reason;
    int attempts;
    List<ResilienceEvent> events = List.of();
  }

  private final VirtualTime time = VirtualTime.create();

  private Resilience policy(Lane lane, Budget budget, Preset preset, RetryBudget made) {
    TimeSource clock = lane.realClock ? TimeSource.system() : time;
    // no waits between attempts: the behaviours here are not the backoff's, and real-clock lanes
    // must not sleep
    return preset.policy.withTimeSource(clock).withBudget(made).withBackoff(Backoff.NONE)
        .with(Resilience.Settings::clearListeners);
  }

  private Ran run(Lane lane, Resilience base, Object... script) {
    List<ResilienceEvent> events = Collections.synchronizedList(new ArrayList<>());
    Resilience p = lane.listened ? base.withListener(events::add) : base;
    AtomicInteger calls = new AtomicInteger();
    java.util.concurrent.Callable<Object> work = () -> {
      int n = calls.getAndIncrement();
      assertThat(n).as("attempt %d within a script of %d", n + 1, script.length).isLessThan(script.length);
      Object step = script[n];
      if (step instanceof Exception) {
        throw (Exception) step;
      }
      return step;
    };
    Ran r = new Ran();
    switch (lane) {
      case RUN: {
        Outcome<Object> o = p.run(work);
        r.value = o.value();
        r.thrown = o.failure().orElse(null);
        r.reason = o.stopReason();
        assertThat(o.attempts()).isEqualTo(calls.get());
        break;
      }
      case ASYNC: {
        CompletableFuture<Outcome<Object>> f = p.runAsync(a -> {
          try {
            return CompletableFuture.completedFuture(work.call());
          } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
          }
        });
        time.runUntilIdle(Duration.ofHours(1));
        assertThat(f).isDone();
        Outcome<Object> o = f.join();
        r.value = o.value();
        r.thrown = o.failure().orElse(null);
        r.reason = o.stopReason();
        break;
      }
      default:
        try {
          r.value = p.execute(work);
          r.reason = StopReason.SUCCEEDED;
        } catch (CallRejectedException e) {
          r.thrown = e;
          r.reason = e.reason();
        } catch (Exception e) {
          r.thrown = e;
        }
    }
    r.attempts = calls.get();
    r.events = List.copyOf(events);
    if (lane.listened) {
      assertThat(r.events.stream().filter(ResilienceEvent::isTerminal).count())
          .as("exactly one terminal event: %s", r.events).isEqualTo(1);
      assertThat(r.events.get(r.events.size() - 1).isTerminal()).as("the terminal event comes last").isTrue();
      StopReason told = r.events.get(r.events.size() - 1).stopReason().orElseThrow();
      if (r.reason != null) {
        assertThat(told).isEqualTo(r.reason);
      }
      r.reason = told;
      assertThat(r.events.stream().filter(e -> e.type() == ResilienceEvent.Type.ATTEMPT_STARTED).count())
          .isEqualTo(r.attempts);
    }
    return r;
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("configurations")
  void aSuccessIsOneAttemptAndItsValue(Lane lane, Budget budget, Preset preset) {
    RetryBudget made = budget.make.apply(lane.realClock ? TimeSource.system() : time);
    Ran r = run(lane, policy(lane, budget, preset, made), "v");
    assertThat(r.value).isEqualTo("v");
    assertThat(r.attempts).isEqualTo(1);
    if (r.reason != null) {
      assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("configurations")
  void aTransientFailureIsRetriedWhileAttemptsAndAFreshBudgetAllow(Lane lane, Budget budget, Preset preset) {
    RetryBudget made = budget.make.apply(lane.realClock ? TimeSource.system() : time);
    Resilience p = policy(lane, budget, preset, made);
    IOException flaky = new IOException("flaky");
    Ran r = run(lane, p, flaky, "v");
    if (p.attempts() >= 2) {
      assertThat(r.value).isEqualTo("v");
      assertThat(r.attempts).isEqualTo(2);
    } else {
      assertThat(r.thrown).isSameAs(flaky);
      assertThat(r.attempts).isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("configurations")
  void whenEveryAttemptFailsTheLastFailureComesBackAfterTheAttemptsAllowed(Lane lane, Budget budget, Preset preset) {
    RetryBudget made = budget.make.apply(lane.realClock ? TimeSource.system() : time);
    Resilience p = policy(lane, budget, preset, made);
    Object[] script = new Object[p.attempts()];
    for (int i = 0; i < script.length; i++) {
      script[i] = new IOException("down " + (i + 1));
    }
    Ran r = run(lane, p, script);
    assertThat(r.attempts).isEqualTo(p.attempts());
    assertThat(r.thrown).isSameAs(script[script.length - 1]);
    if (r.reason != null) {
      assertThat(r.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    }
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("configurations")
  void aPermanentFailureIsNeitherRetriedNorCharged(Lane lane, Budget budget, Preset preset) {
    RetryBudget made = budget.make.apply(lane.realClock ? TimeSource.system() : time);
    double before = made.tokens();
    IllegalArgumentException bug = new IllegalArgumentException("bug");
    Ran r = run(lane, policy(lane, budget, preset, made), bug);
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.thrown).isSameAs(bug);
    assertThat(made.tokens()).as("tokens after a permanent failure").isEqualTo(before);
  }

  @ParameterizedTest(name = "{0} × {1} × {2}")
  @MethodSource("configurations")
  void anEmptyBudgetStopsTheRetryAndSaysSo(Lane lane, Budget budget, Preset preset) {
    RetryBudget made = budget.make.apply(lane.realClock ? TimeSource.system() : time);
    Resilience p = policy(lane, budget, preset, made);
    if (!budget.emptiable || p.attempts() < 2) {
      return; // nothing to empty, or nothing to retry: the other behaviours cover it
    }
    // spend it down (a feedback throttle is spent by failures, the others by retries)
    for (int i = 0; i < 100_000 && made.wouldFund(Criticality.CRITICAL_PLUS); i++) {
      made.trySpend(Criticality.CRITICAL_PLUS);
      made.recordFailure();
    }
    assertThat(made.wouldFund(Criticality.CRITICAL)).as("%s emptied", budget).isFalse();
    IOException down = new IOException("down");
    Ran r = run(lane, p, down, "never");
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.reason).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(r.thrown).isInstanceOf(CallRejectedException.class);
  }
}
