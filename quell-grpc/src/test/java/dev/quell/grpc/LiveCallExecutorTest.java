package dev.quell.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** The executor of a call's attempts: the caller's while it listens, then the fallback; every task runs once. */
class LiveCallExecutorTest {

  /**
   * Like grpc-java's ThreadlessExecutor: runs tasks only when its owner drains it, and after
   * {@link #shutdown} silently drops whatever it is given.
   */
  private static final class Threadless implements java.util.concurrent.Executor {
    final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
    volatile boolean shutdown;

    @Override
    public void execute(Runnable task) {
      queue.add(task);
      if (shutdown) {
        queue.remove(task);
      }
    }

    void drain() {
      Runnable r;
      while ((r = queue.poll()) != null) {
        r.run();
      }
    }

    void shutdown() {
      shutdown = true;
      drain();
    }
  }

  @Test
  void whileLiveTasksRunOnTheCallersExecutor() {
    Threadless caller = new Threadless();
    List<String> ran = new ArrayList<>();
    LiveCallExecutor live = new LiveCallExecutor(caller, task -> ran.add("after"));

    live.execute(() -> ran.add("task"));
    assertThat(ran).isEmpty();
    caller.drain();

    assertThat(ran).containsExactly("task");
  }

  @Test
  void onRetirementWhatTheCallerWillNeverRunRunsOnTheFallbackOnce() {
    Threadless caller = new Threadless();
    List<Runnable> fallback = new ArrayList<>();
    LiveCallExecutor live = new LiveCallExecutor(caller, fallback::add);
    int[] runs = new int[2];
    live.execute(() -> runs[0]++);

    live.retire();
    caller.shutdown(); // the caller drains what it had, then drops the rest
    live.execute(() -> runs[1]++);
    fallback.forEach(Runnable::run);

    assertThat(runs).as("the waiting task once, though both executors had it; the later one on the fallback")
        .containsExactly(1, 1);
  }

  @Test
  void aTaskTheCallersExecutorRejectsRunsOnTheFallback() {
    List<Runnable> fallback = new ArrayList<>();
    LiveCallExecutor live = new LiveCallExecutor(task -> {
      throw new RejectedExecutionException("shut down");
    }, fallback::add);
    int[] runs = new int[1];

    live.execute(() -> runs[0]++);
    fallback.forEach(Runnable::run);

    assertThat(runs[0]).isEqualTo(1);
  }

  /**
   * Transport threads hand tasks over while the call retires and the caller stops draining, as a
   * blocking call's loser closes just as the winner answers: every task runs exactly once.
   */
  @RepeatedTest(20)
  void underRacingSubmissionsEveryTaskRunsExactlyOnce() throws Exception {
    int threads = 4;
    int perThread = 500;
    Threadless caller = new Threadless();
    ExecutorService fallback = Executors.newFixedThreadPool(2);
    ExecutorService transport = Executors.newFixedThreadPool(threads);
    LiveCallExecutor live = new LiveCallExecutor(caller, fallback);
    AtomicIntegerArray runs = new AtomicIntegerArray(threads * perThread);
    AtomicBoolean answered = new AtomicBoolean();
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<?>> submitting = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int base = t * perThread;
        submitting.add(transport.submit(() -> {
          go.await();
          for (int i = 0; i < perThread; i++) {
            int task = base + i;
            live.execute(() -> runs.incrementAndGet(task));
          }
          return null;
        }));
      }
      Thread callerThread = new Thread(() -> {
        while (!answered.get()) {
          caller.drain();
          Thread.onSpinWait();
        }
        caller.shutdown();
      });
      callerThread.start();
      go.countDown();
      // the call's close: retire first, then the caller hears its answer and stops draining
      while (runs.get(0) == 0 && runs.get(perThread) == 0) {
        Thread.onSpinWait();
      }
      live.retire();
      answered.set(true);
      callerThread.join(TimeUnit.SECONDS.toMillis(10));
      for (Future<?> f : submitting) {
        f.get(10, TimeUnit.SECONDS);
      }
    } finally {
      transport.shutdown();
      assertThat(transport.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      fallback.shutdown();
      assertThat(fallback.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    for (int i = 0; i < runs.length(); i++) {
      assertThat(runs.get(i)).as("task " + i).isEqualTo(1);
    }
  }
}
