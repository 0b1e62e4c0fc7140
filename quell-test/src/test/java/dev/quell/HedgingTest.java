package dev.quell;

import static dev.quell.Driver.Step.fail;
import static dev.quell.Driver.Step.ok;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Driver.Result;
import dev.quell.ResilienceEvent.Type;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hedging's rules, asynchronously on a virtual clock (deterministic: one thread runs every timer)
 * and synchronously on the real clock, where the first attempt runs on the caller's thread and
 * hedges on an executor (driven by latches, never by sleeping).
 */
class HedgingTest {
  private final VirtualTime time = VirtualTime.create();

  private static Resilience hedged(Hedge hedge) {
    return Resilience.DEFAULT.withBudget(RetryBudget.NONE).withBackoff(Backoff.NONE).withHedge(hedge);
  }

  private static List<Type> types(Result r) {
    return r.events.stream().map(ResilienceEvent::type).collect(Collectors.toList());
  }

  // ---------------------------------------------------------------- async, virtual clock

  @Test
  void aSlowAttemptIsHedgedAfterTheDelayAndTheFirstAnswerWins() {
    Result r = Driver.ASYNC.run(hedged(Hedge.after(Duration.ofMillis(100))), time,
        ok("slow").after(Duration.ofSeconds(1)), ok("fast").after(Duration.ofMillis(50)));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("fast");
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(150));
    assertThat(r.attempts).as("attempts counts every attempt sent").isEqualTo(2);
    assertThat(types(r)).containsExactly(Type.ATTEMPT_STARTED, Type.ATTEMPT_STARTED, Type.HEDGE_STARTED,
        Type.ATTEMPT_ENDED, Type.HEDGE_WON, Type.ATTEMPT_ENDED, Type.HEDGE_DISCARDED, Type.SUCCEEDED);
  }

  @Test
  void anAnswerBeforeTheDelaySendsNoHedge() {
    Result r = Driver.ASYNC.run(hedged(Hedge.after(Duration.ofMillis(100))), time,
        ok("quick").after(Duration.ofMillis(40)));
    assertThat(r.value).isEqualTo("quick");
    assertThat(r.attempts).isEqualTo(1);
    assertThat(types(r)).doesNotContain(Type.HEDGE_STARTED);
    assertThat(time.pendingTimers()).as("the hedge timer is not left behind to fire").isLessThanOrEqualTo(1);
  }

  @Test
  void aTransientFailureSendsTheNextHedgeAtOnceNotAfterTheDelay() {
    // grpc-java#10145: a non-fatal status must skip the hedging delay
    Result r = Driver.ASYNC.run(hedged(Hedge.after(Duration.ofSeconds(10))), time,
        fail(new IOException("reset")).after(Duration.ofMillis(20)), ok("v").after(Duration.ofMillis(30)));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(50));
    assertThat(r.ofType(Type.HEDGE_STARTED)).hasSize(1);
  }

  @Test
  void aThrottledHedgeStopsHedgingAndDoesNotLeaveTheCallHangingToItsDeadline() {
    // grpc-java#7222: a hedge that was throttled left the call waiting for its deadline
    Resilience p = hedged(Hedge.after(Duration.ofMillis(100)).withMaxHedges(3))
        .withAttempts(5)
        .withClassifier((result, failure) -> failure instanceof IllegalStateException ? Verdict.THROTTLED
            : failure != null ? Verdict.TRANSIENT : Verdict.OK);
    Result r = Driver.ASYNC.run(p, time,
        fail(new IOException("primary fails")).after(Duration.ofMillis(500)),
        fail(new IllegalStateException("pushback")).after(Duration.ofMillis(10)));
    assertThat(r.ofType(Type.HEDGE_STARTED)).as("no hedge after the pushback").hasSize(1);
    assertThat(r.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(r.elapsed).as("ends when the primary fails, not at the 30 s deadline").isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void whenEveryAttemptFailsTheCallEndsWithoutRetriesUnlessAskedTo() {
    Result ended = Driver.ASYNC.run(hedged(Hedge.after(Duration.ofMillis(100))), time,
        fail(new IOException("one")).after(Duration.ofMillis(300)), fail(new IOException("two")).after(Duration.ofMillis(300)));
    assertThat(ended.reason).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(ended.attempts).isEqualTo(2);

    VirtualTime t2 = VirtualTime.create();
    Result retried = Driver.ASYNC.run(hedged(Hedge.after(Duration.ofMillis(100)).withRetries(true)), t2,
        fail(new IOException("one")).after(Duration.ofMillis(300)), fail(new IOException("two")).after(Duration.ofMillis(300)),
        ok("third"));
    assertThat(retried.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(retried.attempts).as("the retry fits in the 3 attempts").isEqualTo(3);
  }

  @Test
  void anUnfundedHedgeIsSuppressedAndTheCallGoesOn() {
    RetryBudget dry = RetryBudget.of(0.1, 0, time);
    assertThat(dry.trySpend()).isTrue();
    Result r = Driver.ASYNC.run(hedged(Hedge.after(Duration.ofMillis(100))).withBudget(dry), time,
        ok("slow").after(Duration.ofSeconds(1)));
    assertThat(r.reason).isEqualTo(StopReason.SUCCEEDED);
    assertThat(r.value).isEqualTo("slow");
    assertThat(r.attempts).isEqualTo(1);
    assertThat(r.ofType(Type.HEDGE_SUPPRESSED)).hasSize(1);
  }

  @Test
  void hedgesSpendFromTheSameBudgetAsRetries() {
    RetryBudget budget = RetryBudget.of(0.1, 0, time); // one token, no floor
    Driver.ASYNC.run(hedged(Hedge.after(Duration.ofMillis(100))).withBudget(budget), time,
        ok("slow").after(Duration.ofSeconds(1)), ok("fast").after(Duration.ofMillis(10)));
    // the hedge spent the token; the winning success deposited a tenth of one
    assertThat(budget.tokens()).isCloseTo(0.1, org.assertj.core.api.Assertions.within(1e-9));
  }

  @Test
  void sheddableWorkIsNeverHedged() throws Exception {
    ResilienceContext sheddable = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
    Resilience p = hedged(Hedge.after(Duration.ofMillis(100))).withBudget(RetryBudget.of(0.1, 3, time))
        .withAmbientCriticality(true);
    Result r = sheddable.call(() -> Driver.ASYNC.run(p, time, ok("slow").after(Duration.ofSeconds(1))));
    assertThat(r.attempts).isEqualTo(1);
    assertThat(types(r)).doesNotContain(Type.HEDGE_STARTED, Type.HEDGE_SUPPRESSED);
  }

  @Test
  void theDeadlineCoversEveryAttemptHedgesIncluded() {
    Resilience p = hedged(Hedge.after(Duration.ofMillis(100)).withMaxHedges(2)).withAttempts(3)
        .withDeadline(Duration.ofMillis(250));
    Result r = Driver.ASYNC.run(p, time, ok("a").after(Duration.ofSeconds(5)), ok("b").after(Duration.ofSeconds(5)),
        ok("c").after(Duration.ofSeconds(5)));
    assertThat(r.reason).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(r.elapsed).isEqualTo(Duration.ofMillis(250));
    assertThat(r.attempts).isEqualTo(3);
  }

  @Test
  void aLosersValueThatArrivesAnywayIsDiscarded() {
    List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<String> loser = new CompletableFuture<>() {
      @Override
      public boolean cancel(boolean mayInterrupt) {
        return false; // work that ignores cancellation and answers anyway
      }
    };
    AtomicInteger n = new AtomicInteger();
    Resilience p = hedged(Hedge.after(Duration.ofMillis(100))).withTimeSource(time).withDiscard(discarded::add);
    CompletableFuture<String> call = p.executeAsync(() -> n.getAndIncrement() == 0 ? loser
        : CompletableFuture.completedFuture("winner"));
    time.advance(Duration.ofMillis(100));
    assertThat(call.join()).isEqualTo("winner");
    loser.complete("late");
    assertThat(discarded).containsExactly("late");
  }

  @Test
  void byDefaultALosersAutoCloseableIsClosed() {
    AtomicBoolean closed = new AtomicBoolean();
    AutoCloseable body = () -> closed.set(true);
    CompletableFuture<AutoCloseable> loser = new CompletableFuture<>() {
      @Override
      public boolean cancel(boolean mayInterrupt) {
        return false;
      }
    };
    AtomicInteger n = new AtomicInteger();
    Resilience p = hedged(Hedge.after(Duration.ofMillis(100))).withTimeSource(time);
    CompletableFuture<AutoCloseable> call = p.executeAsync(() -> n.getAndIncrement() == 0 ? loser
        : CompletableFuture.completedFuture(() -> { }));
    time.advance(Duration.ofMillis(100));
    call.join();
    loser.complete(body);
    assertThat(closed).isTrue();
  }

  // ---------------------------------------------------------------- sync, real clock

  @Test
  @Timeout(30)
  void synchronouslyAHedgeThatWinsInterruptsThePrimaryAndNoInterruptLeaks() throws Exception {
    CountDownLatch primaryInterrupted = new CountDownLatch(1);
    List<String> threads = Collections.synchronizedList(new ArrayList<>());
    Thread caller = Thread.currentThread();
    String value = hedged(Hedge.after(Duration.ZERO)).execute(() -> {
      threads.add(Thread.currentThread().getName());
      if (Thread.currentThread() == caller) {
        try {
          new CountDownLatch(1).await(); // the primary hangs until the hedge's win cancels it
        } catch (InterruptedException e) {
          primaryInterrupted.countDown();
          throw e;
        }
      }
      return "hedge";
    });
    assertThat(value).isEqualTo("hedge");
    assertThat(primaryInterrupted.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(Thread.currentThread().isInterrupted()).as("the cancel's interrupt never leaks").isFalse();
    assertThat(threads).hasSize(2).contains(caller.getName()).anyMatch(n -> n.startsWith("quell-hedge-"));
  }

  @Test
  @Timeout(30)
  void synchronouslyThePrimaryWinsAndTheHungHedgeIsInterrupted() throws Exception {
    CountDownLatch hedgeRunning = new CountDownLatch(1);
    CountDownLatch hedgeInterrupted = new CountDownLatch(1);
    AtomicBoolean hedgeThreadClean = new AtomicBoolean();
    Thread caller = Thread.currentThread();
    Resilience p = hedged(Hedge.after(Duration.ZERO).withExecutor(task -> new Thread(() -> {
      task.run();
      hedgeThreadClean.set(!Thread.currentThread().isInterrupted());
      hedgeInterrupted.countDown();
    }).start()));
    String value = p.execute(() -> {
      if (Thread.currentThread() == caller) {
        assertThat(hedgeRunning.await(10, TimeUnit.SECONDS)).isTrue(); // the primary answers once the hedge runs
        return "primary";
      }
      hedgeRunning.countDown();
      new CountDownLatch(1).await(); // the hedge hangs until the primary's win cancels it
      return "hedge";
    });
    assertThat(value).isEqualTo("primary");
    assertThat(hedgeInterrupted.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(hedgeThreadClean).as("the executor's thread gets its interrupt back").isTrue();
  }

  @Test
  @Timeout(30)
  void synchronouslyEveryAttemptFailingEndsTheCallOnce() throws Exception {
    List<ResilienceEvent> events = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch both = new CountDownLatch(2);
    Outcome<String> o = hedged(Hedge.after(Duration.ZERO)).withListener(events::add).run(() -> {
      both.countDown();
      both.await(10, TimeUnit.SECONDS); // both attempts run before either fails
      throw new IOException("down");
    });
    assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(o.attempts()).isEqualTo(2);
    assertThat(events.stream().filter(ResilienceEvent::isTerminal)).hasSize(1);
    assertThat(events.get(events.size() - 1).isTerminal()).isTrue();
  }

  @Test
  @Timeout(60)
  void onTheHedgedFastPathAHedgeDueWhileTheFirstAttemptRunsTakesTheCallOver() throws Exception {
    Thread caller = Thread.currentThread();
    Resilience p = hedged(Hedge.after(Duration.ofMillis(5))); // nothing listens: the hedged fast path
    String value = p.execute(() -> {
      if (Thread.currentThread() == caller) {
        new CountDownLatch(1).await(); // hangs until the hedge's win cancels it
      }
      return "hedge";
    });
    assertThat(value).isEqualTo("hedge");
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    assertThat(p.execute(() -> "quick")).as("the next call starts clean").isEqualTo("quick");
  }

  @Test
  @Timeout(60)
  void onTheHedgedFastPathAMeasuredHedgeLearnsFromEverySuccessAndFiresAtItsLiveDelay() throws Exception {
    Thread caller = Thread.currentThread();
    // nothing listens, so the hedged fast path runs these calls; quick successes must still feed
    // the histogram the delay is read from, or the delay would stay at its 10 s starting value
    // the delay before enough samples is the attempt timeout, which here is the whole deadline: a
    // call can only be answered by a hedge if the delay has come down to what was measured
    Resilience p = hedged(Hedge.maxExtraLoad(0.05).withFloor(Duration.ofMillis(5)))
        .withAttemptTimeout(Duration.ofSeconds(1))
        .withDeadline(Duration.ofSeconds(1));
    int calls = 0;
    long since = System.nanoTime();
    // calls read the live delay as the histogram last worked it out, at most 100 ms ago: keep calling past that
    while (calls < 200 || System.nanoTime() - since < 150_000_000L) {
      assertThat(p.execute(() -> "quick")).isEqualTo("quick");
      calls++;
    }
    MeasuredTiming.Stats stats = p.timing().orElseThrow();
    assertThat(stats.samples()).as("every success measured").isEqualTo(calls);
    assertThat(stats.hedgeDelay()).as("quick answers: the delay is down at its floor").hasValue(Duration.ofMillis(5));

    String value = p.execute(() -> {
      if (Thread.currentThread() == caller) {
        new CountDownLatch(1).await(); // hangs: only a hedge sent before the deadline answers
      }
      return "hedge";
    });
    assertThat(value).isEqualTo("hedge");
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    assertThat(p.timing().orElseThrow().samples()).as("the winning hedge measured too").isEqualTo(calls + 1L);
  }

  /** The hedged fast path (nothing listens) and the core's path (a listener) for the same policy. */
  private static List<Resilience> bothPaths(Resilience p) {
    return List.of(p, p.withListener(e -> { }));
  }

  @Test
  @Timeout(60)
  void onBothPathsAFailureBeforeTheDelaySendsTheHedgeAtOnce() throws Exception {
    for (Resilience p : bothPaths(hedged(Hedge.after(Duration.ofSeconds(30))))) {
      Thread caller = Thread.currentThread();
      String value = p.execute(() -> {
        if (Thread.currentThread() == caller) {
          throw new IOException("reset"); // transient: the next hedge goes now, not in 30 s
        }
        return "hedge";
      });
      assertThat(value).as(p.toString()).isEqualTo("hedge");
      assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }
  }

  @Test
  @Timeout(60)
  void onBothPathsAResultTheClassifierRejectsSendsTheHedgeAtOnce() throws Exception {
    for (Resilience base : bothPaths(hedged(Hedge.after(Duration.ofSeconds(30))))) {
      Resilience p = base.withClassifier((r, f) -> f != null || "busy".equals(r) ? Verdict.TRANSIENT : Verdict.OK);
      Thread caller = Thread.currentThread();
      String value = p.execute(() -> Thread.currentThread() == caller ? "busy" : "hedge");
      assertThat(value).as(p.toString()).isEqualTo("hedge");
    }
  }

  @Test
  @Timeout(60)
  void onBothPathsAnAttemptTimeoutBeforeTheHedgeDelayEndsTheAttemptAndTheCallsAgree() throws Exception {
    List<String> outcomes = new ArrayList<>();
    for (Resilience p : bothPaths(hedged(Hedge.after(Duration.ofSeconds(30))).withAttemptTimeout(Duration.ofMillis(20)))) {
      AtomicInteger attempts = new AtomicInteger();
      String outcome;
      try {
        outcome = p.execute(() -> {
          if (attempts.getAndIncrement() == 0) {
            new CountDownLatch(1).await(); // hangs past its 20 ms timeout, long before the 30 s hedge delay
          }
          return "next";
        });
      } catch (AttemptTimeoutException e) {
        outcome = "timed out";
      }
      outcomes.add(outcome + " after " + attempts.get());
      assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }
    assertThat(outcomes.get(0)).as("the fast path decides as the core does").isEqualTo(outcomes.get(1));
    assertThat(outcomes.get(0)).isEqualTo("next after 2");
  }

  @Test
  void successesOnTheHedgedPathDepositIntoTheBudget() throws Exception {
    RetryBudget budget = RetryBudget.of(0.5, 0); // no floor: the tokens are exactly what was deposited
    while (budget.trySpend()) {
      // empty it
    }
    Resilience p = Resilience.DEFAULT.withBudget(budget).withHedge(Hedge.after(Duration.ofSeconds(30)));
    p.execute(() -> "ok");
    assertThat(budget.tokens()).isEqualTo(0.5);
    p.execute(() -> "ok");
    assertThat(budget.tokens()).isEqualTo(1.0);
  }

  @Test
  @Timeout(60)
  void aMeasuredHedgeStillLearningWaitsOutItsStartingDelay() throws Exception {
    AtomicInteger handedOver = new AtomicInteger();
    java.util.concurrent.Executor counting = task -> {
      handedOver.incrementAndGet();
      new Thread(task).start();
    };
    // no samples yet: the delay is the attempt timeout (10 s), so an attempt of 20 ms sends nothing
    Resilience p = hedged(Hedge.maxExtraLoad(0.05).withExecutor(counting));
    String value = p.execute(() -> {
      long until = System.nanoTime() + 20_000_000L; // at least 20 ms: several of the watchdog's ticks
      while (System.nanoTime() - until < 0) {
        Thread.onSpinWait();
      }
      return "primary";
    });
    assertThat(value).isEqualTo("primary");
    assertThat(handedOver).as("no hedge handed to the executor").hasValue(0);
    assertThat(p.timing().orElseThrow().samples()).isEqualTo(1);
  }

  @Test
  @Timeout(120)
  void racesBetweenAnAnswerAndItsHedgeEndEveryCallOnceAndLeakNoInterrupt() throws Exception {
    Thread caller = Thread.currentThread();
    Resilience p = hedged(Hedge.after(Duration.ofMillis(1)));
    java.util.Random random = new java.util.Random(7);
    int answeredByHedge = 0;
    for (int i = 0; i < 1500; i++) {
      long spin = random.nextInt(3_000_000); // around the hedge delay and the watchdog's tick
      String v = p.execute(() -> {
        if (Thread.currentThread() == caller) {
          long until = System.nanoTime() + spin;
          while (System.nanoTime() - until < 0) {
            if (Thread.currentThread().isInterrupted()) {
              throw new InterruptedException("lost the race");
            }
            Thread.onSpinWait();
          }
          return "primary";
        }
        return "hedge";
      });
      assertThat(v).isIn("primary", "hedge");
      assertThat(Thread.currentThread().isInterrupted()).as("call %d", i).isFalse();
      if (v.equals("hedge")) {
        answeredByHedge++;
      }
    }
    assertThat(answeredByHedge).as("some calls were taken over").isPositive();
  }
}
