package dev.quell;

import java.util.IdentityHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The bulkhead behind {@link Limiter#concurrency}.
 *
 * <p>One long holds both counts: attempts in flight (low half) and attempts queued for a permit
 * (high half). Admission and release without a queue are a single CAS each and take no lock. The
 * queue — only with a wait — is guarded by a lock, and every change to the queued count happens
 * under it, which gives the invariant the hand-over rests on: <em>while anyone is queued, the
 * in-flight count never falls</em>. A newcomer is refused while anyone is queued (it queues behind
 * them), and an ending attempt whose release finds the queue non-empty passes its permit to the
 * oldest waiter instead of returning it. A waiter that gives up ({@link Gate#cancelAwait}) and a
 * release that picks it are decided under the same lock, so each permit changes hands exactly once.
 */
final class ConcurrencyLimiter extends Limiter {
  /** {@code n} must be below this, so that {@code inFlight + 1} always fits the low half. */
  static final int MAX_LIMIT = Integer.MAX_VALUE;

  private static final long ONE_QUEUED = 1L << 32;

  private final String name;
  private final int limit;
  private final long maxWaitNanos;
  private final AtomicLong state = new AtomicLong();

  // guarded by itself
  private final IdentityHashMap<AttemptRecord, Waiter> waiters = new IdentityHashMap<>();
  private @Nullable Waiter head;
  private @Nullable Waiter tail;

  private final Gate gate = new ConcurrencyGate();

  ConcurrencyLimiter(String name, int limit, long maxWaitNanos) {
    this.name = name;
    this.limit = limit;
    this.maxWaitNanos = maxWaitNanos;
  }

  static int inFlightOf(long s) {
    return (int) s;
  }

  static int queuedOf(long s) {
    return (int) (s >>> 32);
  }

  /** Takes a permit if one is free and nobody is queued for one. */
  boolean tryAcquire() {
    while (true) {
      long s = state.get();
      if (queuedOf(s) > 0 || inFlightOf(s) >= limit) {
        return false;
      }
      if (state.compareAndSet(s, s + 1)) {
        return true;
      }
    }
  }

  /**
   * Returns a permit, or hands it to the oldest waiter; returns that waiter's callback (to run
   * outside the lock) or null.
   */
  @Nullable Runnable releasePermit() {
    while (true) {
      long s = state.get();
      if (queuedOf(s) == 0) {
        if (inFlightOf(s) == 0) {
          return null; // more releases than admissions: a core bug; never go negative
        }
        if (state.compareAndSet(s, s - 1)) {
          return null;
        }
        continue;
      }
      synchronized (waiters) {
        if (queuedOf(state.get()) == 0) {
          continue; // the last waiter gave up meanwhile: return the permit the plain way
        }
        Waiter w = java.util.Objects.requireNonNull(head, "a queued waiter"); // queued > 0: the list has a head
        unlink(w);
        waiters.remove(w.attempt);
        state.addAndGet(-ONE_QUEUED); // in flight unchanged: the permit changes hands
        w.attempt.granted = true;
        return w.onGranted;
      }
    }
  }

  /**
   * Queues {@code attempt}. If a permit came free between its refusal and this call (an attempt
   * ended while nobody was queued yet), it is granted at once instead: {@code granted} is set before
   * this returns true, and {@code onGranted} is <em>not</em> run — the caller is inside its own
   * admission and may hold its own lock, so it checks {@code granted} and carries on. Only a
   * hand-over by a releasing thread runs the callback.
   */
  boolean enqueue(AttemptRecord attempt, Runnable onGranted) {
    if (maxWaitNanos == 0) {
      return false;
    }
    synchronized (waiters) {
      while (true) {
        long s = state.get();
        if (queuedOf(s) == 0 && inFlightOf(s) < limit) {
          if (state.compareAndSet(s, s + 1)) {
            attempt.granted = true;
            return true;
          }
          continue;
        }
        if (state.compareAndSet(s, s + ONE_QUEUED)) {
          Waiter w = new Waiter(attempt, onGranted);
          waiters.put(attempt, w);
          if (tail == null) {
            head = w;
          } else {
            tail.next = w;
            w.prev = tail;
          }
          tail = w;
          return true;
        }
      }
    }
  }

  /**
   * True if {@code attempt} holds nothing: it was still queued and now is not (or it never queued);
   * false if a permit was handed to it first.
   */
  boolean dequeue(AttemptRecord attempt) {
    synchronized (waiters) {
      Waiter w = waiters.remove(attempt);
      if (w == null) {
        return !attempt.granted; // granted is written under this lock, so this reading is decisive
      }
      unlink(w);
      state.addAndGet(-ONE_QUEUED);
      return true;
    }
  }

  private void unlink(Waiter w) {
    if (w.prev == null) {
      head = w.next;
    } else {
      w.prev.next = w.next;
    }
    if (w.next == null) {
      tail = w.prev;
    } else {
      w.next.prev = w.prev;
    }
    w.prev = null;
    w.next = null;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int limit() {
    return limit;
  }

  @Override
  public int inFlight() {
    return inFlightOf(state.get());
  }

  @Override
  public int available() {
    long s = state.get();
    return queuedOf(s) > 0 ? 0 : Math.max(0, limit - inFlightOf(s));
  }

  @Override
  public int queued() {
    return queuedOf(state.get());
  }

  @Override
  Gate gate() {
    return gate;
  }

  @Override
  Limiter copy(String name) {
    return new ConcurrencyLimiter(name, limit, maxWaitNanos);
  }

  @Override
  public String toString() {
    long s = state.get();
    return "Limiter.concurrency[" + name + ", limit=" + limit
        + (maxWaitNanos > 0 ? ", maxWait=" + java.time.Duration.ofNanos(maxWaitNanos) : "")
        + ", inFlight=" + inFlightOf(s) + ", queued=" + queuedOf(s) + "]";
  }

  private static final class Waiter {
    final AttemptRecord attempt;
    final Runnable onGranted;
    @Nullable Waiter prev;
    @Nullable Waiter next;

    Waiter(AttemptRecord attempt, Runnable onGranted) {
      this.attempt = attempt;
      this.onGranted = onGranted;
    }
  }

  /** The core's view. */
  private final class ConcurrencyGate extends Gate {
    @Override
    StopReason refusal() {
      return StopReason.LIMITED;
    }

    @Override
    boolean tryAdmit(AttemptRecord attempt, int index, long now) {
      if (tryAcquire()) {
        return true;
      }
      attempt.retryAfterNanos = -1; // a permit comes free when an attempt ends: nobody can tell when
      return false;
    }

    @Override
    boolean needsEndTime() {
      return false; // a permit is a permit, however long it was held
    }

    @Override
    boolean coarseTime() {
      return true; // it never looks at the time
    }

    @Override
    void release(AttemptRecord attempt, int index, int how, long now) {
      Runnable granted = releasePermit();
      if (granted != null) {
        granted.run();
      }
    }

    @Override
    long maxWaitNanos() {
      return maxWaitNanos;
    }

    @Override
    boolean await(AttemptRecord attempt, int index, Runnable onGranted) {
      return enqueue(attempt, onGranted);
    }

    @Override
    boolean cancelAwait(AttemptRecord attempt, int index) {
      return dequeue(attempt);
    }

    @Override
    public String toString() {
      return ConcurrencyLimiter.this.toString();
    }
  }
}
