package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.fail;
import static dev.quell.grpc.FaultServer.Action.reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.quell.Backoff;
import dev.quell.Resilience;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * grpc-java retries by itself when a service config gives a method a retryPolicy (retry is on by
 * default). Beneath Quell that multiplies attempts: these tests show the arithmetic, the helper that
 * turns it off, and the warning when a channel still has it on.
 */
class ChannelRetryTest {
  /** A service config as a name resolver or {@code defaultServiceConfig} would give it: 2 attempts on UNAVAILABLE. */
  static final Map<String, ?> RETRYING_SERVICE_CONFIG = Map.of("methodConfig", List.of(Map.of(
      "name", List.of(Map.of("service", "quell.test.Faults")),
      "retryPolicy", Map.of(
          "maxAttempts", 2.0,
          "initialBackoff", "0.001s",
          "maxBackoff", "0.001s",
          "backoffMultiplier", 1.0,
          "retryableStatusCodes", List.of("UNAVAILABLE")))));

  private static final Resilience POLICY = Resilience.DEFAULT.withName("faults").withBackoff(Backoff.NONE).withAttempts(3);

  private final Logger log = Logger.getLogger("dev.quell.grpc");
  private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord record) {
      if (record.getMessage().startsWith("quell.grpc.channel.retry")) {
        warnings.add(record);
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  private FaultServer server;

  @BeforeEach
  void start() throws Exception {
    log.addHandler(capture);
    log.setUseParentHandlers(false); // the warning is expected here: captured, not printed
    // "flaky-…" calls fail every odd wire attempt; "down-…" calls always fail
    server = FaultServer.start((req, n) -> req.startsWith("down") || n % 2 == 1 ? fail(Status.Code.UNAVAILABLE) : reply("ok"));
  }

  @AfterEach
  void stop() throws Exception {
    log.removeHandler(capture);
    log.setUseParentHandlers(true);
    server.close();
  }

  private ManagedChannel channelWithItsOwnRetryOn(ResilienceInterceptor quell) {
    return server.channelBuilder().defaultServiceConfig(RETRYING_SERVICE_CONFIG).enableRetry().intercept(quell).build();
  }

  private ManagedChannel channelWithQuellInCharge(ResilienceInterceptor quell) {
    return quell.applyTo(server.channelBuilder().defaultServiceConfig(RETRYING_SERVICE_CONFIG)).build();
  }

  private static void shutdown(ManagedChannel channel) throws InterruptedException {
    channel.shutdownNow();
    channel.awaitTermination(10, TimeUnit.SECONDS);
  }

  @Test
  void retriesMultiplyWhenBothRetry() throws Exception {
    ManagedChannel both = channelWithItsOwnRetryOn(ResilienceInterceptor.of(POLICY));
    ManagedChannel quellOnly = channelWithQuellInCharge(ResilienceInterceptor.of(POLICY));
    try {
      catchThrowableOfType(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(both, FaultServer.UNARY, CallOptions.DEFAULT, "down-both"));
      catchThrowableOfType(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(quellOnly, FaultServer.UNARY, CallOptions.DEFAULT, "down-quell"));

      assertThat(server.seen("down-both")).as("3 Quell attempts × 2 channel attempts").hasSize(6);
      assertThat(server.seen("down-quell")).as("Quell's 3 attempts, nothing beneath").hasSize(3);
    } finally {
      shutdown(both);
      shutdown(quellOnly);
    }
  }

  @Test
  void aChannelThatRetriesItselfIsDetectedAndWarnedOnce() throws Exception {
    ResilienceInterceptor quell = ResilienceInterceptor.of(POLICY);
    ManagedChannel channel = channelWithItsOwnRetryOn(quell);
    try {
      assertThat(quell.channelRetryDetected()).isFalse();
      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "flaky-1")).isEqualTo("ok");
      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "flaky-2")).isEqualTo("ok");

      assertThat(server.seen("flaky-1")).as("the channel retried, not Quell").hasSize(2);
      assertThat(server.seen("flaky-1").get(1).header(QuellMetadata.PREVIOUS_RPC_ATTEMPTS)).isEqualTo("1");
      assertThat(quell.channelRetryDetected()).isTrue();
      assertThat(warnings).hasSize(1);
      assertThat(warnings.get(0).getMessage()).contains("quell.test.Faults/Unary").contains("applyTo").contains("disableRetry");
    } finally {
      shutdown(channel);
    }
  }

  @Test
  void aChannelBuiltByApplyToNeverRetriesBeneathQuell() throws Exception {
    ResilienceInterceptor quell = ResilienceInterceptor.of(POLICY);
    ManagedChannel channel = channelWithQuellInCharge(quell);
    try {
      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "flaky-3")).isEqualTo("ok");

      assertThat(server.seen("flaky-3")).hasSize(2);
      assertThat(quell.channelRetryDetected()).as("Quell made the retry").isFalse();
      assertThat(warnings).isEmpty();
    } finally {
      shutdown(channel);
    }
  }
}
