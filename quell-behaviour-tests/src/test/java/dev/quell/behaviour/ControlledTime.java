package dev.quell.behaviour;

import dev.quell.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * A virtual clock for synchronous calls with more than one thread in them (a hedge runs beside the
 * caller's attempt), on which a run repeats exactly. quell-test's {@code VirtualTime} moves when a
 * thread sleeps on it, so a hedge sleeping on its executor thread moves it while the caller's
 * attempt sleeps too, and which of them moves it first is up to the OS scheduler.
 *
 * <p>Here only the controlling thread (the test's) moves the clock, in {@link #runUntilIdle}. The
 * call runs on a <em>participant</em> thread ({@link #start}), and hedges on participant threads
 * from {@link #executor()}. A participant's {@link #sleep} blocks until the controller has moved the
 * clock to its wake-up (or the thread is interrupted: an attempt timeout, a winning hedge, the
 * caller's cancellation). The controller takes one event at a time — a timer, or a sleeper's
 * wake-up — in (due time, order of scheduling) order, moves the clock to it, runs or wakes it, and
 * then waits until every participant is blocked again before it takes the next. So everything that
 * happens at one instant has finished before the clock moves on, whatever the OS scheduler does.
 *
 * <p>A participant counts as blocked when it sleeps on this clock, or waits in the core's own park
 * for its next step (state WAITING, with a {@code dev.quell} object as the park's blocker), and in
 * either case has no interrupt pending: the core wakes a waiting owner on a clock other than the
 * real one by interrupting it, and a pending interrupt means the thread is about to run. This reads
 * the core's waiting from the outside, through {@link LockSupport#getBlocker}; it needs no change to
 * the core.
 */
final class ControlledTime implements TimeSource {
  private final Object lock = new Object();
  private final PriorityQueue<Event> events = new PriorityQueue<>();
  private final List<Participant> participants = new ArrayList<>();
  private final ThreadLocal<@Nullable Participant> self = new ThreadLocal<>();
  private final Random random = new Random(42);
  private long now;
  private long sequence;
  private int threads;

  @Override
  public long nanoTime() {
    synchronized (lock) {
      return now;
    }
  }

  /** Time since the clock was created. */
  Duration elapsed() {
    return Duration.ofNanos(nanoTime());
  }

  @Override
  public RandomGenerator random() {
    return random;
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    synchronized (lock) {
      Event e = new Event(saturatedAdd(now, Math.max(0, delayNanos)), sequence++, task, null);
      events.add(e);
      return e;
    }
  }

  /**
   * Blocks the calling participant until the controller has moved the clock {@code nanos} on, or it
   * is interrupted (then it throws at that instant, as a sleep does).
   */
  @Override
  public void sleep(long nanos) throws InterruptedException {
    Participant me = self.get();
    if (me == null) {
      throw new IllegalStateException("only a participant thread sleeps on a ControlledTime; "
          + "the controlling thread moves it with runUntilIdle");
    }
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before a controlled sleep");
    }
    Event wake;
    synchronized (lock) {
      wake = new Event(saturatedAdd(now, Math.max(0, nanos)), sequence++, null, me);
      events.add(wake);
      me.sleeping = wake;
    }
    while (!wake.woken && !Thread.currentThread().isInterrupted()) {
      LockSupport.park(this);
    }
    synchronized (lock) {
      me.sleeping = null;
      if (!wake.woken) {
        events.remove(wake);
        Thread.interrupted(); // cleared under the lock: the controller never sees a gap
        throw new InterruptedException("interrupted during a controlled sleep");
      }
    }
  }

  /** Starts {@code body} on a new participant thread. */
  Thread start(String name, Runnable body) {
    Participant p = new Participant();
    Thread t = new Thread(() -> {
      self.set(p);
      try {
        body.run();
      } finally {
        synchronized (lock) {
          p.done = true;
        }
      }
    }, name);
    t.setDaemon(true);
    p.thread = t;
    synchronized (lock) {
      participants.add(p); // before it starts: the controller counts it as running from now on
    }
    t.start();
    return t;
  }

  /** An executor for synchronous hedges: each task on a new participant thread. */
  Executor executor() {
    return task -> start("controlled-hedge-" + nextThread(), task);
  }

  private int nextThread() {
    synchronized (lock) {
      return ++threads;
    }
  }

  /** True when every participant has ended. */
  boolean allDone() {
    synchronized (lock) {
      return participants.stream().allMatch(p -> p.done);
    }
  }

  /**
   * Moves the clock event by event, each one played out before the next, until nothing is left due
   * within {@code limit} and every participant is blocked or done. Returns the time that passed.
   */
  Duration runUntilIdle(Duration limit) {
    long start = nanoTime();
    long end = saturatedAdd(start, limit.toNanos());
    while (true) {
      awaitQuiet();
      Event next;
      synchronized (lock) {
        next = events.peek();
        if (next == null || next.due > end) {
          break;
        }
        events.poll();
        now = Math.max(now, next.due);
        if (next.sleeper != null) {
          next.woken = true;
          next.sleeper.sleeping = null; // running from this moment, for the next check
          LockSupport.unpark(next.sleeper.thread);
          continue;
        }
        if (next.cancelled) {
          continue;
        }
        next.fired = true;
      }
      next.task.run();
    }
    return Duration.ofNanos(nanoTime() - start);
  }

  /** Waits until no participant can run without the clock moving. */
  private void awaitQuiet() {
    for (int spins = 0; !quiet(); spins++) {
      if (spins < 100) {
        Thread.onSpinWait();
      } else {
        Thread.yield();
      }
    }
  }

  private boolean quiet() {
    synchronized (lock) {
      for (Participant p : participants) {
        if (p.done) {
          continue;
        }
        Thread t = p.thread;
        if (t.isInterrupted()) {
          return false; // about to wake
        }
        if (p.sleeping != null) {
          continue;
        }
        if (t.getState() == Thread.State.WAITING) {
          Object blocker = LockSupport.getBlocker(t);
          if (blocker != null && blocker.getClass().getName().startsWith("dev.quell.")
              && !(blocker instanceof ControlledTime)) {
            continue; // the core's owner, waiting for its next step
          }
        }
        return false;
      }
      return true;
    }
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  private static final class Participant {
    Thread thread;
    volatile @Nullable Event sleeping;
    boolean done;
  }

  private final class Event implements Scheduled, Comparable<Event> {
    final long due;
    final long order;
    final Runnable task;
    final @Nullable Participant sleeper;
    volatile boolean woken;
    boolean fired;
    boolean cancelled;

    Event(long due, long order, Runnable task, @Nullable Participant sleeper) {
      this.due = due;
      this.order = order;
      this.task = task;
      this.sleeper = sleeper;
    }

    @Override
    public boolean cancel() {
      synchronized (lock) {
        if (fired || cancelled) {
          return false;
        }
        cancelled = true;
        events.remove(this);
        return true;
      }
    }

    @Override
    public int compareTo(Event o) {
      int c = Long.compare(due, o.due);
      return c != 0 ? c : Long.compare(order, o.order);
    }
  }

  @Override
  public String toString() {
    return "ControlledTime[" + elapsed() + "]";
  }
}
