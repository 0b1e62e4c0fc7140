package dev.quell.reactor;

import dev.quell.TimeSource;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A {@link TimeSource} over a Reactor {@link Scheduler}: the policy reads the scheduler's clock
 * ({@link Scheduler#now}) and sets its timers (backoffs, attempt timeouts, hedge delays, the guarded
 * pause) as the scheduler's delayed tasks, so retries start on the scheduler's threads.
 *
 * <pre>{@code
 * static final Resilience INVENTORY = Resilience.DEFAULT.withName("inventory")
 *     .withTimeSource(ReactorTime.of(Schedulers.parallel()));
 * }</pre>
 *
 * <p>In tests, over reactor-test's {@code VirtualTimeScheduler}, a minute of backoff passes when
 * {@code StepVerifier.withVirtualTime(...).thenAwait(...)} advances it, in milliseconds of real time.
 * Build the time source (and the policy) inside the supplier given to {@code withVirtualTime}, or
 * over the scheduler you pass it, so that both run on the same virtual clock.
 *
 * <p>Timer tasks run on the scheduler's threads (on a virtual scheduler, on the thread that
 * advances it), and what they lead to — the next attempt's subscription — runs there too: the
 * scheduler should be one for non-blocking work. {@link #sleep} blocks the calling thread until the
 * scheduler runs its wake-up (on a virtual scheduler, until time is advanced past it); the Reactor
 * operators never call it. Thread-safe.
 */
public final class ReactorTime implements TimeSource {
  private final Scheduler scheduler;

  private ReactorTime(Scheduler scheduler) {
    this.scheduler = scheduler;
  }

  /** The time source of {@code scheduler}'s clock and timers. */
  public static ReactorTime of(Scheduler scheduler) {
    return new ReactorTime(Objects.requireNonNull(scheduler, "scheduler"));
  }

  /** The scheduler this time source reads and schedules on. */
  public Scheduler scheduler() {
    return scheduler;
  }

  @Override
  public long nanoTime() {
    return scheduler.now(TimeUnit.NANOSECONDS);
  }

  @Override
  public void sleep(long nanos) throws InterruptedException {
    if (nanos <= 0) {
      return;
    }
    CountDownLatch woken = new CountDownLatch(1);
    Scheduled wakeUp = schedule(woken::countDown, nanos);
    try {
      woken.await();
    } catch (InterruptedException e) {
      wakeUp.cancel();
      throw e;
    }
  }

  @Override
  public Scheduled schedule(Runnable task, long delayNanos) {
    Objects.requireNonNull(task, "task");
    Timer timer = new Timer(task);
    Disposable d = delayNanos <= 0
        ? scheduler.schedule(timer)
        : scheduler.schedule(timer, delayNanos, TimeUnit.NANOSECONDS);
    timer.disposable = d;
    return timer;
  }

  @Override
  public String toString() {
    return "ReactorTime[" + scheduler + "]";
  }

  /** A task that runs at most once; cancelling it reports whether it will now never run. */
  private static final class Timer implements Runnable, Scheduled {
    private static final VarHandle STATE;
    private static final int WAITING = 0;
    private static final int RAN = 1;
    private static final int CANCELLED = 2;

    static {
      try {
        STATE = MethodHandles.lookup().findVarHandle(Timer.class, "state", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final Runnable task;
    private volatile int state;
    volatile @Nullable Disposable disposable;

    Timer(Runnable task) {
      this.task = task;
    }

    @Override
    public void run() {
      if (STATE.compareAndSet(this, WAITING, RAN)) {
        task.run();
      }
    }

    @Override
    public boolean cancel() {
      if (!STATE.compareAndSet(this, WAITING, CANCELLED)) {
        return false;
      }
      Disposable d = disposable;
      if (d != null) {
        d.dispose();
      }
      return true;
    }
  }
}
