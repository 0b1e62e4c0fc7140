package dev.quell.sim.internal;

import dev.quell.TimeSource;
import dev.quell.internal.ConfinedTime;
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
 * blocking sleep in the middle of the loop would be a bug. Being {@link ConfinedTime}, the policy's
 * calls on it take no locks.
 *
 * <p>Built for the simulator's load, where nearly every attempt arms a timeout that its answer then
 * cancels. The queue is a four-ary min-heap over primitive arrays; an event is a slot number, so moving
 * it touches no object. A cancelled event leaves the heap at once, so the heap holds only what can
 * still run. Events the simulator posts for itself ({@link #post}) need no handle and allocate nothing.
 *
 * <p>Most timers a policy arms have one of a few fixed delays (the attempt timeout, the guarded
 * pause), and since time only moves forward, events of one fixed delay fall due in the order they are
 * scheduled. Such events skip the heap: a delay two timers in a row had gets a lane, a first-in first-out
 * ring where adding is an append and cancelling marks the entry (it is dropped when it reaches the
 * front). The simulator's own streams of events in due order (the arrivals) get lanes of their own
 * ({@link #stream}). The next event is the earliest of the heap's top and the lanes' fronts, by the
 * same (due time, order of scheduling), so the order of events is exactly the heap's alone.
 */
@Internal
public final class SimClock implements TimeSource, ConfinedTime {
  // the heap, by position: due times, and slots (an event's order of scheduling is looked up by
  // slot, only to break a tie of due times, so moving an entry touches two arrays, not three)
  private long[] due = new long[256];
  private int[] slotAt = new int[256];
  private int size;
  // the events, by slot
  private Runnable[] task = new Runnable[256];
  /** Its order of scheduling: events due at the same instant run in this order. */
  private long[] orderOf = new long[256];
  private int[] position = new int[256];
  /** Bumped each time a slot is freed, so a stale handle cannot cancel the slot's next event. */
  private int[] generation = new int[256];
  private int[] free = new int[256];
  private int freeCount;
  private int slots;

  // the lanes: rings of events of one fixed delay, in due order (see the class comment)
  private static final int MAX_LANES = 6;
  /** {@link #position} of a cancelled event still in its lane; a live one's is {@code -2 - lane}. */
  private static final int CANCELLED_IN_LANE = Integer.MIN_VALUE;
  private final long[] laneDelay = new long[MAX_LANES];
  private final long[][] laneDue = new long[MAX_LANES][];
  private final int[][] laneSlot = new int[MAX_LANES][];
  private final int[] laneHead = new int[MAX_LANES];
  /** Each lane's front, (Long.MAX_VALUE, Long.MAX_VALUE) when empty (no event's order is that high). */
  private final long[] frontDue = new long[MAX_LANES];
  private final long[] frontOrder = new long[MAX_LANES];
  private final int[] laneCount = new int[MAX_LANES];
  private int lanes;
  /** Live (not cancelled) events in the lanes. */
  private int laneLive;
  /** The last timer's delay that found no lane: if the next timer's is the same, it gets one. */
  private long candidateDelay = -1;

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

  /** The thread that made it, runs it, and alone may schedule on it. */
  @Override
  public Thread owner() {
    return owner;
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
    long delay = Math.max(0, delayNanos);
    int slot = add(task, delay, timerLane(delay));
    return new Handle(this, slot, generation[slot]);
  }

  /** Schedules {@code task} after {@code delayNanos}, with no way to cancel it. */
  public void post(Runnable task, long delayNanos) {
    add(task, Math.max(0, delayNanos), -1);
  }

  /**
   * A lane for a stream of events that the caller posts in due order, each due no earlier than the
   * one it posted before (the next arrival, posted as one arrives); -1 when every lane is taken.
   * Posting on it ({@link #post(int, Runnable, long)}) costs an append instead of a heap's climb.
   */
  public int stream() {
    return lanes == MAX_LANES ? -1 : openLane(-1); // a delay of -1: no timer's delay matches it
  }

  /**
   * As {@link #post(Runnable, long)}, on {@code stream} (from {@link #stream()}, or -1 for none). An
   * event due before the stream's last goes to the heap instead, so the order of events stays
   * exact whatever the caller does.
   */
  public void post(int stream, Runnable task, long delayNanos) {
    long delay = Math.max(0, delayNanos);
    int lane = -1;
    if (stream >= 0) {
      int n = laneCount[stream];
      long at = due(delay);
      if (n == 0 || laneDue[stream][(laneHead[stream] + n - 1) & (laneDue[stream].length - 1)] <= at) {
        lane = stream;
      }
    }
    add(task, delay, lane);
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
    while (true) {
      // the earliest of the heap's top and the lanes' fronts (a lane's front is never cancelled)
      int from = -1;
      long at = Long.MAX_VALUE;
      long seq = Long.MAX_VALUE;
      if (size > 0) {
        from = MAX_LANES;
        at = due[0];
        seq = orderOf[slotAt[0]];
      }
      for (int k = 0; k < lanes; k++) {
        long d = frontDue[k];
        long o = frontOrder[k];
        if (before(d, o, at, seq)) { // an empty lane's (MAX, MAX) never is
          from = k;
          at = d;
          seq = o;
        }
      }
      if (from < 0 || at > limit) {
        return;
      }
      now = at;
      int slot;
      if (from == MAX_LANES) {
        slot = slotAt[0];
        removeAt(0);
      } else {
        slot = laneSlot[from][laneHead[from]];
        advance(from);
        laneLive--;
        dropCancelled(from);
      }
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
    return size + laneLive;
  }

  /** Adds an event {@code delay} (0 or more) from now, to {@code lane}, or to the heap for -1. */
  private int add(Runnable t, long delay, int lane) {
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException("the simulation clock belongs to thread " + owner.getName()
          + "; it cannot be scheduled on from " + Thread.currentThread().getName());
    }
    long at = due(delay);
    int slot = claim();
    task[slot] = t;
    long seq = sequence++;
    orderOf[slot] = seq;
    if (lane >= 0) {
      append(lane, at, slot);
      return slot;
    }
    if (size == due.length) {
      int grown = size * 2;
      due = Arrays.copyOf(due, grown);
      slotAt = Arrays.copyOf(slotAt, grown);
    }
    int i = size++;
    siftUp(i, at, seq, slot);
    return slot;
  }

  private long due(long delay) {
    long at = now + delay;
    return at < now ? Long.MAX_VALUE : at; // saturate
  }

  private int claim() {
    if (freeCount > 0) {
      return free[--freeCount];
    }
    if (slots == task.length) {
      int grown = slots * 2;
      task = Arrays.copyOf(task, grown);
      orderOf = Arrays.copyOf(orderOf, grown);
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
    int p = position[slot];
    if (p >= 0) {
      removeAt(p);
      release(slot);
      return true;
    }
    // in a lane: marked, and its slot kept until the entry reaches the front
    int lane = -2 - p;
    position[slot] = CANCELLED_IN_LANE;
    task[slot] = null;
    generation[slot]++;
    laneLive--;
    dropCancelled(lane);
    return true;
  }

  /**
   * The lane for timers of {@code delay}, or -1 for the heap. A timer whose delay the timer before it
   * had too opens a lane for it.
   */
  private int timerLane(long delay) {
    for (int k = 0; k < lanes; k++) {
      if (laneDelay[k] == delay) {
        return k;
      }
    }
    if (delay != candidateDelay || lanes == MAX_LANES) {
      candidateDelay = delay;
      return -1;
    }
    return openLane(delay);
  }

  private int openLane(long delay) {
    int k = lanes++;
    laneDelay[k] = delay;
    frontDue[k] = Long.MAX_VALUE;
    frontOrder[k] = Long.MAX_VALUE;
    laneDue[k] = new long[64];
    laneSlot[k] = new int[64];
    return k;
  }

  private void append(int k, long at, int slot) {
    int capacity = laneDue[k].length;
    int n = laneCount[k];
    if (n == capacity) {
      // grow, unrolling the ring so that its front is at 0
      int h = laneHead[k];
      laneDue[k] = unroll(laneDue[k], h);
      int[] slotsGrown = new int[capacity * 2];
      System.arraycopy(laneSlot[k], h, slotsGrown, 0, capacity - h);
      System.arraycopy(laneSlot[k], 0, slotsGrown, capacity - h, h);
      laneSlot[k] = slotsGrown;
      laneHead[k] = 0;
      capacity *= 2;
    }
    int i = (laneHead[k] + n) & (capacity - 1);
    laneDue[k][i] = at;
    laneSlot[k][i] = slot;
    laneCount[k] = n + 1;
    if (n == 0) {
      frontDue[k] = at;
      frontOrder[k] = orderOf[slot];
    }
    position[slot] = -2 - k;
    laneLive++;
  }

  private static long[] unroll(long[] ring, int head) {
    long[] grown = new long[ring.length * 2];
    System.arraycopy(ring, head, grown, 0, ring.length - head);
    System.arraycopy(ring, 0, grown, ring.length - head, head);
    return grown;
  }

  /** Takes the front entry off lane {@code k}. */
  private void advance(int k) {
    int h = (laneHead[k] + 1) & (laneDue[k].length - 1);
    laneHead[k] = h;
    if (--laneCount[k] == 0) {
      frontDue[k] = Long.MAX_VALUE;
      frontOrder[k] = Long.MAX_VALUE;
    } else {
      frontDue[k] = laneDue[k][h];
      frontOrder[k] = orderOf[laneSlot[k][h]];
    }
  }

  /** Drops cancelled entries from the front of lane {@code k}, freeing their slots. */
  private void dropCancelled(int k) {
    while (laneCount[k] > 0) {
      int slot = laneSlot[k][laneHead[k]];
      if (position[slot] != CANCELLED_IN_LANE) {
        return;
      }
      advance(k);
      release(slot);
    }
  }

  /** Takes the entry at heap position {@code i} out, keeping the heap ordered. */
  private void removeAt(int i) {
    int last = --size;
    if (i == last) {
      return;
    }
    long at = due[last];
    int slot = slotAt[last];
    long seq = orderOf[slot];
    int parent = (i - 1) >>> 2;
    if (i > 0 && before(at, seq, due[parent], orderOf[slotAt[parent]])) {
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
      long parentAt = due[parent];
      if (at > parentAt || at == parentAt && seq > orderOf[slotAt[parent]]) {
        break; // the parent comes first
      }
      place(i, parentAt, slotAt[parent]);
      i = parent;
    }
    place(i, at, slot);
  }

  private void siftDown(int i, long at, long seq, int slot) {
    // a four-ary heap: half the depth of a binary one, and the four children share a cache line or two
    while (true) {
      int first = 4 * i + 1;
      if (first >= size) {
        break;
      }
      int child = first;
      long childAt = due[first];
      int last = Math.min(first + 4, size);
      for (int c = first + 1; c < last; c++) {
        long d = due[c];
        if (d < childAt || d == childAt && orderOf[slotAt[c]] < orderOf[slotAt[child]]) {
          child = c;
          childAt = d;
        }
      }
      if (childAt > at || childAt == at && orderOf[slotAt[child]] > seq) {
        break; // the moving entry comes first
      }
      place(i, childAt, slotAt[child]);
      i = child;
    }
    place(i, at, slot);
  }

  private void place(int i, long at, int slot) {
    due[i] = at;
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
