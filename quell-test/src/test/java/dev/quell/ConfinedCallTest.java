package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.internal.ConfinedTime;
import dev.quell.internal.DirectStage;
import dev.quell.internal.OutcomeReceiver;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The three internal seams the simulator drives the asynchronous path through: a time source
 * confined to one thread ({@link ConfinedTime}: the call takes no lock for inputs on that thread),
 * a stage that tells the driver of its end itself ({@link DirectStage}), and work that receives the
 * call's outcome directly ({@link OutcomeReceiver}). Each must decide exactly as the ordinary path.
 */
class ConfinedCallTest {

  /** A virtual clock that declares itself confined to the thread that made it. */
  static final class Confined implements TimeSource, ConfinedTime {
    final VirtualTime virtual;
    private final Thread owner = Thread.currentThread();

    Confined(VirtualTime virtual) {
      this.virtual = virtual;
    }

    @Override
    public Thread owner() {
      return owner;
    }

    @Override
    public long nanoTime() {
      return virtual.nanoTime();
    }

    @Override
    public void sleep(long nanos) throws InterruptedException {
      virtual.sleep(nanos);
    }

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
      return virtual.schedule(task, delayNanos);
    }

    @Override
    public RandomGenerator random() {
      return virtual.random();
    }
  }

  /** A stage that tells the driver of its end itself, and counts how it was asked. */
  static final class Direct extends CompletableFuture<String> implements DirectStage {
    int whenDoneCalls;
    private @Nullable BiFunction<@Nullable Object, @Nullable Throwable, ?> callback;

    @Override
    public void whenDone(BiFunction<@Nullable Object, @Nullable Throwable, ?> c) {
      whenDoneCalls++;
      if (isDone()) {
        c.apply(isCompletedExceptionally() ? null : join(), isCompletedExceptionally() ? failure() : null);
      } else {
        callback = c;
      }
    }

    private Throwable failure() {
      try {
        join();
        throw new AssertionError("not failed");
      } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
        return e;
      }
    }

    @Override
    public boolean complete(String value) {
      boolean done = super.complete(value);
      tell(value, null);
      return done;
    }

    @Override
    public boolean completeExceptionally(Throwable t) {
      boolean done = super.completeExceptionally(t);
      tell(null, t);
      return done;
    }

    @Override
    public boolean cancel(boolean interrupt) {
      boolean done = super.cancel(interrupt);
      tell(null, new java.util.concurrent.CancellationException());
      return done;
    }

    private void tell(@Nullable Object value, @Nullable Throwable failure) {
      BiFunction<@Nullable Object, @Nullable Throwable, ?> c = callback;
      if (c != null) {
        callback = null;
        c.apply(value, failure);
      }
    }
  }

  /**
   * Attempt n ends after {@code plan[n-1]} ms: with "v" + n when the entry is positive or zero,
   * failing with an IOException after minus that many ms when negative, never when Long.MAX_VALUE.
   */
  static final class Script implements Resilience.AsyncWork<String>, OutcomeReceiver {
    final TimeSource time;
    final long[] plan;
    final boolean direct;
    final List<CompletableFuture<String>> stages = new ArrayList<>();
    final List<Outcome<?>> received = new ArrayList<>();
    final List<Long> receivedNanos = new ArrayList<>();
    boolean throwFromReceiver;

    Script(TimeSource time, boolean direct, long... plan) {
      this.time = time;
      this.direct = direct;
      this.plan = plan;
    }

    @Override
    public CompletionStage<String> start(Attempt attempt) {
      CompletableFuture<String> stage = direct ? new Direct() : new CompletableFuture<>();
      stages.add(stage);
      long p = plan[Math.min(attempt.number(), plan.length) - 1];
      if (p != Long.MAX_VALUE) {
        String value = "v" + attempt.number();
        time.schedule(() -> {
          if (p >= 0) {
            stage.complete(value);
          } else {
            stage.completeExceptionally(new IOException("failed " + value));
          }
        }, Duration.ofMillis(Math.abs(p)).toNanos());
      }
      return stage;
    }

    @Override
    public void callEnded(Outcome<?> outcome, long elapsedNanos) {
      received.add(outcome);
      receivedNanos.add(elapsedNanos);
      if (throwFromReceiver) {
        throw new IllegalStateException("a receiver that throws");
      }
    }
  }

  /** What a run shows: the outcome's every field and the events, in order. */
  record Seen(String outcome, List<ResilienceEvent.Type> events) {
    /** Without the numbered name each new budget gets ('budget-1', 'budget-2'…). */
    Seen anonymous() {
      return new Seen(outcome.replaceAll("'budget-\\d+'", "'budget'"), events);
    }
  }

  private static Seen run(Supplier<Resilience> fresh, boolean confined, boolean direct, long... plan) {
    Resilience base = fresh.get(); // its own budget and breaker: nothing carried from one run to the next
    VirtualTime virtual = VirtualTime.create(7);
    TimeSource time = confined ? new Confined(virtual) : virtual;
    List<ResilienceEvent.Type> events = new ArrayList<>();
    Resilience policy = base.withTimeSource(time).withListener(e -> events.add(e.type()));
    Script work = new Script(time, direct, plan);
    CompletableFuture<Outcome<String>> future = policy.runAsync(work);
    virtual.advance(Duration.ofMinutes(10));
    Outcome<String> o = future.join();
    assertThat(work.received).as("the receiver hears of the outcome once, the very one").containsExactly(o);
    assertThat(work.receivedNanos).containsExactly(o.elapsed().toNanos());
    return new Seen(o.stopReason() + " " + o.attempts() + " " + o.elapsed() + " " + o.value()
        + " " + o.failure().map(Throwable::getMessage).orElse(null) + " " + o.retryAfter(),
        events).anonymous();
  }

  private static void sameOnEveryPath(Supplier<Resilience> base, long... plan) {
    Seen plain = run(base, false, false, plan);
    assertThat(run(base, true, false, plan)).as("confined").isEqualTo(plain);
    assertThat(run(base, false, true, plan)).as("direct stage").isEqualTo(plain);
    assertThat(run(base, true, true, plan)).as("confined, direct stage").isEqualTo(plain);
  }

  private static final Resilience BASE = Resilience.DEFAULT.withAttemptTimeout(Duration.ofMillis(500));

  @Test
  void aSuccessAtOnce() {
    sameOnEveryPath(() -> BASE, 0);
  }

  @Test
  void failuresRetriedWithJitteredBackoffThenASuccess() {
    sameOnEveryPath(() -> BASE, -10, -20, 30);
  }

  @Test
  void attemptTimeoutsAndAnAnswerTooLateToCount() {
    sameOnEveryPath(() -> BASE, Long.MAX_VALUE, 800, 5);
  }

  @Test
  void aBudgetThatRefusesTheRetries() {
    sameOnEveryPath(() -> BASE.withBudget(RetryBudget.of(0.1, 0)), -10, -10);
  }

  @Test
  void aHedgeThatWins() {
    sameOnEveryPath(() -> BASE.withHedge(Hedge.after(Duration.ofMillis(50))), 200, 10);
  }

  @Test
  void anOpenBreakerRefusesAtOnceWithItsPause() {
    CircuitBreaker[] breakers = new CircuitBreaker[4];
    int i = 0;
    for (boolean confined : new boolean[] {false, true}) {
      for (boolean direct : new boolean[] {false, true}) {
        VirtualTime virtual = VirtualTime.create(7);
        TimeSource time = confined ? new Confined(virtual) : virtual;
        CircuitBreaker b = CircuitBreaker.of("dep", CircuitBreaker.Config.DEFAULT, time);
        b.isolate();
        breakers[i++] = b;
        Script work = new Script(time, direct, 0);
        CompletableFuture<Outcome<String>> future = BASE.withTimeSource(time).withBreaker(b).runAsync(work);
        virtual.advance(Duration.ofMinutes(1));
        Outcome<String> o = future.join();
        assertThat(o.stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
        assertThat(work.stages).as("nothing was sent").isEmpty();
        assertThat(work.received).containsExactly(o);
      }
    }
  }

  @Test
  void aDirectStageIsAskedOnceAndNoDependentStageIsHungOnIt() {
    for (boolean confined : new boolean[] {false, true}) {
      VirtualTime virtual = VirtualTime.create(7);
      TimeSource time = confined ? new Confined(virtual) : virtual;
      Script work = new Script(time, true, -10, Long.MAX_VALUE, 5);
      CompletableFuture<Outcome<String>> future = BASE.withBackoff(Backoff.NONE).withTimeSource(time).runAsync(work);
      virtual.advance(Duration.ofMinutes(1));
      assertThat(future.join().value()).isEqualTo("v3");
      assertThat(work.stages).hasSize(3).allSatisfy(s -> {
        assertThat(((Direct) s).whenDoneCalls).isEqualTo(1);
        assertThat(s.getNumberOfDependents()).isZero();
      });
      assertThat(work.stages.get(1).isCancelled()).as("the timed-out attempt's stage is cancelled").isTrue();
    }
  }

  @Test
  void aDirectStageAlreadyCompleteWhenReturnedIsHeardAtOnce() {
    for (boolean confined : new boolean[] {false, true}) {
      VirtualTime virtual = VirtualTime.create(7);
      TimeSource time = confined ? new Confined(virtual) : virtual;
      Resilience.AsyncWork<String> done = attempt -> {
        Direct d = new Direct();
        d.complete("at once");
        return d;
      };
      Outcome<String> o = BASE.withTimeSource(time).runAsync(done).join();
      assertThat(o.value()).isEqualTo("at once");
      assertThat(o.attempts()).isEqualTo(1);
    }
  }

  @Test
  void aReceiverThatThrowsLosesNothing() {
    for (boolean confined : new boolean[] {false, true}) {
      VirtualTime virtual = VirtualTime.create(7);
      TimeSource time = confined ? new Confined(virtual) : virtual;
      Script work = new Script(time, false, -10, 20);
      work.throwFromReceiver = true;
      CompletableFuture<Outcome<String>> future = BASE.withTimeSource(time).runAsync(work);
      virtual.advance(Duration.ofMinutes(1));
      assertThat(future.join().value()).as("the caller's future is complete all the same").isEqualTo("v2");
      assertThat(work.received).hasSize(1);
    }
  }

  @Test
  void aReceiverIsNotToldForExecuteAsyncWhoseFutureCarriesTheValue() {
    VirtualTime virtual = VirtualTime.create(7);
    Script work = new Script(virtual, false, 0);
    CompletableFuture<String> future = BASE.withTimeSource(virtual).executeAsync(work);
    virtual.advance(Duration.ofSeconds(1));
    assertThat(future.join()).isEqualTo("v1");
    assertThat(work.received).isEmpty();
  }

  @Test
  void aCancelFromAnotherThreadOnAConfinedCallStillTakesTheLockAndEndsItOnce() throws Exception {
    VirtualTime virtual = VirtualTime.create(7);
    Confined time = new Confined(virtual);
    List<ResilienceEvent.Type> events = new ArrayList<>();
    Script work = new Script(time, true, Long.MAX_VALUE);
    CompletableFuture<Outcome<String>> future = BASE.withAttemptTimeout(Duration.ofMinutes(1))
        .withTimeSource(time).withListener(e -> events.add(e.type())).runAsync(work);
    virtual.advance(Duration.ofMillis(100));
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      // the owner is idle meanwhile: the one input from elsewhere never races with its own
      assertThat(other.submit(() -> future.cancel(true)).get(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      other.shutdownNow();
    }
    virtual.advance(Duration.ofMinutes(5));
    assertThat(future.isCancelled()).isTrue();
    assertThat(work.stages.get(0).isCancelled()).as("the attempt in flight is stopped").isTrue();
    assertThat(events).containsExactly(ResilienceEvent.Type.ATTEMPT_STARTED, ResilienceEvent.Type.ATTEMPT_ENDED,
        ResilienceEvent.Type.CANCELLED);
  }
}
