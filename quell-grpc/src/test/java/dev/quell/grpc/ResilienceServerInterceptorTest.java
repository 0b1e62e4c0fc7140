package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Criticality;
import dev.quell.DeadlineExceededException;
import dev.quell.Draining;
import dev.quell.DrainingForTests;
import dev.quell.RateLimitedException;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The server interceptor on a real server: the handler's context, and refusals a client backs off from. */
class ResilienceServerInterceptorTest {
  private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private FaultServer server(FaultServer.Script script, ServerInterceptor... interceptors) throws Exception {
    FaultServer s = FaultServer.start(script, interceptors);
    closing.add(0, s);
    return s;
  }

  /** A plain channel, no Quell on it: what any gRPC client would send. */
  private ManagedChannel plainChannel(FaultServer server) {
    ManagedChannel ch = server.channelBuilder().build();
    closing.add(0, () -> {
      ch.shutdownNow();
      ch.awaitTermination(10, TimeUnit.SECONDS);
    });
    return ch;
  }

  private static Channel withHeaders(Channel channel, String... keysAndValues) {
    Metadata extra = new Metadata();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      extra.put(Metadata.Key.of(keysAndValues[i], Metadata.ASCII_STRING_MARSHALLER), keysAndValues[i + 1]);
    }
    return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(extra));
  }

  private static RecordingListener call(Channel channel, CallOptions options, String request) {
    RecordingListener listener = new RecordingListener();
    ClientCall<String, String> call = channel.newCall(FaultServer.UNARY, options);
    call.start(listener, new Metadata());
    call.request(2);
    call.sendMessage(request);
    call.halfClose();
    return listener;
  }

  // ---------------------------------------------------------------- the handler's context

  @Test
  void theInboundDeadlineAndCriticalityBecomeTheHandlersContext() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"), ResilienceServerInterceptor.create());
    Channel channel = withHeaders(plainChannel(server), "x-criticality", "SHEDDABLE");

    ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), "c1");
    ClientCalls.blockingUnaryCall(plainChannel(server), FaultServer.UNARY, CallOptions.DEFAULT, "bare");

    ResilienceContext context = server.seen("c1").get(0).context;
    assertThat(context.remaining()).get().satisfies(d -> assertThat(d).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5)));
    assertThat(context.criticality()).isEqualTo(Criticality.SHEDDABLE);
    ResilienceContext bare = server.seen("bare").get(0).context;
    assertThat(bare.hasDeadline()).isFalse();
    assertThat(bare.hasCriticality()).isFalse();
  }

  @Test
  void criticalPlusFromOutsideIsLoweredUnlessTrusted() throws Exception {
    FaultServer untrusting = server((req, n) -> reply("ok"), ResilienceServerInterceptor.create());
    FaultServer trusting = server((req, n) -> reply("ok"),
        ResilienceServerInterceptor.of(ResilienceContext.Inbound.DEFAULT.trustingCriticalPlus()));

    ClientCalls.blockingUnaryCall(withHeaders(plainChannel(untrusting), "x-criticality", "CRITICAL_PLUS"),
        FaultServer.UNARY, CallOptions.DEFAULT, "c1");
    ClientCalls.blockingUnaryCall(withHeaders(plainChannel(trusting), "x-criticality", "critical-plus"),
        FaultServer.UNARY, CallOptions.DEFAULT, "c1");

    assertThat(untrusting.seen("c1").get(0).context.criticality()).isEqualTo(Criticality.CRITICAL);
    assertThat(trusting.seen("c1").get(0).context.criticality()).isEqualTo(Criticality.CRITICAL_PLUS);
  }

  @Test
  void theInboundDeadlineIsCapped() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"),
        ResilienceServerInterceptor.of(ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(1))));

    ClientCalls.blockingUnaryCall(plainChannel(server), FaultServer.UNARY,
        CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.HOURS), "grpc");
    ClientCalls.blockingUnaryCall(withHeaders(plainChannel(server), "x-deadline-ms", "3600000"), FaultServer.UNARY,
        CallOptions.DEFAULT, "header");

    for (String name : List.of("grpc", "header")) {
      assertThat(server.seen(name).get(0).context.remaining()).get()
          .satisfies(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(1)));
    }
  }

  @ParameterizedTest
  @CsvSource({"2500, true", "soon, false", "-5, false", "0, false", "99999999999999, false"})
  void aGatewaysDeadlineHeaderIsReadAndBadValuesAreIgnored(String header, boolean honoured) throws Exception {
    FaultServer server = server((req, n) -> reply("ok"), ResilienceServerInterceptor.create());

    ClientCalls.blockingUnaryCall(withHeaders(plainChannel(server), "x-deadline-ms", header), FaultServer.UNARY,
        CallOptions.DEFAULT, "c1");

    ResilienceContext context = server.seen("c1").get(0).context;
    assertThat(context.hasDeadline()).isEqualTo(honoured);
    if (honoured) {
      assertThat(context.remaining()).get().satisfies(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofMillis(2500)));
    }
  }

  @Test
  void theEarlierOfTheGrpcDeadlineAndTheHeaderWins() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"), ResilienceServerInterceptor.create());

    ClientCalls.blockingUnaryCall(withHeaders(plainChannel(server), "x-deadline-ms", "60000"), FaultServer.UNARY,
        CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS), "c1");

    assertThat(server.seen("c1").get(0).context.remaining()).get()
        .satisfies(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(2)));
  }

  @Test
  void aCallWhoseDeadlinePassedBeforeTheInterceptorRanNeverReachesTheHandler() throws Exception {
    BlockingQueue<Status> closedWith = new LinkedBlockingQueue<>();
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    closing.add(timer::shutdownNow);
    ServerInterceptor slowStep = new ServerInterceptor() {
      // a step ahead of Quell (an authentication lookup, say) that finishes only once the call's deadline has passed
      @Override
      public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
          ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        CountDownLatch expired = new CountDownLatch(1);
        Deadline deadline = Context.current().getDeadline();
        assertThat(deadline).isNotNull();
        deadline.runOnExpiration(expired::countDown, timer);
        try {
          assertThat(expired.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            closedWith.add(status);
            super.close(status, trailers);
          }
        }, headers);
      }
    };
    // the last interceptor given runs first: the slow step, then Quell's
    FaultServer server = server((req, n) -> reply("ok"), ResilienceServerInterceptor.create(), slowStep);

    RecordingListener late = call(plainChannel(server), CallOptions.DEFAULT.withDeadlineAfter(100, TimeUnit.MILLISECONDS), "late");

    assertThat(late.awaitClose().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    Status closed = closedWith.poll(10, TimeUnit.SECONDS);
    assertThat(closed).isNotNull();
    assertThat(closed.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(closed.getDescription()).contains("deadline").contains("before the handler");
    assertThat(server.seen("late")).as("the handler never ran").isEmpty();
  }

  // ---------------------------------------------------------------- refusals

  private static FaultServer.Action refusing(String how) {
    CallRejectedException budget = new CallRejectedException("retry budget refused", StopReason.BUDGET_EXHAUSTED, 1,
        Duration.ofMillis(1500), new IOException("dependency down"));
    switch (how) {
      case "budget-thrown":
        return (req, out) -> {
          throw budget;
        };
      case "budget-onError":
        return (req, out) -> out.onError(budget);
      case "breaker-sub-millisecond":
        return (req, out) -> out.onError(new CallRejectedException("breaker open", StopReason.DEPENDENCY_UNAVAILABLE, 0,
            Duration.ofMillis(2000).plusNanos(1), null));
      case "limited":
        return (req, out) -> out.onError(new RateLimitedException("rate limited", 0, Duration.ofMillis(250), null));
      case "deadline":
        return (req, out) -> {
          throw new DeadlineExceededException("deadline of 1000 ms exceeded", 2, Duration.ofSeconds(1), null);
        };
      case "no-retry-after":
        return (req, out) -> out.onError(new CallRejectedException("refused", StopReason.BUDGET_EXHAUSTED, 1, null, null));
      case "wrapped":
        return (req, out) -> out.onError(new CompletionException(budget));
      case "chosen":
        return (req, out) -> out.onError(Status.INTERNAL.withDescription("ours").withCause(budget).asRuntimeException());
      default:
        return (req, out) -> {
          throw new IllegalStateException("a bug");
        };
    }
  }

  @ParameterizedTest
  @CsvSource(nullValues = "none", value = {
      "budget-thrown,           UNAVAILABLE,        1500",
      "budget-onError,          UNAVAILABLE,        1500",
      "breaker-sub-millisecond, UNAVAILABLE,        2001",
      "limited,                 RESOURCE_EXHAUSTED, 250",
      "deadline,                UNAVAILABLE,        none",
      "no-retry-after,          UNAVAILABLE,        none",
      "wrapped,                 UNAVAILABLE,        1500",
      "chosen,                  INTERNAL,           none",
      "bug,                     UNKNOWN,            none"})
  void quellRefusalsInTheHandlerBecomeStatusesWithPushback(String how, Status.Code code, String pushback) throws Exception {
    FaultServer server = server((req, n) -> refusing(req), ResilienceServerInterceptor.create());
    // gRPC logs the handler's own bug (the "bug" case) at SEVERE: expected here, so not printed
    Logger grpcLog = Logger.getLogger("io.grpc.internal.SerializingExecutor");
    Level was = grpcLog.getLevel();
    grpcLog.setLevel(Level.OFF);
    closing.add(() -> grpcLog.setLevel(was)); // last, once the server has stopped

    RecordingListener call = call(plainChannel(server), CallOptions.DEFAULT, how);

    assertThat(call.awaitClose().getCode()).isEqualTo(code);
    assertThat(call.trailers().get(QuellMetadata.RETRY_PUSHBACK_MS)).isEqualTo(pushback);
  }

  @Test
  void aRealBudgetRefusalInsideTheHandlerIsUnavailable() throws Exception {
    // the handler's own dependency always fails; its budget holds one token and never refills
    Resilience inner = Resilience.DEFAULT.withName("dependency").withAttempts(2).withBackoff(Backoff.NONE)
        .withoutAttemptTimeout().withoutDeadline().withTimeSource(new InstantTimers()).withBudget(RetryBudget.of(0.1, 0));
    FaultServer server = server((req, n) -> (request, out) -> {
      try {
        out.onNext(inner.execute(() -> {
          throw new IOException("dependency down");
        }));
        out.onCompleted();
      } catch (Exception e) {
        out.onError(e);
      }
    }, ResilienceServerInterceptor.create());
    Channel channel = plainChannel(server);

    Status first = call(channel, CallOptions.DEFAULT, "c1").awaitClose();
    Status second = call(channel, CallOptions.DEFAULT, "c2").awaitClose();

    assertThat(first.getCode()).as("the retry was funded, then the attempts ran out").isEqualTo(Status.Code.UNKNOWN);
    assertThat(second.getCode()).as("the budget refused the retry").isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(second.getDescription()).contains("retry budget").contains("refused");
  }

  @Test
  void aQuellClientWaitsAsTheQuellServerTellsIt() throws Exception {
    FaultServer server = server((req, n) -> n == 1
        ? (request, out) -> out.onError(new RateLimitedException("slow down", 0, Duration.ofMillis(120), null))
        : reply("ok"), ResilienceServerInterceptor.create());
    List<ResilienceEvent> events = new CopyOnWriteArrayList<>();
    ResilienceInterceptor client = ResilienceInterceptor.of(Resilience.DEFAULT.withName("client").withListener(events::add));
    ManagedChannel channel = server.channel(client);
    try {
      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1")).isEqualTo("ok");
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(10, TimeUnit.SECONDS);
    }

    assertThat(events).filteredOn(e -> e.type() == ResilienceEvent.Type.RETRYING)
        .singleElement().satisfies(e -> assertThat(e.delay()).contains(Duration.ofMillis(120)));
  }

  // ---------------------------------------------------------------- draining

  @Test
  void whileDrainingNewCallsAreRefused() throws Exception {
    FaultServer server = server((req, n) -> reply("ok"), ResilienceServerInterceptor.create());
    Channel channel = plainChannel(server);
    assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "before")).isEqualTo("ok");
    Draining.begin(Duration.ofSeconds(5));
    try {
      RecordingListener during = call(channel, CallOptions.DEFAULT, "during");

      Status status = during.awaitClose();
      assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(status.getDescription()).contains("draining");
      assertThat(during.trailers().get(QuellMetadata.RETRY_PUSHBACK_MS)).isNull();
      assertThat(server.seen("during")).as("the handler never ran").isEmpty();
    } finally {
      DrainingForTests.reset();
    }
  }
}
