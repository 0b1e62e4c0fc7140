package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.fail;
import static dev.quell.grpc.FaultServer.Action.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.Verdict;
import io.grpc.CallOptions;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** The code blocks of docs/grpc.md, verbatim, run against a real server on a loopback port. */
class GrpcDocsExamplesTest {
  static final MethodDescriptor<String, String> LOOKUP =
      FaultServer.method("shop.Inventory", "Lookup", MethodDescriptor.MethodType.UNARY);

  /** Stands in for the inventory service's own dependency. */
  static final class Warehouse {
    int calls;

    String stock(String sku) throws IOException {
      if (++calls % 2 == 1) {
        throw new IOException("warehouse connection reset");
      }
      return sku + ": 12 in stock";
    }
  }

  static final class InventoryService {
    // --- begin docs/grpc.md: handler
    static final Resilience WAREHOUSE = Resilience.DEFAULT.withName("warehouse");

    private final Warehouse warehouse = new Warehouse();

    void lookup(String sku, StreamObserver<String> response) {
      try {
        response.onNext(WAREHOUSE.execute(() -> warehouse.stock(sku)));
        response.onCompleted();
      } catch (Exception e) {
        response.onError(e);   // a Quell refusal becomes UNAVAILABLE or RESOURCE_EXHAUSTED, with pushback
      }
    }
    // --- end

    ServerServiceDefinition definition() {
      return ServerServiceDefinition.builder("shop.Inventory")
          .addMethod(LOOKUP, ServerCalls.asyncUnaryCall(this::lookup))
          .build();
    }
  }

