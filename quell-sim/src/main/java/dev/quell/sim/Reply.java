package dev.quell.sim;

import dev.quell.internal.DirectStage;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * The future of one simulated attempt, and, at a dependency, the attempt itself: its place in the
 * queue, whether it will fail, and the event that ends its service ({@link #run}).
 *
 * <p>Failures complete it with a shared {@link CompletionException} that wraps the
 * {@link SimulatedFailure}. A dependent stage (the driver's {@code whenComplete}) passes such a
 * wrapper on as it is; given a bare exception it would wrap it in a new {@code CompletionException}
 * with a fresh stack trace, once per failed attempt. The policy's driver unwraps it, so classifiers
 * see the {@code SimulatedFailure}. Abandoning the attempt ({@link #cancel}) completes it the same
 * way with a shared cancellation, for the same reason; nothing reads {@code isCancelled()} on it.
 *
 * <p>The policy's driver hears of the end through {@link DirectStage}, not through a dependent
 * stage: the callback it would have hung on the future is called directly, at the same moment, so a
 * simulated attempt costs two objects and three or four CAS less.
 */
final class Reply extends CompletableFuture<Object> implements Runnable, DirectStage {
  /** Shared by every abandoned attempt: made once, never thrown to a caller. */
  private static final CompletionException CANCELLED =
      wrap(new CancellationException("the policy abandoned the attempt"));

  final Edge.Call call;
  /** True when the attempt is a hedge: its success is a hedge that won. */
  final boolean hedge;
  /** Where it is being served; null until it reaches a dependency. */
  @Nullable DependencyNode at;
  /** Its place in the dependency's queue (every attempt that ever waited there is numbered). */
  long seq;
  /** True while it waits in a dependency's queue. */
  boolean queued;
  /** Drawn when its service starts: whether the dependency fails it. */
  boolean fails;
  /** The policy's driver, told of the end directly ({@link DirectStage}); null until it asks, and after. */
  private @Nullable BiFunction<@Nullable Object, @Nullable Throwable, ?> driver;
  /** What it failed with, once it has. */
  private @Nullable CompletionException failure;

  Reply(Edge.Call call, boolean hedge) {
    this.call = call;
    this.hedge = hedge;
  }

  /** A stackless wrapper, shared: completing with it costs no allocation downstream. */
  static CompletionException wrap(Throwable failure) {
    return new Shared(failure);
  }

  /** Ends its service at the dependency. */
  @Override
  public void run() {
    DependencyNode node = at;
    if (node != null) {
      node.finish(this);
    }
  }

  /** Answers the attempt; notes when its call's last attempt ended, unless the policy had abandoned it. */
  boolean succeed() {
    if (isDone()) {
      return false;
    }
    call.lastAttemptEnded = call.edge.engine.clock.nanoTime();
    if (hedge) {
      call.edge.hedgesWon++; // the first answer wins: the others are cancelled as this one completes
    }
    super.complete(Node.OK);
    tell(Node.OK, null);
    return true;
  }

  /** Fails the attempt with {@code wrapped} (made by {@link #wrap}). */
  boolean fail(CompletionException wrapped) {
    if (isDone()) {
      return false;
    }
    call.lastAttemptEnded = call.edge.engine.clock.nanoTime();
    failure = wrapped;
    super.completeExceptionally(wrapped);
    tell(null, wrapped);
    return true;
  }

  /**
   * The driver's callback, as a dependent {@code handle} stage would have run it, without the stage:
   * at once if the attempt has ended already (it was refused as it was sent), else when it ends.
   */
  @Override
  public void whenDone(BiFunction<@Nullable Object, @Nullable Throwable, ?> callback) {
    if (isDone()) {
      CompletionException f = failure;
      Object unused = callback.apply(f == null ? Node.OK : null, f); // (the driver's own hook: nothing to return)
    } else {
      driver = callback;
    }
  }

  private void tell(@Nullable Object value, @Nullable Throwable failed) {
    BiFunction<@Nullable Object, @Nullable Throwable, ?> d = driver;
    if (d != null) {
      driver = null;
      try {
        Object unused = d.apply(value, failed);
      } catch (RuntimeException | Error e) {
        call.edge.engine.failed(e); // a dependent stage would have swallowed it: a run should not
      }
    }
  }

  @Override
  public boolean complete(@Nullable Object value) {
    return succeed();
  }

  @Override
  public boolean completeExceptionally(Throwable failure) {
    return fail(failure instanceof CompletionException ? (CompletionException) failure : wrap(failure));
  }

  /** The policy abandoned the attempt (its timeout, or the call cancelled); the dependency keeps the work. */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (!fail(CANCELLED)) {
      return false;
    }
    DependencyNode node = at;
    if (queued && node != null) {
      node.abandoned();
    }
    return true;
  }

  private static final class Shared extends CompletionException {
    private static final long serialVersionUID = 1L;

    Shared(Throwable cause) {
      super(cause.getMessage(), cause);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
