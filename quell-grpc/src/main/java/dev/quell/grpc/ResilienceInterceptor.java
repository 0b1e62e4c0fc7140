package dev.quell.grpc;

import dev.quell.CallRejectedException;
import dev.quell.CircuitBreaker;
import dev.quell.Draining;
import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.internal.Problems;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Runs a channel's calls under a Quell policy: unary calls, and server-streaming calls until their
 * first response, are retried as the policy allows and its retry budget funds; every call carries
 * the caller's deadline and criticality.
 *
 * <pre>{@code
 * ResilienceInterceptor quell = ResilienceInterceptor.perService(Resilience.DEFAULT.withName("inventory"));
 * ManagedChannel channel = quell.applyTo(ManagedChannelBuilder.forAddress(host, port).usePlaintext()).build();
 * }</pre>
 *
 * <p><b>What it retries.</b> A unary call is one policy call: each attempt is a fresh
 * {@link ClientCall} on the next channel, replaying the start headers, the request count, the message
 * and the half-close. Headers and messages reach the application's listener only once the policy has
 * decided the attempt (gRFC A6's commit rule): when a unary attempt closes, or when a server-streaming
 * attempt delivers its first message. From then on a stream passes through; a failure after its first
 * response is not retried. A policy with a {@link dev.quell.Hedge} hedges them the same way: the
 * first attempt to answer wins and the others are cancelled. Client-streaming and bidirectional
 * calls are never retried: they pass through with the deadline and criticality applied (and are
 * refused while the process is draining).
 *
 * <p><b>Attempts are calls.</b> Each attempt is a call of its own on the next channel, so an
 * interceptor below this one (added to the builder before {@link #applyTo}) sees every attempt open
 * and close — a losing hedge and an abandoned attempt included, even when they close after the caller
 * has its answer and a blocking stub's executor is no longer drained: what is left then runs on the
 * common fork-join pool.
 *
 * <p><b>Classification</b> is by {@link GrpcClassifier} ({@link GrpcClassifier#DEFAULT} unless
 * {@link #withClassifier} says otherwise): the policy's own classifier is replaced. UNAVAILABLE is
 * transient; RESOURCE_EXHAUSTED throttled, honouring {@code grpc-retry-pushback-ms} (a negative or
 * unparseable pushback means do not retry, and counts as a failure for a
 * {@link RetryBudget#feedback feedback} budget, as in gRFC A6); DEADLINE_EXCEEDED of one attempt is
 * transient while the caller's own deadline has time left; the rest is permanent.
 *
 * <p><b>Deadlines.</b> The caller's own deadline — the earlier of the {@link CallOptions} deadline and
 * the gRPC {@link Context}'s — bounds the policy's call as an ambient deadline, beside the current
 * {@link ResilienceContext}'s. Each unary attempt goes out with a wire deadline of its ceiling (the
 * attempt timeout, or the time left if less) plus a small slack ({@value #DEFAULT_SLACK_MILLIS} ms by
 * default), so the policy's own timer decides and the server still learns when to stop; never later
 * than the caller's deadline, and a caller's deadline that ends sooner is kept as is. A server stream's
 * attempts carry only the caller's deadlines: the attempt timeout bounds the wait for the first
 * response, not the stream.
 *
 * <p><b>Criticality</b> of the current {@link ResilienceContext}, when labelled, is sent as
 * {@code x-criticality}; retries carry {@code grpc-previous-rpc-attempts}.
 *
 * <p><b>Budgets and breakers.</b> {@link #of} runs every method under one policy (one budget, and
 * one breaker if the policy has one, for the channel); {@link #perService} and {@link #perMethod} keep
 * a {@link PolicyScope}: one automatic budget, and one breaker of its own when the template was given
 * a {@link CircuitBreaker.Config}, per service or method, so a storm against one neither spends the
 * retries of the others nor opens their breaker. The interceptor runs calls under its own copies of
 * the policy you give it (with its classifier), so watch {@link #budgets()} and {@link #breakers()},
 * not your policy's {@code budget()} and {@code breaker()}.
 *
 * <p><b>gRPC's own retry</b> is on by default in grpc-java and, when a service config gives a
 * method a {@code retryPolicy}, would retry beneath each Quell attempt. {@link #applyTo} builds the
 * channel with {@code disableRetry()}. On a channel whose retry is still on, the first call that
 * grpc-java retried and that then answered is detected ({@link #channelRetryDetected()}) and logged
 * once ({@code quell.grpc.channel.retry}).
 *
 * <p>Immutable and thread-safe; the {@code with…} methods return a new interceptor with fresh budgets,
 * so configure it first, then keep it (one per channel).
 */
public final class ResilienceInterceptor implements ClientInterceptor {
  /** The default slack added to each attempt's ceiling on the wire, in milliseconds. */
  public static final int DEFAULT_SLACK_MILLIS = 20;

  private static final System.Logger LOG = System.getLogger("dev.quell.grpc");

  private enum Keying { CHANNEL, SERVICE, METHOD }

  private final Keying keying;
  private final Resilience template;
  private final GrpcClassifier classifier;
  private final Duration deadlineSlack;
  private final long slackNanos;
  /** With {@link Keying#CHANNEL}: the one policy; otherwise the scope's template. */
  private final Resilience policy;
  private final @Nullable PolicyScope<String> scope;
  private final AtomicBoolean channelRetried = new AtomicBoolean();

  private ResilienceInterceptor(Keying keying, Resilience template, GrpcClassifier classifier, Duration deadlineSlack) {
    this.keying = keying;
    this.template = template;
    this.classifier = classifier;
    this.deadlineSlack = deadlineSlack;
    this.slackNanos = Deadlines.nanos(deadlineSlack);
    // the values its calls produce are the interceptor's own attempts: closing one cancels its call
    this.policy = template.withClassifier(classifier).withDiscard(ResilienceInterceptor::closeAttempt);
    this.scope = keying == Keying.CHANNEL ? null : PolicyScope.of(policy);
  }

  /** Every method of the channel under {@code policy}: one retry budget for the whole channel. */
  public static ResilienceInterceptor of(Resilience policy) {
    return new ResilienceInterceptor(Keying.CHANNEL, Objects.requireNonNull(policy, "policy"), GrpcClassifier.DEFAULT,
        Duration.ofMillis(DEFAULT_SLACK_MILLIS));
  }

  /**
   * Each service of the channel under its own copy of {@code template}, named
   * {@code template:service} (for example {@code inventory:shop.Inventory}), with its own automatic
   * budget. A template with an explicit budget gives every service that same budget.
   */
  public static ResilienceInterceptor perService(Resilience template) {
    return new ResilienceInterceptor(Keying.SERVICE, Objects.requireNonNull(template, "template"),
        GrpcClassifier.DEFAULT, Duration.ofMillis(DEFAULT_SLACK_MILLIS));
  }

  /** As {@link #perService}, one copy and budget per full method name ({@code shop.Inventory/Lookup}). */
  public static ResilienceInterceptor perMethod(Resilience template) {
    return new ResilienceInterceptor(Keying.METHOD, Objects.requireNonNull(template, "template"),
        GrpcClassifier.DEFAULT, Duration.ofMillis(DEFAULT_SLACK_MILLIS));
  }

  /** A copy (with fresh budgets) that classifies outcomes with {@code classifier}. */
  public ResilienceInterceptor withClassifier(GrpcClassifier classifier) {
    return new ResilienceInterceptor(keying, template, Objects.requireNonNull(classifier, "classifier"), deadlineSlack);
  }

  /**
   * A copy (with fresh budgets) whose unary attempts go out with a wire deadline of their ceiling
   * plus {@code slack} (default {@value #DEFAULT_SLACK_MILLIS} ms; zero or positive, at most a minute).
   * The slack lets the policy's own attempt timer end an attempt before the transport does, so the
   * outcome is the same attempt timeout whichever way it is measured.
   */
  public ResilienceInterceptor withDeadlineSlack(Duration slack) {
    new Problems()
        .notNegative("deadlineSlack", slack)
        .require(slack == null || slack.compareTo(Duration.ofMinutes(1)) <= 0, "deadlineSlack", slack,
            "must be at most 1 minute: it is a margin for timers, not a timeout")
        .throwIfAny();
    return new ResilienceInterceptor(keying, template, classifier, slack);
  }

  /**
   * Puts Quell in charge of {@code builder}'s channel: turns gRPC's own retry off
   * ({@code disableRetry()}, which also stops transparent retries) and adds this interceptor.
   * Returns the same builder, to go on configuring it (configure transport-specific settings, such as
   * a {@code NettyChannelBuilder}'s, before: the builder comes back as a plain
   * {@code ManagedChannelBuilder<?>}, so that {@code ManagedChannelBuilder.forAddress(...)} works as is).
   */
  public ManagedChannelBuilder<?> applyTo(ManagedChannelBuilder<?> builder) {
    Objects.requireNonNull(builder, "builder");
    return builder.disableRetry().intercept(this);
  }

  /** The policy that calls to {@code method} run under (with this interceptor's classifier). */
  public Resilience policy(MethodDescriptor<?, ?> method) {
    PolicyScope<String> s = scope;
    if (s == null) {
      return policy;
    }
    return s.policy(keyOf(method));
  }

  /**
   * A snapshot of the live retry budget of each key: the service or method name (least recently
   * used first) for {@link #perService} and {@link #perMethod}, the policy's name for {@link #of}.
   */
  public Map<String, RetryBudget> budgets() {
    PolicyScope<String> s = scope;
    return s == null ? Map.of(policy.name(), policy.budget()) : s.budgets();
  }

  /**
   * A snapshot of the live circuit breaker of each key, keyed as {@link #budgets()} is: each service's
   * or method's own when the template was given a {@link CircuitBreaker.Config}
   * ({@code withBreaker(config)}), the one shared breaker under every key when it was given a live
   * {@link CircuitBreaker}. Empty when the policy has no breaker.
   */
  public Map<String, CircuitBreaker> breakers() {
    PolicyScope<String> s = scope;
    if (s == null) {
      return policy.breaker().map(b -> Map.of(policy.name(), b)).orElse(Map.of());
    }
    return s.breakers();
  }

  /** The classifier calls are judged by. */
  public GrpcClassifier classifier() {
    return classifier;
  }

  /** The slack added to each unary attempt's ceiling on the wire. */
  public Duration deadlineSlack() {
    return deadlineSlack;
  }

  /**
   * True once a call through this interceptor came back with {@code grpc-previous-rpc-attempts} in
   * its response headers: the channel's own retry (grpc-java's, with a service config
   * {@code retryPolicy}) retried beneath a Quell attempt. Build the channel with {@link #applyTo}.
   */
  public boolean channelRetryDetected() {
    return channelRetried.get();
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    Resilience p = policy(method);
    ResilienceContext ambient = ResilienceContext.current();
    MethodDescriptor.MethodType type = method.getType();
    if (type == MethodDescriptor.MethodType.UNARY || type == MethodDescriptor.MethodType.SERVER_STREAMING) {
      return new RetryingCall<>(method, callOptions, next, Context.current(), ambient, p, slackNanos, this);
    }
    return passThrough(method, callOptions, next, p, ambient);
  }

  /** A call we cannot retry safely: only the deadline, the criticality and draining apply. */
  private static <ReqT, RespT> ClientCall<ReqT, RespT> passThrough(MethodDescriptor<ReqT, RespT> method,
      CallOptions callOptions, Channel next, Resilience policy, ResilienceContext ambient) {
    if (Draining.isDraining()) {
      CallRejectedException refusal = new CallRejectedException(
          "DRAINING in policy '" + policy.name() + "'", StopReason.DRAINING, 0, null, null);
      return new FailingCall<>(Status.UNAVAILABLE.withDescription("Quell: " + refusal.getMessage()).withCause(refusal));
    }
    long bound = policy.useAmbientDeadline()
        ? ambient.remaining().map(Deadlines::nanos).orElse(Long.MAX_VALUE) : Long.MAX_VALUE;
    Deadline caller = callOptions.getDeadline();
    Deadline wire = Deadlines.wire(caller, bound, Deadline.getSystemTicker());
    ClientCall<ReqT, RespT> call = next.newCall(method, wire == caller ? callOptions : callOptions.withDeadline(wire));
    if (!ambient.hasCriticality()) {
      return call;
    }
    String criticality = ambient.criticality().wireName();
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<RespT> responseListener, Metadata headers) {
        if (!headers.containsKey(QuellMetadata.CRITICALITY)) {
          headers.put(QuellMetadata.CRITICALITY, criticality);
        }
        super.start(responseListener, headers);
      }
    };
  }

  private String keyOf(MethodDescriptor<?, ?> method) {
    if (keying == Keying.METHOD) {
      return method.getFullMethodName();
    }
    String service = method.getServiceName();
    return service != null ? service : method.getFullMethodName();
  }

  private static void closeAttempt(Object attempt) {
    if (attempt instanceof AutoCloseable) {
      try {
        ((AutoCloseable) attempt).close();
      } catch (Exception e) {
        throw new IllegalStateException(e); // our attempts never throw on close
      }
    }
  }

  /** Called by a call whose response headers show that the channel retried beneath us. */
  void channelRetried(MethodDescriptor<?, ?> method) {
    if (channelRetried.compareAndSet(false, true)) {
      LOG.log(System.Logger.Level.WARNING, "quell.grpc.channel.retry: the channel under ResilienceInterceptor"
          + " retried a call to " + method.getFullMethodName() + " itself (grpc-previous-rpc-attempts in the"
          + " response headers). grpc-java's retry is on and a service config gives the method a retryPolicy,"
          + " so each Quell attempt may become several wire attempts. Build the channel with"
          + " ResilienceInterceptor.applyTo(builder), which calls disableRetry(). (Logged once.)");
    }
  }

  @Override
  public String toString() {
    return "ResilienceInterceptor[" + keying.name().toLowerCase(java.util.Locale.ROOT) + ", " + policy.name()
        + ", slack=" + deadlineSlack.toMillis() + "ms]";
  }

  /** A call refused before it started: the listener hears the status as soon as the call starts. */
  private static final class FailingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
    private final Status status;

    FailingCall(Status status) {
      this.status = status;
    }

    @Override
    public void start(Listener<RespT> responseListener, Metadata headers) {
      responseListener.onClose(status, new Metadata());
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void cancel(@Nullable String message, @Nullable Throwable cause) {}

    @Override
    public void halfClose() {}

    @Override
    public void sendMessage(ReqT message) {}
  }
}
