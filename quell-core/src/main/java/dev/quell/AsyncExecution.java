package dev.quell;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The asynchronous driver: starts attempts, arms their timeouts and retry delays on the time
 * source's scheduler, and asks {@link Call} what to do after each. Nothing blocks.
 *
 * <p>Each attempt is settled exactly once: by its own completion, by its timeout, or by the caller
 * cancelling the call. A per-attempt ticket (the attempt number, claimed by CAS) decides which
 * of these racers acts; the losers do nothing. Only the winner touches the {@link Call}, so the
 * core is never entered by two threads at once.
 */
final class AsyncExecution<T> {
  private static final int SETTLED = -1;

  final CompletableFuture<T> result = new CompletableFuture<>();
  final CompletableFuture<Outcome<T>> outcome = new CompletableFuture<>();

  private final Call call;
  private final TimeSource time;
  private final Resilience.AsyncWork<T> work;
  /** The number of the attempt in flight, or SETTLED between attempts and after the end. */
  private final AtomicInteger ticket = new AtomicInteger(SETTLED);
  private volatile @Nullable CompletableFuture<T> inFlight;
  private volatile TimeSource.@Nullable Scheduled timer;

  /** The caller's context, in which each attempt runs with its own end as the deadline. */
  private final ResilienceContext outerContext;

  private AsyncExecution(Resilience policy, Resilience.AsyncWork<T> work) {
    this.time = policy.timeSource();
    Ambient ambient = Ambient.get();
    ResilienceContext outer = ambient.context();
    this.call = new Call(policy, time.nanoTime(), outer);
    if (ambient.insideRetryingCall()) {
      call.nestedInsideRetryingCall(call.startNanos);
    }
    this.outerContext = outer == null ? ResilienceContext.EMPTY : outer;
    this.work = work;
  }

  static <T> AsyncExecution<T> start(Resilience policy, Resilience.AsyncWork<T> work) {
    AsyncExecution<T> execution = new AsyncExecution<>(policy, work);
    execution.result.whenComplete((v, t) -> {
      if (t instanceof CancellationException) {
        execution.cancelledByCaller();
      }
    });
    execution.outcome.whenComplete((v, t) -> {
      if (t instanceof CancellationException) {
        execution.cancelledByCaller();
      }
    });
    execution.attempt();
    return execution;
  }

  private void attempt() {
    long now = time.nanoTime();
    long timeout;
    int number;
    synchronized (this) {
      if (call.stopReason != null || result.isDone() || outcome.isDone()) {
        return; // cancelled while waiting
      }
      timeout = call.beginAttempt(now);
      number = call.attempts;
      if (timeout != 0) {
        ticket.set(number);
      }
    }
    if (timeout == 0) {
      finish();
      return;
    }
    // arm the timeout before the work starts, as the sync driver does, so that an answer arriving
    // exactly at the timeout is judged the same way by both drivers
    if (timeout != Long.MAX_VALUE) {
      timer = time.schedule(() -> timedOut(number), timeout);
    }
    CompletableFuture<T> stage;
    ResilienceContext attemptContext = timeout == Long.MAX_VALUE ? outerContext
        : outerContext.withDeadlineAt(Call.saturatedAdd(now, timeout), time);
    try (ResilienceContext.Scope scope = attemptContext.open()) {
      CompletionStage<T> started = work.start(
          new Attempt(number, timeout, call.remainingNanos(now), false, call.criticality));
      stage = started == null
          ? CompletableFuture.failedFuture(new NullPointerException("async work returned a null stage"))
          : started.toCompletableFuture();
    } catch (Throwable t) {
      stage = CompletableFuture.failedFuture(t);
    }
    if (ticket.get() != number) {
      stage.cancel(true); // timed out or cancelled while it was starting
      return;
    }
    inFlight = stage;
    if (ticket.get() != number) {
      stage.cancel(true); // settled between the check and the hand-over
      return;
    }
    final CompletableFuture<T> started = stage;
    started.whenComplete((value, failure) -> completed(number, value, failure));
  }

  private void completed(int number, @Nullable T value, @Nullable Throwable failure) {
    if (!ticket.compareAndSet(number, SETTLED)) {
      return; // the timeout or the caller got there first
    }
    TimeSource.Scheduled t = timer;
    if (t != null) {
      t.cancel();
    }
    decide(value, unwrap(failure), false);
  }

  private void timedOut(int number) {
    if (!ticket.compareAndSet(number, SETTLED)) {
      return;
    }
    CompletableFuture<T> abandoned = inFlight;
    if (abandoned != null) {
      abandoned.cancel(true);
    }
    decide(null, null, true);
  }

  private void cancelledByCaller() {
    int number = ticket.get();
    boolean inAttempt = number != SETTLED && ticket.compareAndSet(number, SETTLED);
    if (inAttempt) {
      CompletableFuture<T> abandoned = inFlight;
      if (abandoned != null) {
        abandoned.cancel(true);
      }
    }
    TimeSource.Scheduled t = timer;
    if (t != null) {
      t.cancel();
    }
    synchronized (this) {
      if (call.stopReason == null) {
        if (inAttempt) {
          // the attempt in flight ends as cancelled, with the same events as in the sync driver
          call.afterAttempt(null, new CancellationException("call cancelled by the caller"), false, true, time.nanoTime());
        } else {
          call.cancelled(time.nanoTime());
        }
      }
    }
    finish();
  }

  private void decide(@Nullable T value, @Nullable Throwable failure, boolean timedOut) {
    int action;
    synchronized (this) {
      if (call.stopReason != null) {
        return; // the caller cancelled while this attempt settled
      }
      action = call.afterAttempt(value, failure, timedOut, false, time.nanoTime());
    }
    switch (action) {
      case Call.RETRY:
        if (call.delayNanos <= 0) {
          attempt();
        } else {
          timer = time.schedule(this::attempt, call.delayNanos);
        }
        break;
      case Call.PAUSE_THEN_STOP:
        timer = time.schedule(this::finish, call.delayNanos);
        break;
      default:
        finish();
    }
  }

  @SuppressWarnings("unchecked")
  private void finish() {
    Outcome<T> o;
    synchronized (this) {
      if (call.stopReason == null) {
        return;
      }
      o = call.toOutcome(time.nanoTime());
    }
    Throwable failure = o.failure().orElse(null);
    if (failure == null) {
      result.complete((T) call.lastResult);
    } else {
      result.completeExceptionally(failure);
    }
    outcome.complete(o);
  }

  private static @Nullable Throwable unwrap(@Nullable Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
