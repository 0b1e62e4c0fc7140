package dev.quell.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs independent simulations on a few threads of its own and hands back their results in the order
 * of the tasks, so the outcome never depends on which thread ran what. The threads end with the batch.
 */
final class Batch {
  private static final AtomicInteger POOLS = new AtomicInteger();

  private Batch() {}

  static <T> List<T> run(List<Callable<T>> tasks, int threads) {
    List<T> results = new ArrayList<>(tasks.size());
    if (threads <= 1 || tasks.size() <= 1) {
      for (Callable<T> task : tasks) {
        results.add(call(task));
      }
      return results;
    }
    int pool = POOLS.incrementAndGet();
    AtomicInteger count = new AtomicInteger();
    ThreadFactory factory = r -> {
      Thread t = new Thread(r, "quell-sim-" + pool + "-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
    ExecutorService executor = Executors.newFixedThreadPool(threads, factory);
    try {
      List<Future<T>> futures = new ArrayList<>(tasks.size());
      for (Callable<T> task : tasks) {
        futures.add(executor.submit(task));
      }
      for (Future<T> f : futures) {
        results.add(f.get());
      }
      return results;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the simulations ran; they were stopped", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IllegalStateException(cause);
    } finally {
      executor.shutdownNow(); // stops runs still going when one failed or the caller was interrupted
      try {
        executor.awaitTermination(1, TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static <T> T call(Callable<T> task) {
    try {
      return task.call();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
