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
 * (no dependent stage is hung on it), and cancels it through {@link #cancel}, which cancels the
 * subscription. The future itself is never completed otherwise: its end is the first signal, told
 * to the driver even after a cancel, so that a value that still arrives goes to the policy's
 * discard hook through the core, exactly once.
 *
 * <p>A {@code Mono}'s attempt requests everything; a {@code Flux}'s requests one element, reports it
 * as the attempt's value and then holds: {@link FluxHead} decides whether the stream goes on.
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

  private final Context context;
  private final long initialRequest;
  private volatile @Nullable Subscription upstream;
  /** SIGNALLED and REGISTERED bits: whoever sets the second one tells the driver. */
  private volatile int phase;
  private @Nullable BiFunction<@Nullable Object, @Nullable Throwable, ?> callback;
  private @Nullable Object value;
  private @Nullable Throwable failure;
  /** The first signal has been taken (written and read by the upstream's serial signals only). */
  boolean reported;

  AttemptSubscriber(Context context, long initialRequest) {
    this.context = context;
    this.initialRequest = initialRequest;
  }

  @Override
  public Context currentContext() {
    return context;
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.setOnce(UPSTREAM_UPDATER, this, s)) {
      s.request(initialRequest);
    }
  }

  @Override
  public void onNext(T t) {
    if (reported) {
      Operators.onNextDropped(t, context);
      return;
    }
    reported = true;
    report(t, null);
  }

  @Override
  public void onError(Throwable t) {
    if (reported) {
      Operators.onErrorDropped(t, context);
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

  /** Hands the attempt's end to the driver once both it and the driver's callback are here. */
  final void report(@Nullable Object v, @Nullable Throwable f) {
    value = v;
    failure = f;
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
    Object v = value;
    Throwable f = failure;
    value = null;
    failure = null;
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
