package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Nothing outlives its call (issue 19): a hedge, a timer or an attempt that ignores interrupts and
 * still holds one call's state must never reach the next call on the same thread, every late or
 * losing value reaches its own policy's discard hook exactly once, and a call ends CANCELLED only
 * when its caller cancelled it. These run on the real clock, since the defects were races between
 * real threads; latches order the threads, so no assertion depends on how long anything took.
 */
@Timeout(60)
class CallIsolationTest {
  private final ExecutorService hedges = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "isolation-hedge");
    t.setDaemon(true);
    return t;
  });

  @AfterEach
  void stop() {
    hedges.shutdownNow();
    Thread.interrupted();
  }

  /** Waits, ignoring interrupts, as a blocking java.io read does. */
  private static void awaitIgnoringInterrupts(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        if (latch.await(30, TimeUnit.SECONDS)) {
          break;
        }
        throw new AssertionError("latch never opened");
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt(); // as a stream that saw the interrupt would leave it
    }
  }

  @ParameterizedTest(name = "result style: {0}, listener: {1}")
  @ValueSource(strings = {"execute,none", "execute,listener", "run,none", "run,listener"})
  void aHedgesLateValueGoesToItsOwnDiscardHookAndNeverBecomesTheNextCallsResult(String way) throws Exception {
    boolean runStyle = way.startsWith("run");
    boolean listener = way.endsWith("listener");
    List<Object> discardedByA = new ArrayList<>();
    List<Object> discardedByB = new ArrayList<>();
    CountDownLatch hedgeRunning = new CountDownLatch(1);
    CountDownLatch releaseHedge = new CountDownLatch(1);
    CountDownLatch hedgeDiscarded = new CountDownLatch(1);
    Resilience a = Resilience.DEFAULT.withName("a").withBudget(RetryBudget.NONE)
        .withHedge(Hedge.after(Duration.ofMillis(20)).withExecutor(hedges))
        .withDiscard(v -> {
          synchronized (discardedByA) {
            discardedByA.add(v);
          }
          hedgeDiscarded.countDown();
        });
    if (listener) {
      a = a.withListener(e -> { });
    }
    Resilience b = Resilience.DEFAULT.withName("b").withBudget(RetryBudget.NONE).withDiscard(discardedByB::add);
    AtomicInteger attemptsOfA = new AtomicInteger();
    Thread caller = Thread.currentThread();
    java.util.concurrent.Callable<String> workOfA = () -> {
      if (attemptsOfA.getAndIncrement() == 0) {
        hedgeRunning.await(); // the primary answers only once the hedge runs
        return "primary";
      }
      hedgeRunning.countDown();
      awaitIgnoringInterrupts(releaseHedge); // the hedge ignores the cancel and answers late
      return "late hedge";
    };
    Object first = runStyle ? a.run(workOfA).value() : a.execute(workOfA);
    assertThat(first).isEqualTo("primary");

    java.util.concurrent.Callable<String> workOfB = () -> {
      releaseHedge.countDown(); // the hedge of a answers while b runs on the same thread
      assertThat(hedgeDiscarded.await(30, TimeUnit.SECONDS)).as("a's hedge answered").isTrue();
      return "b";
    };
    Object second = runStyle ? b.run(workOfB).value() : b.execute(workOfB);
    assertThat(second).isEqualTo("b");
    assertThat(discardedByA).containsExactly("late hedge");
    assertThat(discardedByB).isEmpty();
    assertThat(caller.isInterrupted()).as("the caller's interrupt flag").isFalse();
  }

  @Test
  void hedgedCallsThatNobodyCancelsNeverEndCancelledAndEveryLosingValueIsDiscardedOnce() throws Exception {
    // the primary and the hedge answer as close together as the threads allow, thousands of times
    int calls = 3_000;
    AtomicInteger produced = new AtomicInteger();
    AtomicInteger discarded = new AtomicInteger();
    List<StopReason> reasons = new ArrayList<>();
    Resilience p = Resilience.DEFAULT.withName("race").withBudget(RetryBudget.NONE)
        .withHedge(Hedge.after(Duration.ofNanos(1)).withExecutor(hedges))
        .withDiscard(v -> discarded.incrementAndGet())
        .withListener(e -> { });
    int succeeded = 0;
    for (int i = 0; i < calls; i++) {
      CountDownLatch both = new CountDownLatch(2);
      Outcome<String> o = p.run(() -> {
        both.countDown();
        both.await(5, TimeUnit.MILLISECONDS); // wait for the other attempt, if it comes
        produced.incrementAndGet();
        return "v";
      });
      assertThat(Thread.currentThread().isInterrupted()).as("the caller's flag after call %d", i).isFalse();
      if (o.stopReason() == StopReason.SUCCEEDED) {
        succeeded++;
      } else {
        reasons.add(o.stopReason());
      }
    }
    assertThat(reasons).as("calls that did not succeed").isEmpty();
    // a loser still running when its call ended answers later: let them all come in
    hedges.shutdown();
    assertThat(hedges.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(produced.get() - discarded.get()).as("values produced less values discarded").isEqualTo(succeeded);
  }

  @Test
  void aLateValueFromAStageThatIgnoresCancellationIsDiscardedNotDropped() throws Exception {
    dev.quell.test.VirtualTime time = dev.quell.test.VirtualTime.create();
    ConcurrentHashMap<Object, Integer> discarded = new ConcurrentHashMap<>();
    CompletableFuture<String> origin = new CompletableFuture<>();
    Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withTimeSource(time).withAttempts(1)
        .withAttemptTimeout(Duration.ofSeconds(1))
        .withDiscard(v -> discarded.merge(v, 1, Integer::sum));
    CompletableFuture<Outcome<String>> call = p.runAsync(a -> origin.minimalCompletionStage());
    time.advance(Duration.ofSeconds(2));
    assertThat(call).isDone();
    assertThat(call.join().stopReason()).isNotEqualTo(StopReason.SUCCEEDED);
    origin.complete("late");
    assertThat(discarded).containsExactly(java.util.Map.entry("late", 1));
  }

  @Test
  void aCallerWhoseThreadIsNotInterruptedIsNeverToldItWasCancelled() throws Exception {
    // many threads, hedges racing primaries, each thread making calls back to back: a signal meant
    // for one call (a wake-up, a cancel of a losing attempt) must never land in a later one
    int threads = 4;
    int each = 500;
    Resilience p = Resilience.DEFAULT.withName("mt").withBudget(RetryBudget.NONE)
        .withHedge(Hedge.after(Duration.ofNanos(1)).withExecutor(hedges))
        .withListener(e -> { });
    AtomicReference<Throwable> problem = new AtomicReference<>();
    AtomicInteger ok = new AtomicInteger();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        for (int i = 0; i < each; i++) {
          try {
            CompletionStage<?> unused = null;
            String v = p.execute(() -> "v");
            if ("v".equals(v) && !Thread.currentThread().isInterrupted()) {
              ok.incrementAndGet();
            } else {
              problem.compareAndSet(null, new AssertionError("call " + i + " returned " + v + ", interrupted="
                  + Thread.currentThread().isInterrupted()));
            }
          } catch (Exception e) {
            problem.compareAndSet(null, e);
          }
        }
      });
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    assertThat(problem.get()).isNull();
    assertThat(ok.get()).isEqualTo(threads * each);
  }
}
