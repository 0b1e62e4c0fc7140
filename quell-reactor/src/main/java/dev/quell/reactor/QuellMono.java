package dev.quell.reactor;

import dev.quell.Attempt;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.internal.OutcomeReceiver;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/** A {@code Mono} run under a policy: each attempt a fresh subscription, the call the core's asynchronous one. */
final class QuellMono<T> extends MonoOperator<T, T> {
  private final Resilience policy;

  QuellMono(Mono<T> source, Resilience policy) {
    super(source);
    this.policy = policy;
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    MonoCall<T> call = new MonoCall<>(actual, source, policy);
    actual.onSubscribe(call);
    call.start();
  }

  /**
   * The subscriber's side of one call: the work the core starts per attempt, and the receiver of the
   * call's outcome, which it passes on as Reactor signals.
   */
  static final class MonoCall<T> extends Operators.MonoSubscriber<T, T> implements Resilience.AsyncWork<T>, OutcomeReceiver {
    private static final VarHandle CALL;
    private static final CompletableFuture<?> CANCELLED = new CompletableFuture<>();

    static {
      try {
        CALL = MethodHandles.lookup().findVarHandle(MonoCall.class, "call", CompletableFuture.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final Mono<? extends T> source;
    private final Resilience policy;
    private final Context context;
    /** The core's future for the call; cancelling it is the caller's cancellation. */
    private volatile @Nullable CompletableFuture<?> call;

    MonoCall(CoreSubscriber<? super T> actual, Mono<? extends T> source, Resilience policy) {
      super(actual);
      this.source = source;
      this.policy = policy;
      this.context = actual.currentContext();
    }

    void start() {
      if (isCancelled()) {
        return;
      }
      CompletableFuture<?> f = CallContext.start(policy, this, context, actual);
      if (f != null && !CALL.compareAndSet(this, null, f)) {
        f.cancel(true); // cancelled while the call was starting
      }
    }

    @Override
    public CompletionStage<T> start(Attempt attempt) {
      if (isCancelled()) {
        // cancelled while the call was starting (before the core's future was here to cancel): no
        // new subscription; the core ends the call as the caller's cancellation
        return CompletableFuture.failedFuture(new CancellationException("the subscriber cancelled"));
      }
      AttemptSubscriber<T> s = new AttemptSubscriber<>(context, true);
      try {
        source.subscribe(s);
      } finally {
        s.started();
      }
      return s;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void callEnded(Outcome<?> outcome, long elapsedNanos) {
      Throwable failure = outcome.failure().orElse(null);
      if (failure != null) {
        // a subscriber that cancelled asked for nothing more: the failure is not an error to report
        // (the core has accounted it, and listeners have heard of it)
        if (!isCancelled()) {
          actual.onError(failure);
        }
        return;
      }
      Object v = outcome.value();
      if (v == null) {
        if (!isCancelled()) {
          actual.onComplete();
        }
      } else {
        complete((T) v); // waits for demand; a cancelled subscriber's value goes to Reactor's discard hook
      }
    }

    @Override
    public void cancel() {
      super.cancel();
      CompletableFuture<?> f = (CompletableFuture<?>) CALL.getAndSet(this, CANCELLED);
      if (f != null && f != CANCELLED) {
        f.cancel(true);
      }
    }

    @Override
    public Context currentContext() {
      return context;
    }
  }
}