  @Test
  void aClientAndAServerWithQuell() throws Exception {
    ServerServiceDefinition inventory = new InventoryService().definition();
    // --- begin docs/grpc.md: server
    ServerServiceDefinition withQuell = ServerInterceptors.intercept(inventory,
        ResilienceServerInterceptor.of(ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(10))));
    // --- end
    Server server = NettyServerBuilder
        .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), InsecureServerCredentials.create())
        .addService(withQuell)
        .build()
        .start();
    int port = server.getPort();
    try {
      // --- begin docs/grpc.md: client
      ResilienceInterceptor quell = ResilienceInterceptor.perService(
          Resilience.DEFAULT.withName("shop").withAttemptTimeout(Duration.ofSeconds(2)));
      ManagedChannel channel = quell.applyTo(
          ManagedChannelBuilder.forAddress("localhost", port).usePlaintext()).build();
      // --- end
      try {
        String reply;
        // --- begin docs/grpc.md: call
        reply = ClientCalls.blockingUnaryCall(channel, LOOKUP,
            CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), "sku-42");
        // --- end
        assertThat(reply).isEqualTo("sku-42: 12 in stock");

        // --- begin docs/grpc.md: criticality
        try (ResilienceContext.Scope scope = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE).open()) {
          reply = ClientCalls.blockingUnaryCall(channel, LOOKUP, CallOptions.DEFAULT, "nightly-report");
        }
        // --- end
        assertThat(reply).isEqualTo("nightly-report: 12 in stock");

        List<String> lines = new ArrayList<>();
        // --- begin docs/grpc.md: budgets
        for (Map.Entry<String, RetryBudget> e : quell.budgets().entrySet()) {
          lines.add(e.getKey() + ": budget " + Math.round(e.getValue().utilization() * 100) + "% spent");
        }
        // --- end
        assertThat(lines).containsExactly("shop.Inventory: budget 0% spent");
      } finally {
        channel.shutdownNow();
        channel.awaitTermination(10, TimeUnit.SECONDS);
      }
    } finally {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void classifierAndThrottleExamples() throws Exception {
    // --- begin docs/grpc.md: classifier
    ResilienceInterceptor orders = ResilienceInterceptor.perMethod(Resilience.DEFAULT.withName("orders"))
        .withClassifier(GrpcClassifier.DEFAULT
            .with(Status.Code.ABORTED, Verdict.Kind.TRANSIENT)            // optimistic-locking conflicts
            .with(Status.Code.DEADLINE_EXCEEDED, Verdict.Kind.PERMANENT)); // never repeat slow, non-idempotent work
    // --- end
    // --- begin docs/grpc.md: feedback
    ResilienceInterceptor payments = ResilienceInterceptor.of(Resilience.DEFAULT.withName("payments")
        .withBudget(RetryBudget.feedback(10, 0.1)));   // as "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
    // --- end
    try (FaultServer server = FaultServer.start((req, n) -> n == 1 ? fail(Status.Code.ABORTED) : reply("ok"))) {
      ManagedChannel channel = server.channel(orders.withDeadlineSlack(Duration.ofMillis(20)));
      ManagedChannel throttled = server.channel(payments);
      try {
        assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "o1")).isEqualTo("ok");
        StatusRuntimeException aborted = org.assertj.core.api.Assertions.catchThrowableOfType(StatusRuntimeException.class,
            () -> ClientCalls.blockingUnaryCall(throttled, FaultServer.UNARY, CallOptions.DEFAULT, "p1"));
        assertThat(aborted.getStatus().getCode()).as("ABORTED is permanent by default").isEqualTo(Status.Code.ABORTED);
        assertThat(payments.policy(FaultServer.UNARY).budget().tokens()).as("permanent: no token taken").isEqualTo(10.0);
      } finally {
        channel.shutdownNow();
        throttled.shutdownNow();
        channel.awaitTermination(10, TimeUnit.SECONDS);
        throttled.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void breakersPerService() throws Exception {
    // --- begin docs/grpc.md: breakers
    ResilienceInterceptor guarded = ResilienceInterceptor.perService(Resilience.DEFAULT.withName("shop")
        .withBreaker(CircuitBreaker.Config.DEFAULT.withFailureRate(0.5).withMinimumCalls(20)));
    // --- end
    try (FaultServer server = FaultServer.start((req, n) -> reply("ok"))) {
      ManagedChannel channel = server.channel(guarded);
      try {
        ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "b1");
        ClientCalls.blockingUnaryCall(channel, FaultServer.OTHER, CallOptions.DEFAULT, "b2");
        List<String> states = new ArrayList<>();
        // --- begin docs/grpc.md: breaker states
        guarded.breakers().forEach((service, breaker) -> states.add(service + " " + breaker.state()));
        // --- end
        assertThat(states).containsExactly("quell.test.Faults CLOSED", "quell.test.Other CLOSED");
      } finally {
        channel.shutdownNow();
        channel.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void hedgingExample() {
    // --- begin docs/grpc.md: hedging
    ResilienceInterceptor search = ResilienceInterceptor.perMethod(Resilience.DEFAULT.withName("search")
        .withHedge(Hedge.maxExtraLoad(0.05)));   // a second attempt at the live p95: about 5% more load
    // --- end
    assertThat(search.policy(FaultServer.UNARY).hedge()).isPresent();
  }

  @Test
  void theChannelRetryCheck() throws Exception {
    try (FaultServer server = FaultServer.start((req, n) -> n == 1 ? fail(Status.Code.UNAVAILABLE) : reply("ok"))) {
      ResilienceInterceptor quell = ResilienceInterceptor.of(Resilience.DEFAULT.withBackoff(Backoff.NONE));
      ManagedChannel channel = server.channelBuilder().defaultServiceConfig(ChannelRetryTest.RETRYING_SERVICE_CONFIG)
          .enableRetry().intercept(quell).build();
      Logger log = Logger.getLogger("dev.quell.grpc");
      log.setUseParentHandlers(false); // the warning is the point here: not printed
      try {
        ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "c1");
        boolean retriedBeneathQuell;
        // --- begin docs/grpc.md: detection
        retriedBeneathQuell = quell.channelRetryDetected();   // also logged once: quell.grpc.channel.retry
        // --- end
        assertThat(retriedBeneathQuell).isTrue();
      } finally {
        log.setUseParentHandlers(true);
        channel.shutdownNow();
        channel.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void pushbackFromYourOwnHandler() {
    Metadata trailers = new Metadata();
    // --- begin docs/grpc.md: pushback
    trailers.put(QuellMetadata.RETRY_PUSHBACK_MS, QuellMetadata.pushback(Duration.ofMillis(1500)));
    // --- end
    assertThat(trailers.get(QuellMetadata.RETRY_PUSHBACK_MS)).isEqualTo("1500");
  }
}
