package dev.quell.sim.internal;

import dev.quell.TimeSource;
import dev.quell.internal.Internal;
import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * The simulation's clock: a discrete-event loop behind the {@link TimeSource} interface. Virtual time
 * jumps from one event to the next; {@link #schedule} puts an event on a priority queue ordered by
 * (due time, order of scheduling), so events due at the same instant run in the order they were
 * scheduled and a run repeats exactly.
 *
 * <p>Confined to one thread: the thread that made it runs the loop and every callback, and nothing
 * else may schedule on it. That is what makes the simulation deterministic: completing a
 * {@code CompletableFuture} from an event runs its dependents at once, on this thread, at this
 * virtual instant. {@link #sleep} is refused: the simulator drives only the asynchronous path, and a
 * blocking sleep in the middle of the loop would be a bug.
 */
@Internal
public final class SimClock implements TimeSource {
  private static final int PENDING = 0;
  private static final int DONE = 1;
  private static final int CANCELLED = 2;

  // a binary min-heap on (due, order), kept in parallel arrays so that comparisons read primitives
  private long[] due = new long[1024];
  private long[] order = new long[1024];
  private Event[] heap = new Event[1024];
  private int size;
  private final RandomGenerator random;
  private final Thread owner;
  private long now;
  private long sequence;
  private long fired;

  /** A clock at zero whose {@link #random()} is {@code random}. */
  public SimClock(RandomGenerator random) {
    this.random = random;
    this.owner = Thread.currentThread();
  }

  @Override
  public long nanoTime() {
    return now;
  }

  /** Always throws: the simulation runs asynchronous calls only, which never sleep. */
  @Override
  public void sleep(long nanos) {
    throw new UnsupportedOperationException(
        "the simulation clock drives asynchronous calls only (Resilience.runAsync); nothing may block on it");
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException("the simulation clock belongs to thread " + owner.getName()
          + "; it cannot be scheduled on from " + Thread.currentThread().getName());
    }
    long at = now + Math.max(0, delayNanos);
    if (at < now) {
      at = Long.MAX_VALUE; // saturate
    }
    Event e = new Event(task);
    push(at, sequence++, e);
    return e;
  }

  @Override
  public RandomGenerator random() {
    return random;
  }

  /**
   * Runs events in order, advancing the clock to each, until none is left that falls due at or before
   * {@code limit}, or until {@code stop} says so after an event.
   */
  public void run(long limit, StopCondition stop) {
    while (size > 0 && due[0] <= limit) {
      long at = due[0];
      Event next = pop();
      if (next.state != PENDING) {
        continue; // cancelled timers stay queued until they fall due; skipping them is cheaper than removing
      }
      now = at;
      next.state = DONE;
      fired++;
      next.task.run();
      if (stop.stop()) {
        return;
      }
    }
  }

  private void push(long at, long seq, Event e) {
    if (size == heap.length) {
      int grown = size * 2;
      due = Arrays.copyOf(due, grown);
      order = Arrays.copyOf(order, grown);
      heap = Arrays.copyOf(heap, grown);
    }
    int i = size++;
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (due[parent] < at || due[parent] == at && order[parent] < seq) {
        break;
      }
      due[i] = due[parent];
      order[i] = order[parent];
      heap[i] = heap[parent];
      i = parent;
    }
    due[i] = at;
    order[i] = seq;
    heap[i] = e;
  }

  private Event pop() {
    Event top = heap[0];
    int last = --size;
    long at = due[last];
    long seq = order[last];
    Event e = heap[last];
    heap[last] = null;
    int i = 0;
    int half = last >>> 1;
    while (i < half) {
      int child = 2 * i + 1;
      int right = child + 1;
      if (right < last && (due[right] < due[child] || due[right] == due[child] && order[right] < order[child])) {
        child = right;
      }
      if (at < due[child] || at == due[child] && seq < order[child]) {
        break;
      }
      due[i] = due[child];
      order[i] = order[child];
      heap[i] = heap[child];
      i = child;
    }
    if (last > 0) {
      due[i] = at;
      order[i] = seq;
      heap[i] = e;
    }
    return top;
  }

  /** Events run so far. */
  public long eventsRun() {
    return fired;
  }

  /** Says when {@link #run} should stop early. */
  @FunctionalInterface
  public interface StopCondition {
    /** Checked after each event. */
    boolean stop();
  }

  private static final class Event implements Scheduled {
    final Runnable task;
    int state;

    Event(Runnable task) {
      this.task = task;
    }

    @Override
    public boolean cancel() {
      if (state == PENDING) {
        state = CANCELLED;
        return true;
      }
      return false;
    }
  }
}
