package dev.quell.spring.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Counts the calls and inbound requests the starter runs (HTTP clients, @Resilient methods, requests
 * through the servlet filter), so that draining can let them finish before the context goes on closing.
 * Entering and leaving are one atomic add each; waiting takes a lock.
 */
public final class InFlight {
  private final java.util.concurrent.atomic.AtomicInteger count = new java.util.concurrent.atomic.AtomicInteger();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();

  /** A call starts. Pair with exactly one {@link #exit()}. */
  public void enter() {
    count.incrementAndGet();
  }

  /** A call ended. */
  public void exit() {
    if (count.decrementAndGet() == 0) {
      lock.lock();
      try {
        idle.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  /** Calls in flight now. */
  public int count() {
    return count.get();
  }

  /** Waits until nothing is in flight or {@code timeout} passed; true when nothing is. Honours interrupts. */
  public boolean awaitIdle(Duration timeout) throws InterruptedException {
    long left = timeout.isNegative() ? 0 : saturatedNanos(timeout);
    lock.lock();
    try {
      while (count.get() > 0) {
        if (left <= 0) {
          return false;
        }
        left = idle.awaitNanos(left);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  private static long saturatedNanos(Duration d) {
    return d.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : TimeUnit.NANOSECONDS.convert(d);
  }
}
