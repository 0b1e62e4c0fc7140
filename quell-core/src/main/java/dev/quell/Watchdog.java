package dev.quell;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Ends blocked synchronous attempts on the real clock by interrupting their thread, without putting
 * a clock read, an allocation or a lock on the caller's path.
 *
 * <p>Each calling thread owns one reusable {@link Slot} per nesting level. Arming it is a release
 * store of a stamp (attempt sequence and state) and the timeout; disarming is one CAS. A single
 * daemon thread scans the slots every {@link #TICK_NANOS}: it notes the tick at which it first saw
 * each armed attempt and interrupts the owner once the timeout has passed since then. So a timeout
 * fires no earlier than asked and at most about two ticks late, and the caller never reads the
 * clock on the success path; the first sighting also gives the caller an estimate of when the
 * attempt began, should it fail and need one.
 *
 * <p>When nothing has been armed for a second the watchdog stops ticking (it parks for up to
 * {@link #IDLE_PARK_NANOS} at a time) and the next {@code arm} wakes it, so an idle process pays
 * nothing for it.
 *
 * <p>The fire/disarm race is settled by the stamp: whoever moves it out of ARMED first wins. If the
 * watchdog won, the caller waits for the interrupt to be delivered and then clears it, so a timeout
 * never leaks an interrupt into the caller's later work. If the owner was already interrupted when
 * its timeout came due — the caller cancelled, and the attempt ignored it — the watchdog sends
 * nothing and the caller's interrupt stands: the caller's cancellation wins over the timeout.
 *
 * <p>Package-private on purpose: it can interrupt any thread that runs a Quell attempt.
 */
final class Watchdog {
  /** Scan period. Timeouts fire between {@code timeout} and {@code timeout + 2 × tick} after the attempt starts. */
  static final long TICK_NANOS = 2_000_000L;
  /** After this long with nothing armed, the watchdog stops ticking until an attempt is armed. */
  static final long IDLE_AFTER_NANOS = 1_000_000_000L;
  /** The longest the watchdog parks while idle, bounding how late a missed wake-up can make a sighting. */
  static final long IDLE_PARK_NANOS = 100_000_000L;

  private static final int IDLE = 0;
  private static final int ARMED = 1;
  private static final int FIRING = 2;
  private static final int FIRED = 3;

  private static final VarHandle STAMP;

  static {
    try {
      STAMP = MethodHandles.lookup().findVarHandle(Slot.class, "stamp", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  static final Watchdog INSTANCE = new Watchdog();

  private final ConcurrentLinkedQueue<Slot> incoming = new ConcurrentLinkedQueue<>();
  private volatile @Nullable Thread thread;
  /** Set while the watchdog parks for long because nothing is armed; arm() then wakes it. */
  private volatile boolean idle;
  /** Once draining: every armed attempt is cut off at {@link #cutOffAt} (System.nanoTime). */
  private volatile boolean cutting;
  private volatile long cutOffAt;
  /** When the last pass found an armed attempt. Watchdog thread only. */
  private long lastArmedAt;
  /**
   * The clock (System.nanoTime) as the latest pass read it: a reading no later than now, and at most
   * about {@link #IDLE_PARK_NANOS} earlier ({@link #TICK_NANOS} while attempts are being timed),
   * unless the watchdog thread itself is starved of CPU. See {@link #sighting()}.
   */
  private volatile long sighting = System.nanoTime();

  /** The one watchdog is {@link #INSTANCE}; tests make their own to drive {@link #scan} by hand. */
  Watchdog() {}

  /**
   * A reusable attempt timer owned by one thread. A thread holds one per nesting level of
   * synchronous calls (see {@code Ambient}), so a call made inside another's attempt times itself
   * without disturbing the outer timer. Only the owner arms and disarms it.
   */
  static final class Slot {
    final Thread owner;
    volatile long stamp; // (sequence << 2) | state
    long timeoutNanos; // published by the release store of stamp
    /** After this long without an answer the hedge task runs (once); Long.MAX_VALUE for none. */
    long hedgeNanos = Long.MAX_VALUE;
    @Nullable Runnable hedgeTask;
    // watchdog-private: the sequence whose hedge task has run
    long hedgedSequence = -1;
    // watchdog-private
    long seenSequence = -1;
    long seenAt;
    // read by the owner after a failure
    volatile long seenAtPublished;
    volatile long seenSequencePublished = -1;

    Slot(Thread owner) {
      this.owner = owner;
    }

    /**
     * Ends the current attempt.
     *
     * @return true if the watchdog timed it out; the interrupt it sent has then been cleared
     */
    boolean disarm() {
      long armed = stamp;
      if ((armed & 3) == ARMED && STAMP.compareAndSet(this, armed, armed & ~3L)) {
        return false;
      }
      if ((armed & 3) == IDLE) {
        return false; // was not armed
      }
      // the watchdog claimed it: wait for the interrupt to land, then take it back
      while ((stamp & 3) != FIRED) {
        Thread.onSpinWait();
      }
      Thread.interrupted();
      stamp = stamp & ~3L;
      return true;
    }

    /** When the watchdog first saw the current attempt, or {@code fallback} if it has not yet (the attempt is younger than a tick). */
    long startEstimate(long fallback) {
      return seenSequencePublished == (stamp >>> 2) ? seenAtPublished : fallback;
    }

    /** True between {@link #arm} and {@link #disarm}. For the owner thread. */
    boolean isArmed() {
      return (stamp & 3) != IDLE;
    }

    /** The timeout of the current (or last) arming. For the owner thread. */
    long timeoutNanos() {
      return timeoutNanos;
    }

    /** Arms this slot for an attempt of at most {@code timeoutNanos} ({@code Long.MAX_VALUE}: only a drain's cut-off ends it). Owner only. */
    Slot arm(long timeoutNanos) {
      return arm(timeoutNanos, Long.MAX_VALUE, null);
    }

    /**
     * As {@link #arm(long)}, and after {@code hedgeNanos} without an answer the watchdog runs
     * {@code hedgeTask} once, on its own thread: the task must only hand work over (it starts a
     * hedge through an executor), never run it.
     */
    Slot arm(long timeoutNanos, long hedgeNanos, @Nullable Runnable hedgeTask) {
      this.timeoutNanos = timeoutNanos;
      this.hedgeNanos = hedgeNanos;
      this.hedgeTask = hedgeTask;
      long next = ((stamp >>> 2) + 1) << 2 | ARMED;
      STAMP.setRelease(this, next);
      if (INSTANCE.idle) {
        INSTANCE.wake(); // rare: the first attempt after a quiet spell
      }
      return this;
    }
  }

  /** From {@code nanos} (on System.nanoTime) on, every armed attempt is timed out, whatever its own timeout. */
  void cutOffAt(long nanos) {
    cutOffAt = nanos;
    cutting = nanos != Long.MAX_VALUE;
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** A new slot owned by the calling thread, watched from now on (until the thread dies). */
  Slot newSlot() {
    Slot slot = new Slot(Thread.currentThread());
    incoming.add(slot);
    sighting = System.nanoTime(); // the watchdog may have parked for good with no slot to watch
    Thread t = thread;
    if (t == null) {
      synchronized (this) {
        if (thread == null) {
          Thread started = new Thread(this::loop, "quell-watchdog");
          started.setDaemon(true);
          thread = started;
          started.start();
        }
      }
    } else {
      LockSupport.unpark(t);
    }
    return slot;
  }

  private void loop() {
    List<Slot> active = new ArrayList<>();
    lastArmedAt = System.nanoTime();
    while (true) {
      for (Slot s; (s = incoming.poll()) != null; ) {
        active.add(s);
      }
      if (active.isEmpty()) {
        idle = true;
        LockSupport.park(this); // a new slot unparks us
        idle = false;
        continue;
      }
      // each pass is its own call, so the loop holds no decision of its own (and a test can make
      // the passes itself, at the times it chooses, on an instance of its own)
      LockSupport.parkNanos(this, scan(active, System.nanoTime()));
    }
  }

  /**
   * One pass over {@code active} at {@code now} (on System.nanoTime): sights attempts armed since
   * the last pass, runs hedge tasks that have fallen due, interrupts attempts past their timeout
   * (or the drain's cut-off) unless their owner is already interrupted, and forgets idle slots
   * whose owner has died (and frees its place in {@link Ambient}'s cache). Returns how long to park
   * before the next pass: a tick while anything is armed or was lately, {@link #IDLE_PARK_NANOS}
   * (and the watchdog marked idle) once nothing has been armed for {@link #IDLE_AFTER_NANOS}.
   * Watchdog thread only.
   */
  long scan(List<Slot> active, long now) {
    sighting = now;
    boolean anyArmed = false;
    boolean cut = cutting && now - cutOffAt >= 0;
    for (int i = active.size() - 1; i >= 0; i--) {
      Slot slot = active.get(i);
      long stamp = slot.stamp;
      if ((stamp & 3) != ARMED) {
        if (!slot.owner.isAlive()) {
          active.set(i, active.get(active.size() - 1));
          active.remove(active.size() - 1);
          Ambient.forget(slot.owner); // its place in the threads' cache is free again
        }
        continue;
      }
      anyArmed = true;
      long sequence = stamp >>> 2;
      if (slot.seenSequence != sequence) {
        slot.seenSequence = sequence;
        slot.seenAt = now;
        slot.seenAtPublished = now;
        slot.seenSequencePublished = sequence;
        if (!cut) {
          continue;
        }
      }
      Runnable hedge = slot.hedgeTask;
      if (hedge != null && slot.hedgedSequence != sequence && now - slot.seenAt >= slot.hedgeNanos) {
        slot.hedgedSequence = sequence;
        try {
          hedge.run();
        } catch (RuntimeException | Error e) {
          // a hedge that cannot be handed over is not sent; the attempt goes on
        }
      }
      if ((cut || now - slot.seenAt >= slot.timeoutNanos) && !slot.owner.isInterrupted()
          && STAMP.compareAndSet(slot, stamp, (stamp & ~3L) | FIRING)) {
        // (an owner already interrupted was cancelled by its caller: that interrupt stands, and wins)
        slot.owner.interrupt();
        slot.stamp = (stamp & ~3L) | FIRED;
      }
    }
    if (anyArmed) {
      lastArmedAt = now;
      idle = false;
      return TICK_NANOS;
    }
    if (now - lastArmedAt >= IDLE_AFTER_NANOS) {
      // Nothing to time for a while: stop ticking. arm() wakes us when it sees the flag; should it
      // miss it (its store and our scan crossing), the attempt is sighted at most one idle park late.
      idle = true;
      return IDLE_PARK_NANOS;
    }
    return TICK_NANOS;
  }

  /**
   * The last clock reading of this watchdog's passes: one volatile read where {@code
   * System.nanoTime()} costs 25 ns or more on a virtualised clock. It is never later than the clock
   * and at most about {@link #IDLE_PARK_NANOS} (100 ms) earlier — {@link #TICK_NANOS} (2 ms) while
   * attempts are being timed — for as long as any thread that ever armed a slot is alive, and is
   * fresh when a thread takes its first slot. Only for decisions that a reading this coarse cannot
   * change: which bucket of a breaker's window of ten seconds or more a success lands in.
   */
  long sighting() {
    return sighting;
  }

  /** True while the watchdog has stopped ticking for lack of armed attempts. For tests and diagnostics. */
  boolean isIdle() {
    return idle;
  }

  private void wake() {
    idle = false;
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }
}
