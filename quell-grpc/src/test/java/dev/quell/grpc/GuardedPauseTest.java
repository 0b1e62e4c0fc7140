package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.fail;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A call Quell refuses (here: the retry budget will not fund a retry) ends after the core's guarded
 * rejection pause, 100 ms capped by the time the caller has left, where grpc-java's own retry
 * throttling fails the call as soon as the refused attempt's answer is in. The pause runs on the
 * policy's clock: these tests use a virtual one, and an opt-in measurement compares wall-clock times
 * with grpc-java's.
 */
class GuardedPauseTest {
  private static final Duration PAUSE = Duration.ofMillis(100);

  private static Resilience throttled(VirtualTime time, BlockingQueue<ResilienceEvent> refusals) {
    return Resilience.DEFAULT.withName("throttled")
        .withAttempts(3)
        .withBackoff(Backoff.NONE)
        .withoutAttemptTimeout()
        .withoutDeadline()
        .withTimeSource(time)
        .withBudget(RetryBudget.feedback(2, 0.1)) // one failure takes it to half: the next retry is refused
        .withListener(e -> {
          if (e.type() == ResilienceEvent.Type.REJECTED_BY_BUDGET) {
            refusals.add(e);
          }
        });
  }

  private static RecordingListener start(ManagedChannel channel, CallOptions options, String request) {
    RecordingListener listener = new RecordingListener();
    ClientCall<String, String> call = channel.newCall(FaultServer.UNARY, options);
    call.start(listener, new Metadata());
    call.request(1);
    call.sendMessage(request);
    call.halfClose();
    return listener;
  }

