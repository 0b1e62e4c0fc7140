package dev.quell.test;

import dev.quell.TimeSource;
import java.time.Duration;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.random.RandomGenerator;

/**
 * A {@link TimeSource} whose clock moves only when told to: {@link #sleep} advances it instead of
 * blocking, and {@link #advance} moves it forward, running every timer that falls due on the way,
 * in time order, on the calling thread. Give it to a policy with {@code withTimeSource} and a test
 * of minutes of backoff finishes in milliseconds, the same way every time.
 *
 * <pre>{@code
 * VirtualTime time = VirtualTime.create();
 * Resilience policy = Resilience.DEFAULT.withTimeSource(time);
 * policy.run(() -> flaky.call());        // backoff sleeps advance the virtual clock
 * assertThat(time.elapsed()).isLessThan(Duration.ofSeconds(30));
 * }</pre>
 *
 * <p>Thread-safe. Jitter is drawn from a {@link Random} seeded at creation, so a run repeats exactly.
 * A sleeping thread that is interrupted (for example by an attempt timeout that fell due while it
 * slept) stops at that moment and throws {@link InterruptedException}.
 */
public final class VirtualTime implements TimeSource {
  private final Object lock = new Object();
  private final PriorityQueue<Timer> timers = new PriorityQueue<>();
  private final Random random;
  private long now;
  private long sequence;

  private VirtualTime(long seed) {
    this.random = new Random(seed);
  }

  /** A virtual clock at zero, with jitter seeded by 42. */
  public static VirtualTime create() {
    return new VirtualTime(42);
  }

  /** A virtual clock at zero, with jitter seeded by {@code seed}. */
  public static VirtualTime create(long seed) {
    return new VirtualTime(seed);
  }

  @Override
  public long nanoTime() {
    synchronized (lock) {
      return now;
    }
  }

  /** Time since the clock was created. */
  public Duration elapsed() {
    return Duration.ofNanos(nanoTime());
  }

  /** Advances the clock by {@code nanos}, running timers that fall due; stops early if the thread is interrupted. */
  @Override
  public void sleep(long nanos) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before a virtual sleep");
    }
    long target = Math.max(nanoTime(), saturatedAdd(nanoTime(), nanos));
    advanceTo(target, true);
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    Timer timer;
    synchronized (lock) {
      timer = new Timer(saturatedAdd(now, Math.max(0, delayNanos)), sequence++, task);
      timers.add(timer);
    }
    return timer;
  }

  @Override
  public RandomGenerator random() {
    return random;
  }

  /** Moves the clock forward by {@code duration}, running every timer that falls due, in order. */
  public void advance(Duration duration) {
    if (duration.isNegative()) {
      throw new IllegalArgumentException("cannot advance by a negative duration: " + duration);
    }
    try {
      advanceTo(saturatedAdd(nanoTime(), duration.toNanos()), false);
    } catch (InterruptedException e) {
      throw new AssertionError("unreachable: advance does not stop for interrupts", e);
    }
  }

  /**
   * Runs timers in time order, advancing the clock to each, until none is left or {@code limit} of
   * virtual time has passed. Returns the virtual time that passed. Use it to let asynchronous calls
   * play out.
   */
  public Duration runUntilIdle(Duration limit) {
    long start = nanoTime();
    long end = saturatedAdd(start, limit.toNanos());
    while (true) {
      Timer next;
      synchronized (lock) {
        next = timers.peek();
        if (next == null || next.due > end) {
          break;
        }
      }
      advance(Duration.ofNanos(next.due - nanoTime()));
    }
    return Duration.ofNanos(nanoTime() - start);
  }

  /** Timers scheduled and not yet run or cancelled. */
  public int pendingTimers() {
    synchronized (lock) {
      return timers.size();
    }
  }

  private void advanceTo(long target, boolean stopOnInterrupt) throws InterruptedException {
    while (true) {
      Timer due;
      synchronized (lock) {
        Timer head = timers.peek();
        if (head == null || head.due > target) {
          if (target > now) {
            now = target;
          }
          return;
        }
        timers.poll();
        if (head.due > now) {
          now = head.due;
        }
        due = head;
      }
      due.fire();
      if (stopOnInterrupt && Thread.interrupted()) {
        throw new InterruptedException("interrupted during a virtual sleep");
      }
    }
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  private final class Timer implements Scheduled, Comparable<Timer> {
    final long due;
    final long order;
    final Runnable task;
    private boolean done;

    Timer(long due, long order, Runnable task) {
      this.due = due;
      this.order = order;
      this.task = task;
    }

    void fire() {
      synchronized (lock) {
        if (done) {
          return;
        }
        done = true;
      }
      task.run();
    }

    @Override
    public boolean cancel() {
      synchronized (lock) {
        if (done) {
          return false;
        }
        done = true;
        timers.remove(this);
        return true;
      }
    }

    @Override
    public int compareTo(Timer o) {
      int c = Long.compare(due, o.due);
      return c != 0 ? c : Long.compare(order, o.order);
    }
  }

  @Override
  public String toString() {
    return "VirtualTime[" + elapsed() + "]";
  }
}
