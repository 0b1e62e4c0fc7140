package dev.quell.grpc;

import dev.quell.Attempt;
import dev.quell.AttemptTimeoutException;
import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.StopReason;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A unary or server-streaming call run under a Quell policy: each attempt is a fresh
 * {@link ClientCall} on the next channel, replaying the buffered start headers, request(n) total,
 * message and half-close. Nothing reaches the application's listener until the policy has decided
 * the attempt (gRFC A6's commit rule): a unary attempt is decided when it closes, a server-streaming
 * attempt at its first response message (or its close, if none came). The winning attempt's
 * headers and buffered messages are then delivered, and a server stream goes on passing through.
 *
 * <p>Every event — the application's calls, each attempt's callbacks, the policy's decisions — runs
 * as a task on one {@link SerialQueue}, so the state below is touched by one thread at a time and
 * needs no lock. Events the policy raises from its timer thread (an attempt timeout, a retry after
 * its backoff, the end of a guarded pause) drain on {@code elsewhere}, never on the timer thread.
 */
final class RetryingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
  private static final System.Logger LOG = System.getLogger("dev.quell.grpc");

  private final MethodDescriptor<ReqT, RespT> method;
  private final CallOptions callOptions;
  private final Channel next;
  private final Context grpcContext;
  private final ResilienceContext ambient;
  private final Resilience policy;
  private final long slackNanos;
  private final ResilienceInterceptor owner;
  private final Executor elsewhere;
  /** Set when the caller gave the call an executor: the attempts' and the policy's, retired at the close. */
  private final @Nullable LiveCallExecutor live;
  /** The caller's options with the attempts' executor: each attempt adds only its wire deadline. */
  private final CallOptions attemptOptions;
  private final boolean streaming;
  private final SerialQueue queue = new SerialQueue();

  // checked on the application's thread, to fail fast on misuse as grpc-java's own calls do
  private volatile boolean startCalled;
  private volatile boolean halfCloseCalled;

  // touched only by queue tasks
  private ClientCall.@Nullable Listener<RespT> app;
  private @Nullable Metadata headers;
  private final List<ReqT> messages = new ArrayList<>(1);
  private int requested;
  private @Nullable Boolean compression;
  private boolean appClosed;
  private @Nullable Status cancelled;
  private @Nullable CompletableFuture<Outcome<AttemptCall>> outcome;
  private final Context.CancellationListener contextCancelled = this::contextCancelled;

  // also read by isReady() and getAttributes() on the application's thread
  private volatile @Nullable AttemptCall current;
  private volatile @Nullable AttemptCall winner;

  RetryingCall(MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next, Context grpcContext,
      ResilienceContext ambient, Resilience policy, long slackNanos, ResilienceInterceptor owner) {
    this.method = method;
    this.callOptions = callOptions;
    this.next = next;
    this.grpcContext = grpcContext;
    this.ambient = ambient;
    this.policy = policy;
    this.slackNanos = slackNanos;
    this.owner = owner;
    Executor executor = callOptions.getExecutor();
    if (executor == null) {
      // the attempts run on the channel's executor, which outlives the call
      this.live = null;
      this.elsewhere = ForkJoinPool.commonPool();
      this.attemptOptions = callOptions;
    } else {
      // the caller's executor may stop when the call ends (a blocking stub's does): see LiveCallExecutor
      LiveCallExecutor attempts = new LiveCallExecutor(executor, ForkJoinPool.commonPool());
      this.live = attempts;
      this.elsewhere = attempts;
      this.attemptOptions = callOptions.withExecutor(attempts);
    }
    this.streaming = method.getType() == MethodDescriptor.MethodType.SERVER_STREAMING;
  }

  // ---------------------------------------------------------------- the application's side

  @Override
  public void start(Listener<RespT> responseListener, Metadata headers) {
    Objects.requireNonNull(responseListener, "responseListener");
    Objects.requireNonNull(headers, "headers");
    if (startCalled) {
      throw new IllegalStateException("Already started");
    }
    startCalled = true;
    queue.execute(() -> {
      this.app = responseListener;
      this.headers = headers;
      Status c = cancelled;
      if (c != null) {
        deliverClose(c, new Metadata()); // cancelled before it started
      }
    });
  }

  @Override
  public void request(int numMessages) {
    if (numMessages < 0) {
      throw new IllegalArgumentException("numMessages was " + numMessages + ": must not be negative");
    }
    queue.execute(() -> {
      requested = (int) Math.min(Integer.MAX_VALUE, (long) requested + numMessages);
      AttemptCall w = winner;
      AttemptCall target = w != null ? w : current;
      if (target != null && target.isLive()) {
        target.call().request(numMessages);
      }
    });
  }

  @Override
  public void sendMessage(ReqT message) {
    if (!startCalled) {
      throw new IllegalStateException("Not started");
    }
    if (halfCloseCalled) {
      throw new IllegalStateException("Call was half-closed");
    }
    queue.execute(() -> messages.add(message));
  }

  @Override
  public void halfClose() {
    if (!startCalled) {
      throw new IllegalStateException("Not started");
    }
    if (halfCloseCalled) {
      throw new IllegalStateException("Already half-closed");
    }
    halfCloseCalled = true;
    queue.execute(this::begin);
  }

  @Override
  public void cancel(@Nullable String message, @Nullable Throwable cause) {
    Status status = Status.CANCELLED
        .withDescription(message != null ? message : cause == null ? "Cancelled without a message or cause" : null)
        .withCause(cause);
    queue.execute(() -> {
      if (appClosed || cancelled != null) {
        return;
      }
      cancelled = status;
      AttemptCall w = winner;
      if (w != null) {
        w.call().cancel(message, cause); // a committed stream: its close reaches the listener as usual
        return;
      }
      CompletableFuture<Outcome<AttemptCall>> o = outcome;
      if (o == null) {
        if (app != null) {
          deliverClose(status, new Metadata()); // nothing started yet
        }
        return;
      }
      // the policy ends the call as CANCELLED and abandons the attempt in flight; finished() tells the listener
      o.cancel(false);
    });
  }

  @Override
  public boolean isReady() {
    AttemptCall w = winner;
    if (w != null) {
      return w.isLive() && w.call().isReady();
    }
    return !halfCloseCalled; // until half-close every message is buffered
  }

  @Override
  public void setMessageCompression(boolean enabled) {
    queue.execute(() -> {
      compression = enabled;
      AttemptCall c = winner != null ? winner : current;
      if (c != null && c.isLive()) {
        c.call().setMessageCompression(enabled);
      }
    });
  }

  @Override
  public Attributes getAttributes() {
    AttemptCall c = winner != null ? winner : current;
    ClientCall<ReqT, RespT> call = c == null ? null : c.call;
    return call == null ? Attributes.EMPTY : call.getAttributes();
  }

  @Override
  public String toString() {
    return "RetryingCall[" + method.getFullMethodName() + ", policy=" + policy.name() + "]";
  }

  // ---------------------------------------------------------------- the policy's side

  /** Half-closed: run the call under the policy, the caller's deadline counting as an ambient one. */
  private void begin() {
    if (appClosed || cancelled != null) {
      return;
    }
    ResilienceContext context = ambient;
    Deadline caller = callerDeadline();
    if (caller != null) {
      context = context.withDeadline(
          Duration.ofNanos(Math.max(0, caller.timeRemaining(TimeUnit.NANOSECONDS))), policy.timeSource());
    }
    CompletableFuture<Outcome<AttemptCall>> o;
    try (ResilienceContext.Scope scope = context.open()) {
      o = policy.runAsync(this::attemptStarting);
    }
    outcome = o;
    grpcContext.addListener(contextCancelled, Runnable::run);
    o.whenComplete((result, failure) -> fromPolicy(() -> finished(result, failure)));
  }

  /** The policy starts an attempt: returns its future at once; the call itself starts on the queue. */
  private CompletionStage<AttemptCall> attemptStarting(Attempt attempt) {
    AttemptCall a = new AttemptCall(attempt.number());
    a.future.whenComplete((v, failure) -> {
      if (failure instanceof CancellationException) {
        fromPolicy(() -> abandon(a)); // timed out, or the call was cancelled
      }
    });
    fromPolicy(() -> startAttempt(a, attempt));
    return a.future;
  }

  private void startAttempt(AttemptCall a, Attempt attempt) {
    if (a.future.isDone() || appClosed) {
      return; // abandoned before it could start
    }
    current = a;
    Metadata h = new Metadata();
    Metadata original = headers;
    if (original != null) {
      h.merge(original);
    }
    if (a.number > 1) {
      h.discardAll(QuellMetadata.PREVIOUS_RPC_ATTEMPTS);
      h.put(QuellMetadata.PREVIOUS_RPC_ATTEMPTS, Integer.toString(a.number - 1));
    }
    if (ambient.hasCriticality() && !h.containsKey(QuellMetadata.CRITICALITY)) {
      h.put(QuellMetadata.CRITICALITY, ambient.criticality().wireName());
    }
    Context previous = grpcContext.attach(); // the attempt belongs to the caller's gRPC Context, on any thread
    try {
      ClientCall<ReqT, RespT> call = next.newCall(method, optionsFor(attempt));
      a.call = call;
      call.start(a, h);
      if (compression != null) {
        call.setMessageCompression(compression);
      }
      if (requested > 0) {
        call.request(requested);
      }
      for (ReqT m : messages) {
        call.sendMessage(m);
      }
      call.halfClose();
    } catch (RuntimeException | Error e) {
      ClientCall<ReqT, RespT> call = a.call;
      if (call != null) {
        call.cancel("the attempt failed to start", e);
      }
      a.decided = true;
      a.future.completeExceptionally(e);
    } finally {
      grpcContext.detach(previous);
    }
  }

  /**
   * The wire deadline of an attempt. Unary: its ceiling (the attempt timeout, or the time left if
   * less) plus the slack, so the policy's own timer normally decides and the server still learns when
   * to give up. Server streaming: the policy bounds only the wait for the first response, so the wire
   * carries the caller's deadlines, not the ceiling (a stream may outlive one attempt's timeout). Either
   * way, never later than the caller's own deadline, and a shorter one of the caller's is kept as is.
   */
  private CallOptions optionsFor(Attempt attempt) {
    long bound;
    if (streaming) {
      bound = policy.useAmbientDeadline() ? ambient.remaining().map(Deadlines::nanos).orElse(Long.MAX_VALUE) : Long.MAX_VALUE;
    } else {
      long ceiling = Deadlines.nanos(attempt.timeout());
      bound = ceiling == Long.MAX_VALUE ? Long.MAX_VALUE : Deadlines.saturatedAdd(ceiling, slackNanos);
    }
    Deadline caller = callOptions.getDeadline();
    Deadline wire = Deadlines.wire(caller, bound, Deadline.getSystemTicker());
    return wire == caller ? attemptOptions : attemptOptions.withDeadline(wire);
  }

  private void abandon(AttemptCall a) {
    if (a.abandoned) {
      return;
    }
    a.abandoned = true;
    a.messages.clear();
    ClientCall<ReqT, RespT> call = a.call;
    if (call != null && !a.closed) {
      call.cancel("Quell abandoned this attempt: it timed out, or the call was cancelled", null);
    }
  }

  private void contextCancelled(Context context) {
    fromPolicy(() -> {
      if (appClosed || cancelled != null) {
        return;
      }
      Status status = Contexts.statusFromCancelled(context); // DEADLINE_EXCEEDED when its deadline passed
      cancelled = status != null ? status : Status.CANCELLED.withDescription("the caller's gRPC Context was cancelled");
      CompletableFuture<Outcome<AttemptCall>> o = outcome;
      if (o != null) {
        o.cancel(false);
      }
    });
  }

  /** The policy has finished: commit the winning attempt, or tell the listener how the call failed. */
  private void finished(@Nullable Outcome<AttemptCall> o, @Nullable Throwable failure) {
    grpcContext.removeListener(contextCancelled);
    if (appClosed) {
      return;
    }
    if (o == null) {
      Status c = cancelled;
      deliverClose(c != null ? c : Status.CANCELLED.withCause(unwrap(failure)), new Metadata());
      return;
    }
    AttemptCall w = o.value();
    Status c = cancelled;
    if (c != null) {
      // the application cancelled while the last attempt was being decided: its cancel wins
      if (w != null && w.isLive()) {
        w.abandoned = true;
        w.call().cancel(c.getDescription(), c.getCause());
      }
      deliverClose(c, new Metadata());
      return;
    }
    if (w != null) {
      commit(w);
      return;
    }
    deliverFailure(o);
  }

  private void commit(AttemptCall w) {
    Metadata h = w.headers;
    if (h != null) {
      if (w.number > 1) {
        h.discardAll(QuellMetadata.PREVIOUS_RPC_ATTEMPTS);
        h.put(QuellMetadata.PREVIOUS_RPC_ATTEMPTS, Integer.toString(w.number - 1));
      }
      deliverHeaders(h);
    }
    for (RespT m : w.messages) {
      deliverMessage(m);
    }
    w.messages.clear();
    if (w.closed) {
      Status status = w.status;
      Metadata trailers = w.trailers;
      deliverClose(status != null ? status : Status.OK, trailers != null ? trailers : new Metadata());
    } else if (appClosed) {
      w.call().cancel("the call's listener failed", null);
    } else {
      winner = w; // a server stream: from now on, everything passes through
      w.forwarding = true;
    }
  }

  private void deliverFailure(Outcome<AttemptCall> o) {
    Throwable f = o.failure().orElse(null);
    if (f instanceof AttemptFailure) {
      AttemptFailure last = (AttemptFailure) f;
      deliverClose(last.getStatus(), trailersOf(last));
      return;
    }
    if (o.stopReason() == StopReason.CANCELLED) {
      Status c = cancelled;
      deliverClose(c != null ? c : Status.CANCELLED.withCause(f), new Metadata());
      return;
    }
    if (f == null) {
      deliverClose(Status.INTERNAL.withDescription("Quell ended the call with " + o.stopReason() + " and no result"),
          new Metadata());
      return;
    }
    AttemptFailure last = lastAttemptFailure(f);
    if (f instanceof AttemptTimeoutException || f instanceof DeadlineExceededException) {
      deliverClose(Status.DEADLINE_EXCEEDED.withDescription("Quell: " + f.getMessage()).withCause(f), new Metadata());
    } else if (f instanceof CallRejectedException) {
      CallRejectedException rejected = (CallRejectedException) f;
      Status.Code code = rejected.reason() == StopReason.LIMITED ? Status.Code.RESOURCE_EXHAUSTED
          : last != null ? last.getStatus().getCode() : Status.Code.UNAVAILABLE;
      String lastDescription = last == null ? null : last.getStatus().getDescription();
      deliverClose(Status.fromCode(code)
              .withDescription("Quell: " + f.getMessage() + (lastDescription == null ? "" : ": " + lastDescription))
              .withCause(f),
          last != null ? trailersOf(last) : new Metadata());
    } else {
      Metadata trailers = Status.trailersFromThrowable(f);
      deliverClose(Status.fromThrowable(f), trailers != null ? trailers : new Metadata());
    }
  }

  private static Metadata trailersOf(AttemptFailure failure) {
    Metadata trailers = failure.getTrailers();
    return trailers != null ? trailers : new Metadata();
  }

  private static @Nullable AttemptFailure lastAttemptFailure(@Nullable Throwable t) {
    for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
      if (t instanceof AttemptFailure) {
        return (AttemptFailure) t;
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- each attempt's side

  private void onAttemptHeaders(AttemptCall a, Metadata h) {
    if (a.abandoned || a.closed) {
      return;
    }
    if (h.containsKey(QuellMetadata.PREVIOUS_RPC_ATTEMPTS)) {
      owner.channelRetried(method); // grpc-java's own retry made more than one wire attempt under ours
    }
    a.headers = h;
  }

  private void onAttemptMessage(AttemptCall a, RespT message) {
    if (a.abandoned) {
      return;
    }
    if (a.forwarding) {
      deliverMessage(message);
      return;
    }
    a.messages.add(message);
    if (streaming && !a.decided) {
      a.decided = true;
      a.future.complete(a); // the first response decides a server stream
    }
  }

  private void onAttemptClose(AttemptCall a, Status status, Metadata trailers) {
    if (a.abandoned) {
      return;
    }
    a.closed = true;
    if (a.forwarding) {
      deliverClose(status, trailers);
      return;
    }
    a.status = status;
    a.trailers = trailers;
    if (a.decided) {
      return; // a server stream already decided by its first message; the commit delivers this close
    }
    a.decided = true;
    if (status.isOk()) {
      a.future.complete(a);
      return;
    }
    if (!a.future.isDone() && QuellMetadata.saysDoNotRetry(trailers)) {
      // gRFC A6 counts a "do not retry" pushback as a failure for throttling; the classifier makes it permanent
      policy.budget().recordFailure();
    }
    Deadline caller = callerDeadline();
    a.future.completeExceptionally(new AttemptFailure(status, trailers, caller != null && caller.isExpired()));
  }

  private void onAttemptReady(AttemptCall a) {
    if (a.forwarding && !appClosed) {
      ClientCall.Listener<RespT> l = app;
      if (l != null) {
        try {
          l.onReady();
        } catch (RuntimeException | Error e) {
          listenerFailed(e);
        }
      }
    }
  }

  // ---------------------------------------------------------------- delivery to the application

  private void deliverHeaders(Metadata h) {
    ClientCall.Listener<RespT> l = app;
    if (appClosed || l == null) {
      return;
    }
    try {
      l.onHeaders(h);
    } catch (RuntimeException | Error e) {
      listenerFailed(e);
    }
  }

  private void deliverMessage(RespT message) {
    ClientCall.Listener<RespT> l = app;
    if (appClosed || l == null) {
      return;
    }
    try {
      l.onMessage(message);
    } catch (RuntimeException | Error e) {
      listenerFailed(e);
    }
  }

  private void deliverClose(Status status, Metadata trailers) {
    ClientCall.Listener<RespT> l = app;
    if (appClosed || l == null) {
      return;
    }
    appClosed = true;
    LiveCallExecutor executor = live;
    if (executor != null) {
      executor.retire(); // attempts still closing, and the policy's last events, must not wait on the caller's executor
    }
    try {
      l.onClose(status, trailers);
    } catch (RuntimeException | Error e) {
      LOG.log(System.Logger.Level.WARNING, "quell.grpc.listener.error: onClose threw", e);
    }
  }

  /** The listener threw: like grpc-java, cancel the call and close with CANCELLED, the failure as cause. */
  private void listenerFailed(Throwable e) {
    AttemptCall w = winner;
    if (w != null && w.isLive()) {
      w.call().cancel("the call's listener threw", e);
      w.abandoned = true; // its close must not reach the listener a second time
    }
    deliverClose(Status.CANCELLED.withDescription("the call's listener threw").withCause(e), new Metadata());
  }

  // ---------------------------------------------------------------- helpers

  /** Runs a task raised by the policy: here if this thread is already draining, else on {@code elsewhere}. */
  private void fromPolicy(Runnable task) {
    queue.executeElsewhere(task, elsewhere);
  }

  /** The caller's own deadline: the earlier of the CallOptions' and the gRPC Context's. */
  private @Nullable Deadline callerDeadline() {
    return Deadlines.earlier(callOptions.getDeadline(), grpcContext.getDeadline());
  }

  private static @Nullable Throwable unwrap(@Nullable Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  /**
   * One attempt: its wire call, what it received before the policy decided it, and its state. The
   * policy hands an attempt nobody will see (a losing hedge that answered too) to its discard hook,
   * which closes it: its call is cancelled.
   */
  private final class AttemptCall extends ClientCall.Listener<RespT> implements AutoCloseable {
    final int number;
    final CompletableFuture<AttemptCall> future = new CompletableFuture<>();
    volatile @Nullable ClientCall<ReqT, RespT> call;
    // touched only by queue tasks
    @Nullable Metadata headers;
    final List<RespT> messages = new ArrayList<>(1);
    @Nullable Status status;
    @Nullable Metadata trailers;
    boolean decided;
    // also read by isReady() on the application's thread
    volatile boolean closed;
    volatile boolean abandoned;
    volatile boolean forwarding;

    AttemptCall(int number) {
      this.number = number;
    }

    ClientCall<ReqT, RespT> call() {
      ClientCall<ReqT, RespT> c = call;
      if (c == null) {
        throw new IllegalStateException("attempt " + number + " has no call yet");
      }
      return c;
    }

    boolean isLive() {
      return call != null && !closed && !abandoned;
    }

    @Override
    public void close() {
      fromPolicy(() -> abandon(this));
    }

    @Override
    public void onHeaders(Metadata h) {
      queue.execute(() -> onAttemptHeaders(this, h));
    }

    @Override
    public void onMessage(RespT message) {
      queue.execute(() -> onAttemptMessage(this, message));
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      queue.execute(() -> onAttemptClose(this, status, trailers));
    }

    @Override
    public void onReady() {
      queue.execute(() -> onAttemptReady(this));
    }
  }
}
