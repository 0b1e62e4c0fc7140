package dev.quell.okhttp.internal;

import dev.quell.internal.Internal;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.EventListener;

/**
 * Wakes a call's thread when OkHttp cancels the call (by {@code Call.cancel()} or its call timeout)
 * while Quell waits between attempts: OkHttp's cancel aborts I/O but does not interrupt a sleeping
 * thread, so without this a cancelled call would sleep out its backoff before noticing.
 *
 * <p>It interrupts only in the window between attempts, and {@link #end} tells the caller whether it
 * did, so the interrupt can be taken back before the thread returns to OkHttp.
 */
@Internal
public final class CancelWatch extends EventListener {
  private static final int RUNNING = 0;
  private static final int WAITING = 1;
  private static final int INTERRUPTING = 2;
  private static final int INTERRUPTED = 3;
  private static final int ENDED = 4;

  private final Call call;
  private final Thread owner = Thread.currentThread();
  private final AtomicInteger state = new AtomicInteger(RUNNING);

  private CancelWatch(Call call) {
    this.call = call;
  }

  /** Watches {@code call} for the current thread. */
  public static CancelWatch watch(Call call) {
    CancelWatch watch = new CancelWatch(call);
    call.addEventListener(watch);
    return watch;
  }

  @Override
  public void canceled(Call call) {
    if (state.compareAndSet(WAITING, INTERRUPTING)) {
      owner.interrupt();
      state.set(INTERRUPTED);
    }
  }

  /** An attempt ended: until the next starts, a cancel interrupts the waiting thread. */
  public void waiting() {
    if (state.compareAndSet(RUNNING, WAITING) && call.isCanceled()) {
      canceled(call); // cancelled before we started watching this wait
    }
  }

  /** An attempt is starting: no more interrupts (a cancel now is seen by the attempt itself). */
  public void attemptStarting() {
    state.compareAndSet(WAITING, RUNNING);
  }

  /** The call is over. Returns true if this watch interrupted the thread (the interrupt is to be cleared). */
  public boolean end() {
    while (true) {
      int s = state.get();
      if (s == INTERRUPTING) {
        Thread.onSpinWait(); // the interrupt is being delivered: wait for it to land before anyone clears it
        continue;
      }
      if (state.compareAndSet(s, ENDED)) {
        return s == INTERRUPTED;
      }
    }
  }
}
