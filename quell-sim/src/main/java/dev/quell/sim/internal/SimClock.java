package dev.quell.sim.internal;

import dev.quell.TimeSource;
import dev.quell.internal.Internal;
import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * The simulation's clock: a discrete-event loop behind the {@link TimeSource} interface. Virtual time
 * jumps from one event to the next; events are ordered by (due time, order of scheduling), so events
 * due at the same instant run in the order they were scheduled and a run repeats exactly.
 *
 * <p>Confined to one thread: the thread that made it runs the loop and every callback, and nothing
 * else may schedule on it. That is what makes the simulation deterministic: completing a
 * {@code CompletableFuture} from an event runs its dependents at once, on this thread, at this
 * virtual instant. {@link #sleep} is refused: the simulator drives only the asynchronous path, and a
 * blocking sleep in the middle of the loop would be a bug.
 *
 * <p>Built for the simulator's load, where nearly every attempt arms a timeout that its answer then
 * cancels. The queue is a four-ary min-heap over primitive arrays; an event is a slot number, so moving
 * it touches no object. A cancelled event leaves the heap at once, so the heap holds only what can
 * still run (a few dozen events in the reference scenario, not every timeout armed in the last
 * 160 ms). Events the simulator posts for itself ({@link #post}) need no handle and allocate nothing.
 */
@Internal
public final class SimClock implements TimeSource {
  // the heap, by position
  private long[] due = new long[256];
  private long[] order = new long[256];
  private int[] slotAt = new int[256];
  private int size;
  // the events, by slot
  private Runnable[] task = new Runnable[256];
  private int[] position = new int[256];
  /** Bumped each time a slot is freed, so a stale handle cannot cancel the slot's next event. */
  private int[] generation = new int[256];
  private int[] free = new int[256];
  private int freeCount;
  private int slots;

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
    int slot = add(task, delayNanos);
    return new Handle(this, slot, generation[slot]);
  }

  /** Schedules {@code task} after {@code delayNanos}, with no way to cancel it. */
  public void post(Runnable task, long delayNanos) {
    add(task, delayNanos);
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
      now = due[0];
      int slot = slotAt[0];
      removeAt(0);
      Runnable next = task[slot];
      release(slot);
      fired++;
      next.run();
      if (stop.stop()) {
        return;
      }
    }
  }

  /** Events run so far. */
  public long eventsRun() {
    return fired;
  }

  /** Events waiting to run. */
  public int pending() {
    return size;
  }

  private int add(Runnable t, long delayNanos) {
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException("the simulation clock belongs to thread " + owner.getName()
          + "; it cannot be scheduled on from " + Thread.currentThread().getName());
    }
    long at = now + Math.max(0, delayNanos);
    if (at < now) {
      at = Long.MAX_VALUE; // saturate
    }
    int slot = claim();
    task[slot] = t;
    if (size == due.length) {
      int grown = size * 2;
      due = Arrays.copyOf(due, grown);
      order = Arrays.copyOf(order, grown);
      slotAt = Arrays.copyOf(slotAt, grown);
    }
    int i = size++;
    siftUp(i, at, sequence++, slot);
    return slot;
  }

  private int claim() {
    if (freeCount > 0) {
      return free[--freeCount];
    }
    if (slots == task.length) {
      int grown = slots * 2;
      task = Arrays.copyOf(task, grown);
      position = Arrays.copyOf(position, grown);
      generation = Arrays.copyOf(generation, grown);
      free = Arrays.copyOf(free, grown);
    }
    return slots++;
  }

  private void release(int slot) {
    task[slot] = null;
    generation[slot]++; // wraps after 2^32 reuses of one slot; no handle lives that long
    free[freeCount++] = slot;
  }

  private boolean cancel(int slot, int gen) {
    if (generation[slot] != gen) {
      return false; // ran or was cancelled already; the slot may hold another event now
    }
    removeAt(position[slot]);
    release(slot);
    return true;
  }

  /** Takes the entry at heap position {@code i} out, keeping the heap ordered. */
  private void removeAt(int i) {
    int last = --size;
    if (i == last) {
      return;
    }
    long at = due[last];
    long seq = order[last];
    int slot = slotAt[last];
    if (i > 0 && before(at, seq, due[(i - 1) >>> 2], order[(i - 1) >>> 2])) {
      siftUp(i, at, seq, slot);
    } else {
      siftDown(i, at, seq, slot);
    }
  }

  private static boolean before(long at, long seq, long otherAt, long otherSeq) {
    return at < otherAt || at == otherAt && seq < otherSeq;
  }

  private void siftUp(int i, long at, long seq, int slot) {
    while (i > 0) {
      int parent = (i - 1) >>> 2;
      if (!before(at, seq, due[parent], order[parent])) {
        break;
      }
      place(i, due[parent], order[parent], slotAt[parent]);
      i = parent;
    }
    place(i, at, seq, slot);
  }

  private void siftDown(int i, long at, long seq, int slot) {
    // a four-ary heap: half the depth of a binary one, and the four children share a cache line or two
    while (true) {
      int first = 4 * i + 1;
      if (first >= size) {
        break;
      }
      int child = first;
      int last = Math.min(first + 4, size);
      for (int c = first + 1; c < last; c++) {
        if (before(due[c], order[c], due[child], order[child])) {
          child = c;
        }
      }
      if (!before(due[child], order[child], at, seq)) {
        break;
      }
      place(i, due[child], order[child], slotAt[child]);
      i = child;
    }
    place(i, at, seq, slot);
  }

  private void place(int i, long at, long seq, int slot) {
    due[i] = at;
    order[i] = seq;
    slotAt[i] = slot;
    position[slot] = i;
  }

  /** Says when {@link #run} should stop early. */
  @FunctionalInterface
  public interface StopCondition {
    /** Checked after each event. */
    boolean stop();
  }

  /** What {@link #schedule} hands out: cancels its own event, and no later occupant of the slot. */
  private static final class Handle implements Scheduled {
    private final SimClock clock;
    private final int slot;
    private final int generation;

    Handle(SimClock clock, int slot, int generation) {
      this.clock = clock;
      this.slot = slot;
      this.generation = generation;
    }

    @Override
    public boolean cancel() {
      return clock.cancel(slot, generation);
    }
  }
}
