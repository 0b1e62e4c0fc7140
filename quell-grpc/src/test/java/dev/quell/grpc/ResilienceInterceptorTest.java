package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.fail;
import static dev.quell.grpc.FaultServer.Action.hang;
import static dev.quell.grpc.FaultServer.Action.reply;
import static dev.quell.grpc.FaultServer.Action.stream;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Criticality;
import dev.quell.DrainingForTests;
import dev.quell.Draining;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.test.VirtualTime;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The client interceptor against a real gRPC server on a loopback port, with faults scripted per attempt. */
class ResilienceInterceptorTest {
  private static final Resilience POLICY = Resilience.DEFAULT.withName("faults").withBackoff(Backoff.NONE);

  private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();
  private final List<ResilienceEvent> events = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private FaultServer server(FaultServer.Script script) throws Exception {
    FaultServer s = FaultServer.start(script);
    closing.add(0, s);
    return s;
  }

  private ManagedChannel channel(FaultServer server, ResilienceInterceptor interceptor) {
    ManagedChannel ch = server.channel(interceptor);
    closing.add(0, () -> {
      ch.shutdownNow();
      ch.awaitTermination(10, TimeUnit.SECONDS);
    });
    return ch;
  }

  private Resilience recorded(Resilience policy) {
    return policy.withListener(events::add);
  }

  private List<ResilienceEvent> events(ResilienceEvent.Type type) {
    return events.stream().filter(e -> e.type() == type).toList();
  }

  /** Starts a raw call so the test sees every listener callback. */
  private static RecordingListener start(Channel channel, MethodDescriptor<String, String> method, CallOptions options,
      String request) {
    RecordingListener listener = new RecordingListener();
    ClientCall<String, String> call = channel.newCall(method, options);
    call.start(listener, new Metadata());
    call.request(2);
    call.sendMessage(request);
    call.halfClose();
    return listener;
  }

  // ---------------------------------------------------------------- classification and retries

