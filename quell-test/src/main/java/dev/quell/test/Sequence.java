package dev.quell.test;

import dev.quell.Attempt;
import dev.quell.Resilience;
import dev.quell.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A scripted stand-in for a dependency: each call takes the next step of the script, which returns
 * a value, throws, or does either after a delay on a virtual clock. Use it as the work of a
 * synchronous call ({@link Callable}) or of an asynchronous one ({@link Resilience.AsyncWork}):
 *
 * <pre>{@code
 * VirtualTime time = VirtualTime.create();
 * Sequence<String> inventory = Sequence.<String>script(time)
 *     .thenThrow(new IOException("connection reset"))
 *     .thenReturnAfter(Duration.ofMillis(300), "slow")
 *     .thenReturn("ok");
 *
 * Outcome<String> outcome = policy.run(inventory);               // synchronous
 * CompletableFuture<String> f = policy.executeAsync(inventory);   // or asynchronous
 * }</pre>
 *
 * <p><b>Delays.</b> A synchronous delayed step sleeps on the sequence's {@link TimeSource}; on a
 * {@link VirtualTime} that advances the clock, and an attempt timeout scheduled on the same clock
 * interrupts the sleep exactly as it would interrupt blocked I/O: the step then throws
 * {@link InterruptedException} and never delivers its value. An asynchronous delayed step returns
 * at once a future that a timer on the clock completes after the delay (drive it with
 * {@link VirtualTime#advance} or {@link VirtualTime#runUntilIdle}); cancelling that future, as an
 * attempt timeout does, cancels the timer. Give the policy the same clock as the sequence.
 *
 * <p><b>Running past the script</b> fails loudly: the extra call throws (or, asynchronously,
 * completes with) an {@link AssertionError} that names the call and the script's length, and
 * {@link #assertFinished()} fails afterwards even if the policy swallowed the error into an
 * {@code Outcome}.
 *
 * <p>A sequence is a live test double: add steps before the calls that need them. It is
 * thread-safe; concurrent calls take steps in the order they arrive.
 *
 * @param <T> the type of value the scripted work returns
 */
public final class Sequence<T extends @Nullable Object> implements Callable<T>, Resilience.AsyncWork<T> {

  private final @Nullable TimeSource time;
  private final long createdAt;
  private final List<Step<T>> steps = new ArrayList<>();
  private final List<Duration> callTimes = new ArrayList<>();
  private int calls;
  private int overruns;

  private Sequence(@Nullable TimeSource time) {
    this.time = time;
    this.createdAt = time == null ? 0 : time.nanoTime();
  }

  /**
   * An empty script whose delayed steps wait on {@code time} (normally a {@link VirtualTime}, the
   * same one the policy under test uses).
   */
  public static <T extends @Nullable Object> Sequence<T> script(TimeSource time) {
    return new Sequence<>(Objects.requireNonNull(time, "time"));
  }

  /** An empty script without a clock: it can return and throw, but not delay. */
  public static <T extends @Nullable Object> Sequence<T> script() {
    return new Sequence<>(null);
  }

  // ---------------------------------------------------------------- script

  /** Adds a step that returns {@code value} (null too, for a {@code Sequence<@Nullable V>}). */
  public Sequence<T> thenReturn(T value) {
    return add(new Step<>(0, value, null, null));
  }

  /** Adds one step per value, each returning it. */
  @SafeVarargs
  public final Sequence<T> thenReturn(T first, T... more) {
    thenReturn(first);
    for (T value : more) {
      thenReturn(value);
    }
    return this;
  }

  /**
   * Adds a step that throws {@code failure}. Checked exceptions are thrown as they are, from
   * {@link #call()}; asynchronously the step's future completes with {@code failure}.
   */
  public Sequence<T> thenThrow(Throwable failure) {
    Objects.requireNonNull(failure, "failure");
    return add(new Step<>(0, null, failure, null));
  }

  /** Adds a step that throws a fresh exception from {@code failure} each time it runs (useful with {@link #times}). */
  public Sequence<T> thenThrow(Supplier<? extends Throwable> failure) {
    Objects.requireNonNull(failure, "failure");
    return add(new Step<>(0, null, null, failure));
  }

  /** Adds a step that returns {@code value} after {@code delay} on the sequence's clock. */
  public Sequence<T> thenReturnAfter(Duration delay, T value) {
    return add(new Step<>(delayNanos(delay), value, null, null));
  }

  /** Adds a step that throws {@code failure} after {@code delay} on the sequence's clock. */
  public Sequence<T> thenThrowAfter(Duration delay, Throwable failure) {
    Objects.requireNonNull(failure, "failure");
    return add(new Step<>(delayNanos(delay), null, failure, null));
  }

  /**
   * Repeats the last step added so that it runs {@code count} times in all: {@code
   * thenThrow(new IOException()).times(3)} throws three times.
   *
   * @param count at least 1
   * @throws IllegalStateException when the script is empty
   */
  public Sequence<T> times(int count) {
    if (count < 1) {
      throw new IllegalArgumentException("times: count must be at least 1, was " + count);
    }
    synchronized (this) {
      if (steps.isEmpty()) {
        throw new IllegalStateException("times(" + count + ") needs a step before it to repeat");
      }
      Step<T> last = steps.get(steps.size() - 1);
      for (int i = 1; i < count; i++) {
        steps.add(last);
      }
    }
    return this;
  }

  private long delayNanos(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative, was " + delay);
    }
    if (time == null) {
      throw new IllegalStateException(
          "a delayed step needs a clock: create the sequence with Sequence.script(time), giving it the policy's VirtualTime");
    }
    return KitSupport.saturatedNanos(delay);
  }

  private synchronized Sequence<T> add(Step<T> step) {
    steps.add(step);
    return this;
  }

  // ---------------------------------------------------------------- running

  /**
   * Runs the next step on the calling thread: returns its value or throws its failure, after
   * sleeping its delay on the clock.
   *
   * @throws InterruptedException when the thread is interrupted during a delayed step (an attempt
   *     timeout on the same clock does this)
   * @throws AssertionError when the script has no step left
   */
  @Override
  public T call() throws Exception {
    Step<T> step = next();
    if (step.delayNanos > 0) {
      requireTime().sleep(step.delayNanos);
    }
    Throwable failure = step.failure();
    if (failure != null) {
      throw KitSupport.<Exception>sneaky(failure);
    }
    return step.value();
  }

  /**
   * Runs the next step asynchronously: returns a future that is already complete for a step without
   * delay, or one that a timer on the clock completes after the delay. Cancelling the future cancels
   * its timer. Running past the script returns a future failed with an {@link AssertionError}.
   */
  @Override
  public CompletableFuture<T> start(Attempt attempt) {
    return startNext();
  }

  /** This sequence as a {@link Supplier} of futures, for APIs that take one (such as {@code Resilience.executeAsync(Supplier)}). */
  public Supplier<CompletableFuture<T>> asSupplier() {
    return this::startNext;
  }

  private CompletableFuture<T> startNext() {
    Step<T> step;
    try {
      step = next();
    } catch (AssertionError overrun) {
      return CompletableFuture.failedFuture(overrun);
    }
    if (step.delayNanos == 0) {
      Throwable failure = step.failure();
      return failure != null ? CompletableFuture.failedFuture(failure) : CompletableFuture.completedFuture(step.value());
    }
    CompletableFuture<T> future = new CompletableFuture<>();
    TimeSource.Scheduled timer = requireTime().schedule(() -> {
      Throwable failure = step.failure();
      if (failure != null) {
        future.completeExceptionally(failure);
      } else {
        future.complete(step.value());
      }
    }, step.delayNanos);
    future.whenComplete((v, t) -> {
      if (future.isCancelled()) {
        timer.cancel(); // abandoned by an attempt timeout or the caller: nothing left to deliver
      }
    });
    return future;
  }

  private Step<T> next() {
    synchronized (this) {
      calls++;
      if (time != null) {
        callTimes.add(Duration.ofNanos(time.nanoTime() - createdAt));
      }
      if (calls <= steps.size()) {
        return steps.get(calls - 1);
      }
      overruns++;
    }
    throw new AssertionError(overrunMessage());
  }

  private synchronized String overrunMessage() {
    return "Sequence ran past its script: call " + calls + ", but the script has only " + steps.size()
        + (steps.size() == 1 ? " step" : " steps") + " " + steps;
  }

  private TimeSource requireTime() {
    TimeSource t = time;
    if (t == null) {
      throw new IllegalStateException("unreachable: delayed steps are only accepted with a clock");
    }
    return t;
  }

  // ---------------------------------------------------------------- checks

  /** How many times the sequence was called (synchronously or asynchronously), calls past the script included. */
  public synchronized int calls() {
    return calls;
  }

  /**
   * When each call started, measured on the sequence's clock from the moment the script was created;
   * empty for a sequence without a clock. The gaps between entries are the policy's backoff (plus
   * the delays of the steps before).
   */
  public synchronized List<Duration> callTimes() {
    return List.copyOf(callTimes);
  }

  /** Steps not yet run. */
  public synchronized int remaining() {
    return Math.max(0, steps.size() - calls);
  }

  /** The number of steps in the script. */
  public synchronized int size() {
    return steps.size();
  }

  /**
   * Asserts that every step ran and none was asked for beyond the script.
   *
   * @throws AssertionError naming the calls made and the script's length
   */
  public synchronized void assertFinished() {
    if (overruns > 0) {
      throw new AssertionError("Sequence ran past its script " + overruns + (overruns == 1 ? " time" : " times")
          + ": " + calls + " calls, but the script has only " + steps.size()
          + (steps.size() == 1 ? " step" : " steps"));
    }
    if (calls < steps.size()) {
      throw new AssertionError("Sequence was called " + calls + (calls == 1 ? " time" : " times") + ", but the script has "
          + steps.size() + " steps; not run: " + steps.subList(calls, steps.size()));
    }
  }

  @Override
  public synchronized String toString() {
    return "Sequence[" + calls + "/" + steps.size() + " called, " + steps + "]";
  }

  /** One scripted step. Immutable, so a repeated step is the same object. */
  private static final class Step<T extends @Nullable Object> {
    final long delayNanos;
    final @Nullable T value;
    final @Nullable Throwable fixedFailure;
    final @Nullable Supplier<? extends Throwable> failureFactory;

    Step(long delayNanos, @Nullable T value, @Nullable Throwable fixedFailure,
        @Nullable Supplier<? extends Throwable> failureFactory) {
      this.delayNanos = delayNanos;
      this.value = value;
      this.fixedFailure = fixedFailure;
      this.failureFactory = failureFactory;
    }

    /** The value of a returning step (a failing step's is never read). */
    @SuppressWarnings("NullAway") // value is null only on failing steps, whose value is never returned
    T value() {
      return value;
    }

    @Nullable Throwable failure() {
      if (fixedFailure != null) {
        return fixedFailure;
      }
      Supplier<? extends Throwable> factory = failureFactory;
      return factory == null ? null
          : Objects.requireNonNull(factory.get(), "Sequence.thenThrow(Supplier): the supplier returned null");
    }

    @Override
    public String toString() {
      String what = fixedFailure != null ? "throw " + fixedFailure
          : failureFactory != null ? "throw (supplied)" : "return " + value;
      return delayNanos == 0 ? what : what + " after " + Duration.ofNanos(delayNanos).toMillis() + "ms";
    }
  }
}