  @Test
  void aRefusedCallEndsOnlyAfterTheGuardedPause() throws Exception {
    VirtualTime time = VirtualTime.create();
    BlockingQueue<ResilienceEvent> refusals = new LinkedBlockingQueue<>();
    try (FaultServer server = FaultServer.start((req, n) -> fail(Status.Code.UNAVAILABLE))) {
      ManagedChannel channel = server.channel(ResilienceInterceptor.of(throttled(time, refusals)));
      try {
        RecordingListener call = start(channel, CallOptions.DEFAULT, "refused");

        ResilienceEvent refusal = refusals.poll(10, TimeUnit.SECONDS);
        assertThat(refusal).as("the budget refused the retry").isNotNull();
        assertThat(refusal.delay()).as("the pause announced").contains(PAUSE);
        awaitTimers(time, 1); // the pause, set on the clock just after it was announced
        time.advance(PAUSE.minusNanos(1));
        assertThat(call.closes()).as("not over before the pause is").isZero();
        time.advance(Duration.ofNanos(1));

        Status status = call.awaitClose();
        assertThat(status.getCode()).as("the last attempt's code").isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(status.getCause()).isInstanceOf(CallRejectedException.class);
        assertThat(((CallRejectedException) status.getCause()).reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
        assertThat(server.seen("refused")).as("the refused retry never went out").hasSize(1);
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void theTimeTheCallerHasLeftCapsThePause() throws Exception {
    VirtualTime time = VirtualTime.create();
    BlockingQueue<ResilienceEvent> refusals = new LinkedBlockingQueue<>();
    try (FaultServer server = FaultServer.start((req, n) -> fail(Status.Code.UNAVAILABLE))) {
      ManagedChannel channel = server.channel(ResilienceInterceptor.of(throttled(time, refusals)));
      try {
        RecordingListener call;
        // 40 ms left on the policy's clock (a gRPC deadline counts the same way, on the wall clock)
        try (ResilienceContext.Scope scope = ResilienceContext.current().withDeadline(Duration.ofMillis(40), time).open()) {
          call = start(channel, CallOptions.DEFAULT, "hurried");
        }

        ResilienceEvent refusal = refusals.poll(10, TimeUnit.SECONDS);
        assertThat(refusal).isNotNull();
        assertThat(refusal.delay()).as("what the caller had left, not 100 ms").contains(Duration.ofMillis(40));
        // the pause's timer is set just after the announcement, from another thread: step the clock until it ends
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!call.closedWithin(1) && System.nanoTime() < until) {
          time.advance(Duration.ofMillis(1));
        }
        Status status = call.awaitClose();
        // the last attempt's code: UNAVAILABLE, or DEADLINE_EXCEEDED if a slow machine let its wire deadline
        // (40 ms + the slack, on the wall clock) pass first
        assertThat(status.getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
        assertThat(status.getCause()).isInstanceOfSatisfying(CallRejectedException.class,
            r -> assertThat(r.reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED));
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void cancellingTheCallCutsThePauseShort() throws Exception {
    VirtualTime time = VirtualTime.create();
    BlockingQueue<ResilienceEvent> refusals = new LinkedBlockingQueue<>();
    try (FaultServer server = FaultServer.start((req, n) -> fail(Status.Code.UNAVAILABLE))) {
      ManagedChannel channel = server.channel(ResilienceInterceptor.of(throttled(time, refusals)));
      try {
        RecordingListener listener = new RecordingListener();
        ClientCall<String, String> call = channel.newCall(FaultServer.UNARY, CallOptions.DEFAULT);
        call.start(listener, new Metadata());
        call.request(1);
        call.sendMessage("impatient");
        call.halfClose();
        assertThat(refusals.poll(10, TimeUnit.SECONDS)).isNotNull();

        call.cancel("the caller gave up", null);

        assertThat(listener.awaitClose().getCode()).as("at once, the clock unmoved").isEqualTo(Status.Code.CANCELLED);
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  /** Waits (bounded) until {@code count} timers are set on {@code time}: another thread sets them. */
  private static void awaitTimers(VirtualTime time, int count) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (time.pendingTimers() < count && System.nanoTime() < until) {
      Thread.yield();
    }
    assertThat(time.pendingTimers()).as("timers set").isEqualTo(count);
  }

  /**
   * How long a call refused by retry throttling takes, on the wall clock: grpc-java's own throttling
   * ({@code retryThrottling} in the service config) against Quell's feedback budget with the same
   * settings, on the real clock. Opt-in, since it measures the machine:
   * {@code ./mvnw -o -q -pl quell-grpc test -Dtest=GuardedPauseTest -Dquell.measure=true}; the
   * figures go to {@code quell-grpc/target/guarded-pause.txt}.
   */
  @Test
  @EnabledIfSystemProperty(named = "quell.measure", matches = "true")
  void measureARefusedCallAgainstGrpcJavasThrottling() throws Exception {
    int calls = 50;
    List<Long> grpc;
    List<Long> quell;
    try (FaultServer server = FaultServer.start((req, n) -> fail(Status.Code.UNAVAILABLE))) {
      grpc = refusedCallMillis(server, server.channelBuilder().defaultServiceConfig(grpcThrottling()).enableRetry().build(), calls);
    }
    Resilience policy = Resilience.DEFAULT.withName("measured")
        .withAttempts(3)
        .withBackoff(Backoff.NONE)
        .withoutAttemptTimeout()
        .withoutDeadline()
        .withBudget(RetryBudget.feedback(10, 0.1));
    try (FaultServer server = FaultServer.start((req, n) -> fail(Status.Code.UNAVAILABLE))) {
      quell = refusedCallMillis(server, server.channel(ResilienceInterceptor.of(policy)), calls);
    }
    String report = String.format("refused calls, %d each, wall-clock ms (median / p90 / max):%n"
            + "grpc-java retryThrottling: %.1f / %.1f / %.1f%n"
            + "Quell feedback budget:     %.1f / %.1f / %.1f%n",
        calls, pct(grpc, 50), pct(grpc, 90), pct(grpc, 100), pct(quell, 50), pct(quell, 90), pct(quell, 100));
    Files.writeString(Path.of("target", "guarded-pause.txt"), report, StandardCharsets.UTF_8);
    System.out.print(report);

    assertThat(grpc).hasSize(calls);
    assertThat(quell).hasSize(calls);
  }

  private static Map<String, ?> grpcThrottling() {
    return Map.of(
        "methodConfig", List.of(Map.of(
            "name", List.of(Map.of("service", "quell.test.Faults")),
            "retryPolicy", Map.of(
                "maxAttempts", 3.0,
                "initialBackoff", "0.001s",
                "maxBackoff", "0.001s",
                "backoffMultiplier", 1.0,
                "retryableStatusCodes", List.of("UNAVAILABLE")))),
        "retryThrottling", Map.of("maxTokens", 10.0, "tokenRatio", 0.1));
  }

  /**
   * Drains the throttle with failing calls until one goes out without a retry, then times
   * {@code calls} such refused calls; each must have reached the server exactly once.
   */
  private static List<Long> refusedCallMillis(FaultServer server, ManagedChannel channel, int calls)
      throws InterruptedException, IOException {
    try {
      for (int i = 0; i < 100 && (i == 0 || server.seen("drain-" + (i - 1)).size() > 1); i++) {
        call(channel, "drain-" + i);
      }
      List<Long> micros = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        long start = System.nanoTime();
        Status.Code code = call(channel, "refused-" + i);
        micros.add((System.nanoTime() - start) / 1000);
        assertThat(code).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.seen("refused-" + i)).as("a refused call makes one attempt").hasSize(1);
      }
      return micros;
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static Status.Code call(ManagedChannel channel, String name) {
    try {
      ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, name);
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  private static double pct(List<Long> micros, int percentile) {
    List<Long> sorted = new ArrayList<>(micros);
    Collections.sort(sorted);
    int index = Math.min(sorted.size() - 1, Math.max(0, (int) Math.ceil(percentile / 100.0 * sorted.size()) - 1));
    return sorted.get(index) / 1000.0;
  }
}
