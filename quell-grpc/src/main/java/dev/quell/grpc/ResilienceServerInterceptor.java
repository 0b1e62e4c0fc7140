package dev.quell.grpc;

import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.Draining;
import dev.quell.ResilienceContext;
import dev.quell.StopReason;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The server side: gives each call's handler a {@link ResilienceContext} built from what the caller
 * sent, and turns Quell's refusals inside the handler into statuses a client backs off from.
 *
 * <pre>{@code
 * Server server = ServerBuilder.forPort(port)
 *     .addService(ServerInterceptors.intercept(new InventoryService(), ResilienceServerInterceptor.create()))
 *     .build();
 * }</pre>
 *
 * <p><b>Inbound deadline and criticality.</b> The call's gRPC deadline ({@code grpc-timeout}, which
 * grpc-java already puts on the handler's gRPC {@link Context}) and, for callers behind an HTTP
 * gateway, {@code x-deadline-ms} become the context's deadline — the earlier of the two, capped at
 * {@link ResilienceContext.Inbound#maxDeadline()} (5 minutes by default). {@code x-criticality}
 * becomes its criticality; {@code CRITICAL_PLUS} from outside is lowered to {@code CRITICAL} unless the
 * {@link ResilienceContext.Inbound} trusts it. Malformed values are ignored. Every callback of the
 * handler (message, half-close, cancel, complete, ready) runs with that context current, so a policy
 * inside honours the caller's deadline, and a call made through {@link ResilienceInterceptor} passes
 * it and the criticality on.
 *
 * <p><b>Refusals.</b> When the handler fails with a Quell refusal — thrown out of a callback, or
 * passed to {@code StreamObserver.onError} so that the call closes with status {@code UNKNOWN} and
 * the refusal as its cause — the call closes instead with:
 * <ul>
 *   <li>{@code RESOURCE_EXHAUSTED} for a limiter's refusal ({@link StopReason#LIMITED});
 *   <li>{@code UNAVAILABLE} for any other {@link CallRejectedException} (budget, breaker, draining)
 *       and for a {@link DeadlineExceededException};
 * </ul>
 * with {@code grpc-retry-pushback-ms} set to the refusal's Retry-After, rounded up, when it has one,
 * so a Quell or grpc-java client on the other side waits as long as told. A status the handler chose
 * itself (anything but {@code UNKNOWN}) is left alone.
 *
 * <p><b>An expired deadline.</b> A call whose gRPC deadline has already passed when this interceptor
 * runs (it waited for a server thread, or for interceptors ahead of this one) is closed at once with
 * {@code DEADLINE_EXCEEDED}, and one the caller has already cancelled with {@code CANCELLED}: the
 * handler is never started, since nobody waits for its answer.
 *
 * <p><b>Draining.</b> While {@link Draining#isDraining()}, new calls are refused at once with
 * {@code UNAVAILABLE} (no pushback: the caller should try another server now, not this one later);
 * calls already running go on.
 *
 * <p>Immutable and thread-safe.
 */
public final class ResilienceServerInterceptor implements ServerInterceptor {
  private final ResilienceContext.Inbound inbound;

  private ResilienceServerInterceptor(ResilienceContext.Inbound inbound) {
    this.inbound = inbound;
  }

  /** Trusts inbound values as {@link ResilienceContext.Inbound#DEFAULT} does: deadlines capped at 5 minutes, no {@code CRITICAL_PLUS}. */
  public static ResilienceServerInterceptor create() {
    return new ResilienceServerInterceptor(ResilienceContext.Inbound.DEFAULT);
  }

  /** Trusts inbound values as far as {@code inbound} says. */
  public static ResilienceServerInterceptor of(ResilienceContext.Inbound inbound) {
    return new ResilienceServerInterceptor(Objects.requireNonNull(inbound, "inbound"));
  }

  /** What this interceptor accepts from callers. */
  public ResilienceContext.Inbound inbound() {
    return inbound;
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    if (Draining.isDraining()) {
      call.close(Status.UNAVAILABLE.withDescription("Quell: the server is draining and accepts no new calls"),
          new Metadata());
      return new ServerCall.Listener<>() {};
    }
    Context grpcContext = Context.current();
    Deadline deadline = grpcContext.getDeadline();
    if ((deadline != null && deadline.isExpired()) || grpcContext.isCancelled()) {
      // the caller gave up while the call waited for a thread or for the interceptors ahead of this one
      call.close(deadline != null && deadline.isExpired()
          ? Status.DEADLINE_EXCEEDED.withDescription("Quell: the caller's deadline had passed before the handler started")
          : Status.CANCELLED.withDescription("Quell: the call was cancelled before the handler started"), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    ResilienceContext context = contextOf(headers, deadline, inbound);
    RefusalMappingCall<ReqT, RespT> mapping = new RefusalMappingCall<>(call);
    ServerCall.Listener<ReqT> listener;
    try (ResilienceContext.Scope scope = context.open()) {
      listener = next.startCall(mapping, headers);
    } catch (RuntimeException e) {
      if (mapping.closeIfRefusal(e)) {
        return new ServerCall.Listener<>() {};
      }
      throw e;
    }
    return new ContextListener<>(listener, context, mapping);
  }

  /** The handler's context: the caller's headers as {@code inbound} allows, and the gRPC deadline, capped. */
  static ResilienceContext contextOf(Metadata headers, @Nullable Deadline grpcDeadline, ResilienceContext.Inbound inbound) {
    ResilienceContext context = ResilienceContext.fromHeaders(name -> {
      if (ResilienceContext.DEADLINE_HEADER.equalsIgnoreCase(name)) {
        return headers.get(QuellMetadata.DEADLINE_MS);
      }
      if (ResilienceContext.CRITICALITY_HEADER.equalsIgnoreCase(name)) {
        return headers.get(QuellMetadata.CRITICALITY);
      }
      return null;
    }, inbound);
    if (grpcDeadline != null) {
      Duration remaining = Duration.ofNanos(Math.max(0, grpcDeadline.timeRemaining(TimeUnit.NANOSECONDS)));
      Duration cap = inbound.maxDeadline();
      context = context.withDeadline(remaining.compareTo(cap) > 0 ? cap : remaining);
    }
    return context;
  }

  /**
   * The status a Quell refusal found in {@code failure}'s cause chain maps to, with its pushback
   * when it knows one; null when the chain holds no refusal.
   */
  static @Nullable Refusal refusalIn(@Nullable Throwable failure) {
    Throwable t = failure;
    for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {
      if (t instanceof CallRejectedException) {
        CallRejectedException rejected = (CallRejectedException) t;
        Status status = rejected.reason() == StopReason.LIMITED ? Status.RESOURCE_EXHAUSTED : Status.UNAVAILABLE;
        return new Refusal(status.withDescription("Quell: " + rejected.getMessage()).withCause(rejected),
            rejected.retryAfter().orElse(null));
      }
      if (t instanceof DeadlineExceededException) {
        return new Refusal(Status.UNAVAILABLE.withDescription("Quell: " + t.getMessage()).withCause(t), null);
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return "ResilienceServerInterceptor[maxDeadline=" + inbound.maxDeadline().toMillis() + "ms]";
  }

  /** A status to close with instead of a refusal, and the pushback to send with it. */
  static final class Refusal {
    final Status status;
    final @Nullable Duration retryAfter;

    Refusal(Status status, @Nullable Duration retryAfter) {
      this.status = status;
      this.retryAfter = retryAfter;
    }

    Metadata withPushback(Metadata trailers) {
      trailers.discardAll(QuellMetadata.RETRY_PUSHBACK_MS);
      if (retryAfter != null) {
        trailers.put(QuellMetadata.RETRY_PUSHBACK_MS, QuellMetadata.pushback(retryAfter));
      }
      return trailers;
    }
  }

  /** Rewrites a close whose status is UNKNOWN with a Quell refusal as its cause. */
  private static final class RefusalMappingCall<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {
    private volatile boolean closed;

    RefusalMappingCall(ServerCall<ReqT, RespT> delegate) {
      super(delegate);
    }

    @Override
    public void close(Status status, Metadata trailers) {
      closed = true;
      if (status.getCode() == Status.Code.UNKNOWN) {
        Refusal refusal = refusalIn(status.getCause());
        if (refusal != null) {
          super.close(refusal.status, refusal.withPushback(trailers));
          return;
        }
      }
      super.close(status, trailers);
    }

    /** Closes the call with the mapped status if {@code e} is a refusal; true when it was one. */
    boolean closeIfRefusal(Throwable e) {
      Refusal refusal = refusalIn(e);
      if (refusal == null) {
        return false;
      }
      if (!closed) {
        closed = true;
        super.close(refusal.status, refusal.withPushback(new Metadata()));
      }
      return true;
    }
  }

  /** Runs every callback of the handler with the inbound context current. */
  private static final class ContextListener<ReqT> extends ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT> {
    private final ResilienceContext context;
    private final RefusalMappingCall<ReqT, ?> call;

    ContextListener(ServerCall.Listener<ReqT> delegate, ResilienceContext context, RefusalMappingCall<ReqT, ?> call) {
      super(delegate);
      this.context = context;
      this.call = call;
    }

    @Override
    public void onMessage(ReqT message) {
      try (ResilienceContext.Scope scope = context.open()) {
        super.onMessage(message);
      } catch (RuntimeException e) {
        if (!call.closeIfRefusal(e)) {
          throw e;
        }
      }
    }

    @Override
    public void onHalfClose() {
      try (ResilienceContext.Scope scope = context.open()) {
        super.onHalfClose();
      } catch (RuntimeException e) {
        if (!call.closeIfRefusal(e)) {
          throw e;
        }
      }
    }

    @Override
    public void onCancel() {
      try (ResilienceContext.Scope scope = context.open()) {
        super.onCancel();
      }
    }

    @Override
    public void onComplete() {
      try (ResilienceContext.Scope scope = context.open()) {
        super.onComplete();
      }
    }

    @Override
    public void onReady() {
      try (ResilienceContext.Scope scope = context.open()) {
        super.onReady();
      } catch (RuntimeException e) {
        if (!call.closeIfRefusal(e)) {
          throw e;
        }
      }
    }
  }
}
