package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Client → frontend → backend, each hop a real gRPC server on loopback with Quell's server
 * interceptor, each outbound call through Quell's client interceptor: the deadline only shrinks on
 * the way down, and the criticality arrives as the edge labelled it.
 */
class DeadlineChainTest {
  private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private ManagedChannel channel(FaultServer to) {
    ManagedChannel ch = to.channel(ResilienceInterceptor.perService(Resilience.DEFAULT.withName("chain")));
    closing.add(0, () -> {
      ch.shutdownNow();
      ch.awaitTermination(10, TimeUnit.SECONDS);
    });
    return ch;
  }

  /** Starts the backend and a frontend whose handler calls the backend; returns the frontend. */
  private FaultServer[] chain(ResilienceServerInterceptor frontendInterceptor) throws Exception {
    FaultServer backend = FaultServer.start((req, n) -> reply("from backend"), ResilienceServerInterceptor.create());
    closing.add(backend);
    AtomicReference<ManagedChannel> toBackend = new AtomicReference<>();
    FaultServer frontend = FaultServer.start((req, n) -> (request, out) -> {
      // runs in the handler: the inbound gRPC Context and the ResilienceContext are current
      out.onNext(ClientCalls.blockingUnaryCall(toBackend.get(), FaultServer.UNARY, CallOptions.DEFAULT, request + "/backend"));
      out.onCompleted();
    }, frontendInterceptor);
    closing.add(0, frontend);
    toBackend.set(channel(backend));
    return new FaultServer[] {frontend, backend};
  }

  @Test
  void theDeadlineShrinksAndTheCriticalityTravelsEndToEnd() throws Exception {
    FaultServer[] servers = chain(ResilienceServerInterceptor.create());
    ManagedChannel toFrontend = channel(servers[0]);

    try (ResilienceContext.Scope scope = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE).open()) {
      assertThat(ClientCalls.blockingUnaryCall(toFrontend, FaultServer.UNARY,
          CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), "c1")).isEqualTo("from backend");
    }

    FaultServer.Seen atFrontend = servers[0].seen("c1").get(0);
    FaultServer.Seen atBackend = servers[1].seen("c1/backend").get(0);
    assertThat(atFrontend.deadlineNanosAtArrival).isPositive().isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(5));
    assertThat(atBackend.deadlineNanosAtArrival).as("never more time downstream than upstream")
        .isPositive().isLessThanOrEqualTo(atFrontend.deadlineNanosAtArrival);
    assertThat(atFrontend.context.remaining()).get().satisfies(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(5)));
    assertThat(atBackend.context.remaining()).get()
        .satisfies(d -> assertThat(d.toNanos()).isLessThanOrEqualTo(atFrontend.deadlineNanosAtArrival));
    assertThat(atFrontend.header(QuellMetadata.CRITICALITY)).isEqualTo("SHEDDABLE");
    assertThat(atBackend.header(QuellMetadata.CRITICALITY)).isEqualTo("SHEDDABLE");
    assertThat(atBackend.context.criticality()).isEqualTo(Criticality.SHEDDABLE);
  }

  @Test
  void theFrontendsCapBoundsWhatItAsksOfTheBackend() throws Exception {
    FaultServer[] servers = chain(
        ResilienceServerInterceptor.of(ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(1))));
    ManagedChannel toFrontend = channel(servers[0]);

    ClientCalls.blockingUnaryCall(toFrontend, FaultServer.UNARY, CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.HOURS), "c1");

    FaultServer.Seen atBackend = servers[1].seen("c1/backend").get(0);
    assertThat(atBackend.deadlineNanosAtArrival).as("the capped second, plus the attempt slack")
        .isPositive().isLessThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(1000 + ResilienceInterceptor.DEFAULT_SLACK_MILLIS));
  }
}
