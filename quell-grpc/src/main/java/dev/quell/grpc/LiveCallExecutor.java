package dev.quell.grpc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The executor of a call's attempts and of the policy's events when the caller gave the call an
 * executor of its own: the caller's executor while the caller still listens, {@code after} once it
 * has heard its close ({@link #retire}).
 *
 * <p>Why: the caller's executor may stop running tasks when its call ends. A blocking stub's is
 * grpc-java's ThreadlessExecutor, drained only by the caller's thread while it waits, and it drops
 * whatever arrives once the caller has its answer. A losing hedge, or an attempt abandoned at its
 * timeout, often closes just after that — and its close, queued there, would never reach the
 * interceptors below Quell (a per-attempt span would stay open for good), nor would the loser's
 * cancellation run. So each task handed to the caller's executor is also kept here until it runs:
 * on retirement, every task still waiting is handed to {@code after} too, and whichever runs it
 * first runs it (once).
 */
final class LiveCallExecutor implements Executor {
  private final Executor caller;
  private final Executor after;
  private final Set<Handoff> waiting = ConcurrentHashMap.newKeySet();
  private volatile boolean retired;

  LiveCallExecutor(Executor caller, Executor after) {
    this.caller = caller;
    this.after = after;
  }

  @Override
  public void execute(Runnable task) {
    if (retired) {
      after.execute(task);
      return;
    }
    Handoff h = new Handoff(task, waiting);
    waiting.add(h);
    if (retired) {
      // retire() may have looked at the waiting tasks before this one was among them
      after.execute(h);
      return;
    }
    try {
      caller.execute(h);
    } catch (RejectedExecutionException e) {
      after.execute(h); // the caller shut its executor down while the call was live: run it all the same
    }
  }

  /** The caller has heard its close: from now on tasks run on {@code after}, and so do those still waiting. */
  void retire() {
    if (retired) {
      return;
    }
    retired = true;
    for (Handoff h : waiting) {
      after.execute(h);
    }
  }

  /** A task that runs once, on whichever executor gets to it first. */
  private static final class Handoff extends AtomicBoolean implements Runnable {
    private static final long serialVersionUID = 1L;
    private final transient Runnable task;
    private final transient Set<Handoff> waiting;

    Handoff(Runnable task, Set<Handoff> waiting) {
      this.task = task;
      this.waiting = waiting;
    }

    @Override
    public void run() {
      if (compareAndSet(false, true)) {
        waiting.remove(this); // by identity: AtomicBoolean keeps Object's equals and hashCode
        task.run();
      }
    }
  }
}