  @Test
  void unavailableIsRetriedAndTheRetryCarriesPreviousAttempts() throws Exception {
    FaultServer server = server((req, n) -> n == 1 ? fail(Status.Code.UNAVAILABLE) : reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(call.messages()).containsExactly("ok");
    assertThat(server.seen("c1")).hasSize(2);
    assertThat(server.seen("c1").get(0).header(QuellMetadata.PREVIOUS_RPC_ATTEMPTS)).isNull();
    assertThat(server.seen("c1").get(1).header(QuellMetadata.PREVIOUS_RPC_ATTEMPTS)).isEqualTo("1");
    // as in gRFC A6, the application learns from the response headers that its call was retried
    assertThat(call.headers().get(QuellMetadata.PREVIOUS_RPC_ATTEMPTS)).isEqualTo("1");
  }

  @Test
  void attemptsAreBoundedByThePolicyAndTheLastStatusReachesTheCaller() throws Exception {
    FaultServer server = server((req, n) -> fail(Status.Code.UNAVAILABLE));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY.withAttempts(4)));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    Status status = call.awaitClose();
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription()).isEqualTo("scripted UNAVAILABLE");
    assertThat(call.headers()).as("a failed call delivers no headers").isNull();
    assertThat(server.seen("c1")).extracting(s -> s.header(QuellMetadata.PREVIOUS_RPC_ATTEMPTS))
        .containsExactly(null, "1", "2", "3");
  }

  @Test
  void resourceExhaustedIsThrottledAndThePushbackIsTheDelay() throws Exception {
    FaultServer server = server((req, n) -> n == 1 ? fail(Status.Code.RESOURCE_EXHAUSTED, "40") : reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(recorded(POLICY)));

    assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1")).isEqualTo("ok");

    assertThat(events(ResilienceEvent.Type.ATTEMPT_ENDED).get(0).verdict())
        .contains(Verdict.throttled(Duration.ofMillis(40)));
    assertThat(events(ResilienceEvent.Type.RETRYING).get(0).delay()).contains(Duration.ofMillis(40));
  }

  @Test
  void resourceExhaustedWithoutPushbackIsThrottledWithTheBackoff() throws Exception {
    FaultServer server = server((req, n) -> n == 1 ? fail(Status.Code.RESOURCE_EXHAUSTED) : reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(recorded(POLICY)));

    assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1")).isEqualTo("ok");

    assertThat(events(ResilienceEvent.Type.ATTEMPT_ENDED).get(0).verdict()).contains(Verdict.THROTTLED);
  }

  @ParameterizedTest
  @ValueSource(strings = {"-1", "-2147483648", "soon", "1.5", "99999999999"})
  void aNegativeOrUnparseablePushbackStopsRetryingAndCountsAsAFailure(String pushback) throws Exception {
    FaultServer server = server((req, n) -> fail(Status.Code.RESOURCE_EXHAUSTED, pushback));
    RetryBudget throttle = RetryBudget.feedback(10, 0.1);
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY.withBudget(throttle)));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(call.trailers().get(QuellMetadata.RETRY_PUSHBACK_MS)).isEqualTo(pushback);
    assertThat(server.seen("c1")).hasSize(1);
    assertThat(throttle.tokens()).as("gRFC A6: a do-not-retry pushback is a failure").isEqualTo(9.0);
  }

  @ParameterizedTest
  @ValueSource(strings = {"INVALID_ARGUMENT", "NOT_FOUND", "INTERNAL", "UNKNOWN", "PERMISSION_DENIED", "ABORTED"})
  void otherCodesArePermanentAndCostTheThrottleNothing(String code) throws Exception {
    FaultServer server = server((req, n) -> fail(Status.Code.valueOf(code)));
    RetryBudget throttle = RetryBudget.feedback(10, 0.1);
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY.withBudget(throttle)));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.valueOf(code));
    assertThat(server.seen("c1")).hasSize(1);
    assertThat(throttle.tokens()).isEqualTo(10.0);
  }

  @Test
  void aPushbackOnAPermanentCodeDoesNotMakeItRetryable() throws Exception {
    FaultServer server = server((req, n) -> fail(Status.Code.INVALID_ARGUMENT, "10"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(server.seen("c1")).hasSize(1);
  }

  @Test
  void theClassifierIsConfigurable() throws Exception {
    FaultServer server = server((req, n) -> n == 1 ? fail(Status.Code.ABORTED) : fail(Status.Code.UNAVAILABLE));
    GrpcClassifier classifier = GrpcClassifier.DEFAULT
        .with(Status.Code.ABORTED, Verdict.Kind.TRANSIENT)
        .with(Status.Code.UNAVAILABLE, Verdict.Kind.PERMANENT);
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY).withClassifier(classifier));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(server.seen("c1")).hasSize(2);
  }

  @Test
  void aServerSideCancellationIsPermanent() throws Exception {
    FaultServer server = server((req, n) -> fail(Status.Code.CANCELLED));
    Channel channel = channel(server, ResilienceInterceptor.of(recorded(POLICY)));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(server.seen("c1")).hasSize(1);
    assertThat(events(ResilienceEvent.Type.NOT_RETRIED)).hasSize(1);
  }

  // ---------------------------------------------------------------- hangs and deadlines

  @Test
  void anAttemptThatHangsPastItsTimeoutIsCancelledAndRetried() throws Exception {
    VirtualTime time = VirtualTime.create();
    FaultServer server = server((req, n) -> n == 1 ? hang() : reply("ok"));
    Resilience policy = POLICY.withAttemptTimeout(Duration.ofSeconds(5)).withTimeSource(time);
    Channel channel = channel(server, ResilienceInterceptor.of(recorded(policy)));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");
    FaultServer.Seen first = server.nextArrival();
    time.advance(Duration.ofSeconds(5)); // the attempt timeout falls due on the virtual clock

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(call.messages()).containsExactly("ok");
    assertThat(first.wasCancelled()).as("the abandoned attempt is cancelled on the server").isTrue();
    assertThat(events(ResilienceEvent.Type.ATTEMPT_ENDED).get(0).failure())
        .containsInstanceOf(dev.quell.AttemptTimeoutException.class);
  }

  @Test
  void theLastAttemptTimingOutEndsWithDeadlineExceeded() throws Exception {
    VirtualTime time = VirtualTime.create();
    FaultServer server = server((req, n) -> hang());
    Resilience policy = POLICY.withAttempts(1).withAttemptTimeout(Duration.ofSeconds(5)).withTimeSource(time);
    Channel channel = channel(server, ResilienceInterceptor.of(policy));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");
    FaultServer.Seen only = server.nextArrival();
    time.advance(Duration.ofSeconds(5));

    Status status = call.awaitClose();
    assertThat(status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(status.getCause()).isInstanceOf(dev.quell.AttemptTimeoutException.class);
    assertThat(only.wasCancelled()).isTrue();
  }

  @Test
  void aPerAttemptDeadlineExceededIsRetriedWhileTheCallerHasTimeLeft() throws Exception {
    // The policy's clock never moves, so its own timer never fires: the wire deadline (ceiling 500 ms,
    // no slack) is what ends the first attempt, as DEADLINE_EXCEEDED from the transport.
    VirtualTime frozen = VirtualTime.create();
    FaultServer server = server((req, n) -> n == 1 ? hang() : reply("ok"));
    Resilience policy = POLICY.withAttempts(4).withAttemptTimeout(Duration.ofMillis(500)).withTimeSource(frozen);
    Channel channel = channel(server,
        ResilienceInterceptor.of(recorded(policy)).withDeadlineSlack(Duration.ZERO));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.HOURS), "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    ResilienceEvent first = events(ResilienceEvent.Type.ATTEMPT_ENDED).get(0);
    assertThat(first.verdict()).contains(Verdict.TRANSIENT);
    assertThat(first.failure()).get().isInstanceOfSatisfying(StatusRuntimeException.class,
        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    assertThat(server.seen("c1").size()).isGreaterThanOrEqualTo(2);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aDeadlineExceededIsRetriedOnlyWhileTheCallersOwnDeadlineHasTimeLeft(boolean callerDeadlinePassed)
      throws Exception {
    // The caller's deadline runs on a ticker the test moves; the server answers DEADLINE_EXCEEDED when told.
    FakeTicker ticker = new FakeTicker();
    BlockingQueue<ServerCallStreamObserver<String>> parked = new LinkedBlockingQueue<>();
    FaultServer server = server((req, n) -> n == 1 ? FaultServer.Action.park(parked) : reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY.withTimeSource(VirtualTime.create())));

    RecordingListener call = start(channel, FaultServer.UNARY,
        CallOptions.DEFAULT.withDeadline(Deadline.after(10, TimeUnit.SECONDS, ticker)), "c1");
    ServerCallStreamObserver<String> first = parked.poll(10, TimeUnit.SECONDS);
    assertThat(first).isNotNull();
    if (callerDeadlinePassed) {
      ticker.advance(Duration.ofSeconds(11));
    }
    first.onError(Status.DEADLINE_EXCEEDED.withDescription("this attempt ran out of time").asRuntimeException());

    Status status = call.awaitClose();
    if (callerDeadlinePassed) {
      assertThat(status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(server.seen("c1")).as("the caller stopped waiting: nothing to retry for").hasSize(1);
    } else {
      assertThat(status.getCode()).isEqualTo(Status.Code.OK);
      assertThat(server.seen("c1")).hasSize(2);
    }
    assertThat(server.seen("c1").get(0).deadlineNanosAtArrival).isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(10));
  }

  /** A gRPC deadline ticker that moves only when told. */
  static final class FakeTicker extends Deadline.Ticker {
    private final java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();

    @Override
    public long nanoTime() {
      return now.get();
    }

    void advance(Duration d) {
      now.addAndGet(d.toNanos());
    }
  }

  @Test
  void theWireDeadlineIsTheAttemptCeilingPlusSlack() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Resilience policy = POLICY.withAttemptTimeout(Duration.ofSeconds(3));
    Channel channel = channel(server, ResilienceInterceptor.of(policy));

    ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), "c1");

    FaultServer.Seen seen = server.seen("c1").get(0);
    assertThat(seen.deadline).isNotNull();
    assertThat(seen.deadlineNanosAtArrival).isPositive()
        .isLessThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(3000 + ResilienceInterceptor.DEFAULT_SLACK_MILLIS));
  }

  @Test
  void aShorterDeadlineOfTheCallersIsKept() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY)); // 10 s attempt timeout

    ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS), "c1");

    assertThat(server.seen("c1").get(0).deadlineNanosAtArrival).isPositive()
        .isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(2));
  }

  @Test
  void theGrpcContextDeadlineBoundsTheCall() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    Context.CancellableContext context = Context.current().withDeadlineAfter(3, TimeUnit.SECONDS, timer);
    try {
      context.call(() -> ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1"));
    } finally {
      context.cancel(null);
      timer.shutdownNow();
    }

    assertThat(server.seen("c1").get(0).deadlineNanosAtArrival).isPositive()
        .isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(3));
  }

  @Test
  void theAmbientDeadlineGoesOnTheWire() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(Resilience.NONE));

    try (ResilienceContext.Scope scope = ResilienceContext.current().withDeadline(Duration.ofSeconds(3)).open()) {
      ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");
    }

    assertThat(server.seen("c1").get(0).deadlineNanosAtArrival).isPositive()
        .isLessThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(3000 + ResilienceInterceptor.DEFAULT_SLACK_MILLIS));
  }

  @Test
  void anExpiredCallerDeadlineStartsNoAttempt() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT.withDeadlineAfter(-1, TimeUnit.SECONDS), "c1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(server.seen("c1")).isEmpty();
  }

  // ---------------------------------------------------------------- criticality

  @Test
  void theCriticalityOfTheContextTravelsInMetadata() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    try (ResilienceContext.Scope scope = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE).open()) {
      ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "labelled");
    }
    ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "unlabelled");

    assertThat(server.seen("labelled").get(0).header(QuellMetadata.CRITICALITY)).isEqualTo("SHEDDABLE");
    assertThat(server.seen("unlabelled").get(0).header(QuellMetadata.CRITICALITY)).isNull();
  }

  // ---------------------------------------------------------------- server streaming

  @Test
  void aServerStreamIsRetriedUntilItsFirstResponse() throws Exception {
    FaultServer server = server((req, n) -> n == 1 ? fail(Status.Code.UNAVAILABLE) : stream(3, Status.Code.OK));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    Iterator<String> replies = ClientCalls.blockingServerStreamingCall(channel, FaultServer.STREAM, CallOptions.DEFAULT, "s1");

    assertThat(replies).toIterable().containsExactly("s1#1", "s1#2", "s1#3");
    assertThat(server.seen("s1")).hasSize(2);
  }

  @Test
  void aServerStreamThatFailsAfterItsFirstResponseIsNotRetried() throws Exception {
    FaultServer server = server((req, n) -> stream(1, Status.Code.UNAVAILABLE));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    RecordingListener call = start(channel, FaultServer.STREAM, CallOptions.DEFAULT, "s1");

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(call.messages()).containsExactly("s1#1");
    assertThat(server.seen("s1")).hasSize(1);
  }

  @Test
  void aServerStreamWhoseFirstResponseIsLateIsRetried() throws Exception {
    VirtualTime time = VirtualTime.create();
    FaultServer server = server((req, n) -> n == 1 ? hang() : stream(2, Status.Code.OK));
    Resilience policy = POLICY.withAttemptTimeout(Duration.ofSeconds(2)).withTimeSource(time);
    Channel channel = channel(server, ResilienceInterceptor.of(policy));

    RecordingListener call = start(channel, FaultServer.STREAM, CallOptions.DEFAULT, "s1");
    FaultServer.Seen first = server.nextArrival();
    time.advance(Duration.ofSeconds(2));

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(call.messages()).containsExactly("s1#1", "s1#2");
    assertThat(first.wasCancelled()).isTrue();
  }

  @Test
  void aServerStreamCarriesTheCallersDeadlineNotTheAttemptCeiling() throws Exception {
    FaultServer server = server((req, n) -> stream(1, Status.Code.OK));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY.withAttemptTimeout(Duration.ofMillis(300))));  // a bound the stream must not get

    RecordingListener unbounded = start(channel, FaultServer.STREAM, CallOptions.DEFAULT, "free");
    RecordingListener bounded = start(channel, FaultServer.STREAM, CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.HOURS), "bounded");

    assertThat(unbounded.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(bounded.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(server.seen("free").get(0).deadline).as("a stream may outlive one attempt's timeout").isNull();
    assertThat(server.seen("bounded").get(0).deadlineNanosAtArrival).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(300));
  }

  // ---------------------------------------------------------------- hedging

  @Test
  void aSlowUnaryCallIsHedgedAndTheLoserCancelled() throws Exception {
    VirtualTime time = VirtualTime.create();
    FaultServer server = server((req, n) -> n == 1 ? hang() : reply("ok"));
    Resilience policy = POLICY.withTimeSource(time).withHedge(Hedge.after(Duration.ofSeconds(1)));
    Channel channel = channel(server, ResilienceInterceptor.of(recorded(policy)));

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");
    FaultServer.Seen first = server.nextArrival();
    time.advance(Duration.ofSeconds(1)); // the hedge delay falls due: a second attempt goes out beside the first

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(call.messages()).containsExactly("ok");
    assertThat(first.wasCancelled()).as("the losing attempt is cancelled on the server").isTrue();
    assertThat(server.seen("c1")).hasSize(2);
    assertThat(server.seen("c1").get(1).header(QuellMetadata.PREVIOUS_RPC_ATTEMPTS)).isEqualTo("1");
    assertThat(events(ResilienceEvent.Type.HEDGE_STARTED)).hasSize(1);
    assertThat(events(ResilienceEvent.Type.HEDGE_WON)).hasSize(1);
  }

  @Test
  void aHedgedServerStreamCommitsToTheFirstAttemptToAnswer() throws Exception {
    VirtualTime time = VirtualTime.create();
    FaultServer server = server((req, n) -> n == 1 ? hang() : stream(2, Status.Code.OK));
    Resilience policy = POLICY.withTimeSource(time).withHedge(Hedge.after(Duration.ofSeconds(1)));
    Channel channel = channel(server, ResilienceInterceptor.of(policy));

    RecordingListener call = start(channel, FaultServer.STREAM, CallOptions.DEFAULT, "s1");
    FaultServer.Seen first = server.nextArrival();
    time.advance(Duration.ofSeconds(1));

    assertThat(call.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(call.messages()).containsExactly("s1#1", "s1#2");
    assertThat(first.wasCancelled()).isTrue();
  }

  // ---------------------------------------------------------------- calls it cannot retry

  @Test
  void clientStreamingAndBidiPassThroughWithDeadlineAndCriticality() throws Exception {
    FaultServer server = server((req, n) -> fail(Status.Code.UNAVAILABLE));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    RecordingListener collect;
    RecordingListener chat;
    try (ResilienceContext.Scope scope = ResilienceContext.current()
        .withDeadline(Duration.ofSeconds(5)).withCriticality(Criticality.SHEDDABLE_PLUS).open()) {
      collect = start(channel, FaultServer.COLLECT, CallOptions.DEFAULT, "collect");
      chat = start(channel, FaultServer.CHAT, CallOptions.DEFAULT, "chat");
    }

    assertThat(collect.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(chat.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    for (String name : List.of("collect", "chat")) {
      assertThat(server.seen(name)).as(name + " is not retried").hasSize(1);
      FaultServer.Seen seen = server.seen(name).get(0);
      assertThat(seen.header(QuellMetadata.CRITICALITY)).isEqualTo("SHEDDABLE_PLUS");
      assertThat(seen.deadlineNanosAtArrival).isPositive().isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(5));
    }
  }

  // ---------------------------------------------------------------- cancellation

  @Test
  void cancellingDuringTheBackoffEndsTheCallAndNoRetryFollows() throws Exception {
    VirtualTime time = VirtualTime.create();
    FaultServer server = server((req, n) -> fail(Status.Code.UNAVAILABLE));
    CountDownLatch retrying = new CountDownLatch(1);
    Resilience policy = recorded(POLICY.withBackoff(Backoff.constant(Duration.ofSeconds(10))).withTimeSource(time)
        .withoutAttemptTimeout().withoutDeadline()
        .withListener(e -> {
          if (e.type() == ResilienceEvent.Type.RETRYING) {
            retrying.countDown();
          }
        }));
    Channel channel = channel(server, ResilienceInterceptor.of(policy));

    RecordingListener listener = new RecordingListener();
    ClientCall<String, String> call = channel.newCall(FaultServer.UNARY, CallOptions.DEFAULT);
    call.start(listener, new Metadata());
    call.request(2);
    call.sendMessage("c1");
    call.halfClose();
    assertThat(retrying.await(10, TimeUnit.SECONDS)).isTrue();
    call.cancel("the user gave up", null);

    Status status = listener.awaitClose();
    assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(status.getDescription()).isEqualTo("the user gave up");
    time.advance(Duration.ofMinutes(1)); // past the backoff: on the virtual clock its timer runs here, inline
    assertThat(events(ResilienceEvent.Type.ATTEMPT_STARTED)).as("no retry after the cancel").hasSize(1);
    assertThat(events(ResilienceEvent.Type.CANCELLED)).hasSize(1);
    assertThat(server.seen("c1")).hasSize(1);
  }

  @Test
  void cancellingAnAttemptInFlightCancelsItOnTheServer() throws Exception {
    FaultServer server = server((req, n) -> hang());
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    RecordingListener listener = new RecordingListener();
    ClientCall<String, String> call = channel.newCall(FaultServer.UNARY, CallOptions.DEFAULT);
    call.start(listener, new Metadata());
    call.request(2);
    call.sendMessage("c1");
    call.halfClose();
    FaultServer.Seen attempt = server.nextArrival();
    call.cancel(null, new IllegalStateException("shutting down"));

    Status status = listener.awaitClose();
    assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(status.getCause()).hasMessage("shutting down");
    assertThat(attempt.wasCancelled()).isTrue();
    assertThat(server.seen("c1")).hasSize(1);
  }

  @Test
  void aCancelledGrpcContextEndsTheCallDuringItsBackoff() throws Exception {
    FaultServer server = server((req, n) -> fail(Status.Code.UNAVAILABLE));
    CountDownLatch retrying = new CountDownLatch(1);
    Resilience policy = POLICY.withBackoff(Backoff.constant(Duration.ofSeconds(20))).withListener(e -> {
      if (e.type() == ResilienceEvent.Type.RETRYING) {
        retrying.countDown();
      }
    });
    Channel channel = channel(server, ResilienceInterceptor.of(policy));

    Context.CancellableContext context = Context.current().withCancellation();
    RecordingListener listener = context.call(() -> start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1"));
    assertThat(retrying.await(10, TimeUnit.SECONDS)).isTrue();
    context.cancel(new IllegalStateException("the inbound call went away"));

    assertThat(listener.awaitClose().getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(server.seen("c1")).hasSize(1);
  }

  @Test
  void aListenerThatThrowsGetsExactlyOneCancelledClose() throws Exception {
    FaultServer server = server((req, n) -> stream(3, Status.Code.OK));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));

    AtomicReference<Status> closed = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger closes = new java.util.concurrent.atomic.AtomicInteger();
    ClientCall<String, String> call = channel.newCall(FaultServer.STREAM, CallOptions.DEFAULT);
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onMessage(String message) {
        throw new IllegalStateException("cannot parse " + message);
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        closes.incrementAndGet();
        closed.set(status);
        done.countDown();
      }
    }, new Metadata());
    call.request(5);
    call.sendMessage("s1");
    call.halfClose();

    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(closed.get().getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(closed.get().getCause()).hasMessage("cannot parse s1#1");
    assertThat(closes.get()).isEqualTo(1);
  }

  @Test
  void anInterceptorBelowThatThrowsEndsTheCallOnceWithItsFailure() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    ClientInterceptor broken = new ClientInterceptor() {
      @Override
      public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
          MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        throw new IllegalStateException("no credentials");
      }
    };
    ManagedChannel channel = ResilienceInterceptor.of(POLICY).applyTo(server.channelBuilder().intercept(broken)).build();
    closing.add(0, () -> {
      channel.shutdownNow();
      channel.awaitTermination(10, TimeUnit.SECONDS);
    });

    RecordingListener call = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    Status status = call.awaitClose();
    assertThat(status.getCode()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(status.getCause()).hasMessage("no credentials");
    assertThat(server.seen("c1")).isEmpty();
  }

  // ---------------------------------------------------------------- draining

  @Test
  void whileDrainingNoCallStarts() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));
    Draining.begin(Duration.ofSeconds(5));
    try {
      RecordingListener unary = start(channel, FaultServer.UNARY, CallOptions.DEFAULT, "unary");
      RecordingListener bidi = start(channel, FaultServer.CHAT, CallOptions.DEFAULT, "bidi");

      for (RecordingListener call : List.of(unary, bidi)) {
        Status status = call.awaitClose();
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(status.getCause()).isInstanceOfSatisfying(CallRejectedException.class,
            e -> assertThat(e.reason()).isEqualTo(StopReason.DRAINING));
      }
      assertThat(server.seen("unary")).isEmpty();
      assertThat(server.seen("bidi")).isEmpty();
    } finally {
      DrainingForTests.reset();
    }
  }

  // ---------------------------------------------------------------- misuse

  @Test
  void misuseFailsFastAsGrpcJavaCallsDo() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"));
    Channel channel = channel(server, ResilienceInterceptor.of(POLICY));
    ClientCall<String, String> call = channel.newCall(FaultServer.UNARY, CallOptions.DEFAULT);

    assertThatThrownBy(call::halfClose).isInstanceOf(IllegalStateException.class).hasMessage("Not started");
    assertThatThrownBy(() -> call.request(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
    call.start(new RecordingListener(), new Metadata());
    assertThatThrownBy(() -> call.start(new RecordingListener(), new Metadata())).isInstanceOf(IllegalStateException.class);
    call.cancel("done", null);
  }
}
