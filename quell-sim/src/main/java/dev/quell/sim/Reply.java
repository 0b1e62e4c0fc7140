package dev.quell.sim;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 */
final class Reply extends CompletableFuture<Object> implements Runnable {
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
    return super.complete(Node.OK);
  }

  /** Fails the attempt with {@code wrapped} (made by {@link #wrap}). */
  boolean fail(CompletionException wrapped) {
    if (isDone()) {
      return false;
    }
    call.lastAttemptEnded = call.edge.engine.clock.nanoTime();
    return super.completeExceptionally(wrapped);
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
