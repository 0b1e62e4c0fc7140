package dev.quell.grpc;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Runs one call's tasks one at a time, in the order they were submitted, on whichever thread
 * submits while the queue is idle. A task submitted by a task that is running is queued behind it,
 * never run inside it, so state touched only by tasks needs no lock, and a transport that calls a
 * listener inline (a direct executor) cannot re-enter the machinery.
 *
 * <p>{@link #execute} drains on the calling thread (the application's thread, or a transport
 * callback thread); {@link #executeElsewhere} hands the drain to an executor, for tasks submitted
 * from threads that must not run application code (the policy's timer thread).
 */
final class SerialQueue {
  private static final System.Logger LOG = System.getLogger("dev.quell.grpc");

  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean running = new AtomicBoolean();
  private volatile @Nullable Thread drainer;

  /** Queues {@code task} and, unless the queue is already running, runs it (and what follows) here. */
  void execute(Runnable task) {
    tasks.add(task);
    if (drainer != Thread.currentThread()) {
      drain();
    }
  }

  /** Queues {@code task}; unless this thread is draining already, the drain runs on {@code executor}. */
  void executeElsewhere(Runnable task, Executor executor) {
    tasks.add(task);
    if (drainer != Thread.currentThread()) {
      executor.execute(this::drain);
    }
  }

  /** True while the calling thread is running this queue's tasks. */
  boolean isDrainingHere() {
    return drainer == Thread.currentThread();
  }

  private void drain() {
    while (!tasks.isEmpty() && running.compareAndSet(false, true)) {
      drainer = Thread.currentThread();
      try {
        Runnable task;
        while ((task = tasks.poll()) != null) {
          try {
            task.run();
          } catch (RuntimeException | Error e) {
            // a task that throws must not strand the ones behind it
            LOG.log(System.Logger.Level.WARNING, "quell.grpc.internal.error: a call's task failed", e);
          }
        }
      } finally {
        drainer = null;
        running.set(false);
      }
    }
  }
}
