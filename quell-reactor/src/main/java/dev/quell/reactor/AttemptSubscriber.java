package dev.quell.reactor;

import dev.quell.internal.DirectStage;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * One attempt: a fresh subscription to the upstream publisher, seen by the core's asynchronous
 * driver as the attempt's stage. The driver learns how the attempt ended through {@link #whenDone}
 * (no dependent stage is hung on it), or, for a first attempt that answered while it was subscribed
 * to, from the future itself, which the first signal completes; it cancels it through
 * {@link #cancel}, which cancels the subscription. The first signal is told to the driver even
 * after a cancel, so that a value that still arrives goes to the policy's discard hook through the
 * core, exactly once.
 *
 * <p>A {@code Mono}'s attempt requests everything; a {@code Flux}'s requests one element, reports it
 * as the attempt's value and then holds: {@link QuellFlux} decides whether the stream goes on.
 *
 * <p>The Reactor context the upstream sees ({@link #currentContext}) is the subscriber's with the
 * attempt's {@link dev.quell.ResilienceContext}, which the core makes current only while it starts
 * the attempt. It is made when first asked for on the starting thread, or when the upstream's
 * {@code subscribe} returns ({@link #started}) unless a {@code Mono} has already answered: a
 * {@code Mono} that answers while it is subscribed to and never asks (most do not) costs no context.
 * A thread that asks while the attempt is still starting waits the moment it takes the starting
 * thread to return from {@code subscribe}.
 */
class AttemptSubscriber<T> extends CompletableFuture<T> implements CoreSubscriber<T>, DirectStage {
  private static final VarHandle PHASE;
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<AttemptSubscriber, Subscription> UPSTREAM_UPDATER =
      AtomicReferenceFieldUpdater.newUpdater(AttemptSubscriber.class, Subscription.class, "upstream");

  static {
    try {
      PHASE = MethodHandles.lookup().findVarHandle(AttemptSubscriber.class, "phase", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static final int SIGNALLED = 1;
  private static final int REGISTERED = 2;

  /** The subscriber's context, without the attempt's. */
  private final Context downstream;
  /** A Mono's attempt requests everything; a Flux's one element. */
  private final boolean requestAll;
  /**
   * The thread starting the attempt, until the context the upstream sees is made or
   * {@link #started} settles it; then that {@link Context} (the subscriber's own, for a {@code Mono}
   * that answered without asking). Written only by the starting thread while it holds a thread.
   */
  private volatile Object contextOrStarter;
  private volatile @Nullable Subscription upstream;
  /** SIGNALLED and REGISTERED bits: whoever sets the second one tells the driver. */
  private volatile int phase;
  private @Nullable BiFunction<@Nullable Object, @Nullable Throwable, ?> callback;
  /** The first signal's value, or its failure when {@link #failed}. */
  private @Nullable Object signal;
  private boolean failed;
  /** The first signal has been taken (written and read by the upstream's serial signals only). */
  boolean reported;

  /** An attempt for {@code downstream}'s subscriber, started on this thread while the core starts it. */
  AttemptSubscriber(Context downstream, boolean requestAll) {
    this.downstream = downstream;
    this.requestAll = requestAll;
    this.contextOrStarter = Thread.currentThread();
  }

  @Override
  public Context currentContext() {
    Object c = contextOrStarter;
    return c instanceof Context ? (Context) c : attemptContext();
  }

  private Context attemptContext() {
    while (true) {
      Object c = contextOrStarter;
      if (c instanceof Context) {
        return (Context) c;
      }
      if (c == Thread.currentThread()) {
        Context made = CallContext.forAttempt(downstream); // the core has the attempt's context current here
        contextOrStarter = made;
        return made;
      }
      Thread.onSpinWait(); // the starting thread is returning from subscribe and settles it now
    }
  }

  /**
   * The upstream's {@code subscribe} returned, on the starting thread: the attempt's context is
   * made now unless a {@code Mono} has answered already (nothing of it runs on; should anything
   * still ask, it gets the subscriber's).
   */
  final void started() {
    if (!(contextOrStarter instanceof Context)) {
      contextOrStarter = requestAll && reported ? downstream : CallContext.forAttempt(downstream);
    }
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.setOnce(UPSTREAM_UPDATER, this, s)) {
      s.request(requestAll ? Long.MAX_VALUE : 1);
    }
  }

  @Override
  public void onNext(T t) {
    if (reported) {
      Operators.onNextDropped(t, currentContext());
      return;
    }
    reported = true;
    report(t, null);
  }

  @Override
  public void onError(Throwable t) {
    if (reported) {
      Operators.onErrorDropped(t, currentContext());
      return;
    }
    reported = true;
    report(null, t);
  }

  @Override
  public void onComplete() {
    if (!reported) {
      reported = true;
      report(null, null);
    }
  }

  /**
   * Hands the attempt's end to the driver once both it and the driver's callback are here. The
   * future is completed with it too (unless the driver cancelled it first), so that a driver that
   * looks at a stage that answered while it was subscribed to sees the answer without a callback.
   */
  @SuppressWarnings("unchecked") // the first signal's value is the upstream's element
  final void report(@Nullable Object v, @Nullable Throwable f) {
    if (f != null) {
      super.completeExceptionally(f);
    } else {
      super.complete((T) v);
    }
    failed = f != null;
    signal = f != null ? f : v;
    int before = (int) PHASE.getAndBitwiseOr(this, SIGNALLED);
    if ((before & REGISTERED) != 0) {
      fire();
    }
  }

  @Override
  public void whenDone(BiFunction<@Nullable Object, @Nullable Throwable, ?> callback) {
    this.callback = callback;
    int before = (int) PHASE.getAndBitwiseOr(this, REGISTERED);
    if ((before & SIGNALLED) != 0) {
      fire();
    }
  }

  private void fire() {
    BiFunction<@Nullable Object, @Nullable Throwable, ?> cb = callback;
    Object v = failed ? null : signal;
    Throwable f = failed ? (Throwable) signal : null;
    signal = null;
    callback = null; // told once: the driver's record is not kept from here
    if (cb != null) {
      Object unused = cb.apply(v, f); // the driver's own hook: nothing to return
    }
  }

  /** Requests more from the upstream (a Flux that passes through). */
  final void request(long n) {
    Subscription s = upstream;
    if (s != null && s != Operators.cancelledSubscription()) {
      s.request(n);
    }
  }

  /** Cancels the subscription, once; a signal that still arrives is told to the driver as usual. */
  final void cancelUpstream() {
    Operators.terminate(UPSTREAM_UPDATER, this);
  }

  final boolean isUpstreamCancelled() {
    return upstream == Operators.cancelledSubscription();
  }

  /** The driver gave up on this attempt (a timeout, a hedge won, the call ended): stop its work. */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    cancelUpstream();
    return super.cancel(mayInterruptIfRunning);
  }
}
