package dev.quell.reactor;

import dev.quell.Attempt;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.internal.OutcomeReceiver;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * A {@code Flux} run under a policy until its first element: each attempt subscribes afresh and asks
 * for one element, which is the attempt's value for the core (classified like any value). The
 * attempt whose first element ends the call is adopted: its element is delivered and its stream
 * passes through from then on, with the subscriber's demand; failures after it are not retried.
 */
final class QuellFlux<T> extends FluxOperator<T, T> {
  private final Resilience policy;

  QuellFlux(Flux<T> source, Resilience policy) {
    super(source);
    this.policy = policy;
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    FluxCall<T> call = new FluxCall<>(actual, source, policy);
    actual.onSubscribe(call);
    call.start();
  }

  static final class FluxCall<T> implements Subscription, Resilience.AsyncWork<T>, OutcomeReceiver {
    private static final VarHandle CALL;
    private static final VarHandle REQUESTED;
    private static final VarHandle HEAD_SENT;
    private static final CompletableFuture<?> CANCELLED = new CompletableFuture<>();
    /** {@link #requested} once the adopted stream takes the subscriber's demand directly. */
    private static final long PASSING = Long.MIN_VALUE;

    static {
      try {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        CALL = lookup.findVarHandle(FluxCall.class, "call", CompletableFuture.class);
        REQUESTED = lookup.findVarHandle(FluxCall.class, "requested", long.class);
        HEAD_SENT = lookup.findVarHandle(FluxCall.class, "headSent", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final CoreSubscriber<? super T> actual;
    private final Flux<? extends T> source;
    private final Resilience policy;
    private final Context context;
    private final boolean hedged;
    /** Attempts started and not yet let go; guarded by itself. */
    private final List<FluxAttempt<T>> attempts = new ArrayList<>(2);
    private volatile @Nullable CompletableFuture<?> call;
    /** The subscriber's demand until the first element is delivered; then {@link #PASSING}. */
    private volatile long requested;
    private volatile @Nullable FluxAttempt<T> adopted;
    private volatile int headSent;
    private volatile boolean cancelled;

    FluxCall(CoreSubscriber<? super T> actual, Flux<? extends T> source, Resilience policy) {
      this.actual = actual;
      this.source = source;
      this.policy = policy;
      this.context = actual.currentContext();
      this.hedged = policy.hedge().isPresent();
    }

    void start() {
      if (cancelled) {
        return;
      }
      CompletableFuture<?> f = CallContext.start(policy, this, context, actual);
      if (f != null && !CALL.compareAndSet(this, null, f)) {
        f.cancel(true); // cancelled while the call was starting
      }
    }

    @Override
    public CompletionStage<T> start(Attempt attempt) {
      if (cancelled) {
        // cancelled while the call was starting: no new subscription; the core ends the call cancelled
        return CompletableFuture.failedFuture(new CancellationException("the subscriber cancelled"));
      }
      FluxAttempt<T> s = new FluxAttempt<>(this, context);
      synchronized (attempts) {
        if (!hedged) {
          // one attempt at a time: the one before has ended, and a first element of it was refused
          for (FluxAttempt<T> before : attempts) {
            before.cancelUpstream();
          }
          attempts.clear();
        }
        attempts.add(s);
      }
      try {
        source.subscribe(s);
      } finally {
        s.started(); // a Flux's attempt runs on after its first element: its context is made now
      }
      return s;
    }

    @Override
    public void callEnded(Outcome<?> outcome, long elapsedNanos) {
      Object v = outcome.value();
      FluxAttempt<T> winner = null;
      synchronized (attempts) {
        if (outcome.failure().isEmpty() && v != null) {
          for (FluxAttempt<T> a : attempts) {
            if (a.head == v && !a.isUpstreamCancelled()) {
              winner = a;
              break;
            }
          }
        }
        for (FluxAttempt<T> a : attempts) {
          if (a != winner) {
            a.cancelUpstream();
          }
        }
        attempts.clear();
      }
      if (cancelled) {
        if (winner != null) {
          winner.cancelUpstream();
        }
        return; // a subscriber that cancelled asked for nothing more, a failure included
      }
      Throwable failure = outcome.failure().orElse(null);
      if (failure != null) {
        actual.onError(failure);
      } else if (winner == null) {
        actual.onComplete(); // the stream ended without an element
      } else {
        adopted = winner;
        if (cancelled) {
          winner.cancelUpstream(); // cancelled while it was being adopted
        } else {
          sendHead();
        }
      }
    }

    /** Delivers the adopted stream's first element once there is demand, then lets its stream through. */
    private void sendHead() {
      FluxAttempt<T> a = adopted;
      if (a == null || requested == 0 || !HEAD_SENT.compareAndSet(this, 0, 1)) {
        return;
      }
      @SuppressWarnings("unchecked")
      T head = (T) a.head;
      a.head = null;
      actual.onNext(head);
      a.startPassing(); // before any demand reaches its upstream, so no element finds it holding
      long r = (long) REQUESTED.getAndSet(this, PASSING);
      if (r == Long.MAX_VALUE) {
        a.request(Long.MAX_VALUE);
      } else if (r > 1) {
        a.request(r - 1);
      }
    }

    @Override
    public void request(long n) {
      if (!Operators.validate(n)) {
        return;
      }
      for (;;) {
        long r = requested;
        if (r == PASSING) {
          FluxAttempt<T> a = adopted;
          if (a != null) {
            a.request(n);
          }
          return;
        }
        if (REQUESTED.compareAndSet(this, r, Operators.addCap(r, n))) {
          break;
        }
      }
      sendHead();
    }

    @Override
    public void cancel() {
      cancelled = true;
      CompletableFuture<?> f = (CompletableFuture<?>) CALL.getAndSet(this, CANCELLED);
      if (f != null && f != CANCELLED) {
        f.cancel(true);
      }
      FluxAttempt<T> a = adopted;
      if (a != null) {
        a.cancelUpstream();
      }
    }

    void passNext(T t) {
      actual.onNext(t);
    }

    void passError(Throwable t) {
      actual.onError(t);
    }

    void passComplete() {
      actual.onComplete();
    }
  }

  /**
   * A Flux's attempt: reports its first signal to the core, then holds until adopted; a terminal
   * signal that arrives while it holds is kept and delivered after the first element.
   */
  static final class FluxAttempt<T> extends AttemptSubscriber<T> {
    private static final VarHandle TERMINAL;
    private static final Object NONE = new Object();
    private static final Object PASS = new Object();
    private static final Object COMPLETE = new Object();

    static {
      try {
        TERMINAL = MethodHandles.lookup().findVarHandle(FluxAttempt.class, "terminal", Object.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final FluxCall<T> parent;
    /** The first element, kept for the subscriber until it is delivered. */
    volatile @Nullable Object head;
    /** NONE; a kept terminal (COMPLETE or a Throwable); or PASS once signals go straight through. */
    private volatile Object terminal = NONE;

    FluxAttempt(FluxCall<T> parent, Context context) {
      super(context, false);
      this.parent = parent;
    }

    @Override
    public void onNext(T t) {
      if (!reported) {
        head = t;
        reported = true;
        report(t, null);
      } else if (terminal == PASS) {
        parent.passNext(t);
      } else {
        Operators.onNextDropped(t, currentContext());
      }
    }

    @Override
    public void onError(Throwable t) {
      if (!reported) {
        super.onError(t);
      } else if (!TERMINAL.compareAndSet(this, NONE, t)) {
        if (terminal == PASS) {
          parent.passError(t);
        } else {
          Operators.onErrorDropped(t, currentContext());
        }
      }
    }

    @Override
    public void onComplete() {
      if (!reported) {
        super.onComplete();
      } else if (!TERMINAL.compareAndSet(this, NONE, COMPLETE) && terminal == PASS) {
        parent.passComplete();
      }
    }

    /** The first element has been delivered: from now on signals go to the subscriber. */
    void startPassing() {
      Object kept = TERMINAL.getAndSet(this, PASS);
      if (kept == COMPLETE) {
        parent.passComplete();
      } else if (kept instanceof Throwable) {
        parent.passError((Throwable) kept);
      }
    }
  }
}
