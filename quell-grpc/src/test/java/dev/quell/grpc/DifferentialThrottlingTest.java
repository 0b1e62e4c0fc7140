package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.fail;
import static dev.quell.grpc.FaultServer.Action.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The same fault script against two clients: grpc-java's own retry with its built-in retry
 * throttling (service config {@code retryThrottling}, gRFC A6), and Quell's interceptor on a channel
 * with gRPC's retry off, spending from {@code RetryBudget.feedback} with the same maxTokens and
 * tokenRatio. Call by call, the server must see the same number of attempts and the caller the same
 * status: the same admission decisions.
 *
 * <p>The script: a healthy start, an outage long enough to drain the throttle below half, a recovery
 * that refills it, then a mixed phase drawn from a seed, where the balance hovers about the threshold — successes, UNAVAILABLE, RESOURCE_EXHAUSTED
 * with and without pushback (to retry after it, or, negative or garbled, not to retry), and
 * permanent codes. Calls run one after another, so each client sees the same history.
 */
class DifferentialThrottlingTest {
  private static final int CALLS = 400;
  private static final int MAX_TOKENS = 10;
  private static final double TOKEN_RATIO = 0.1;
  private static final int ATTEMPTS = 3;

  /** What the server does with attempt {@code attempt} of call number {@code call}. */
  static FaultServer.Action script(long seed, int call, int attempt) {
    if (call < 40) {
      return reply("ok");
    }
    if (call < 120) {
      return fail(Status.Code.UNAVAILABLE); // the outage
    }
    if (call < 220) {
      return reply("ok"); // recovery: 100 successes refill the 10 tokens
    }
    int r = (int) Math.floorMod(mix(seed * 1_000_003L + call * 31L + attempt), 100L);
    if (r < 85) {
      return reply("ok");
    } else if (r < 89) {
      return fail(Status.Code.UNAVAILABLE);
    } else if (r < 91) {
      return fail(Status.Code.RESOURCE_EXHAUSTED);
    } else if (r < 93) {
      return fail(Status.Code.RESOURCE_EXHAUSTED, r % 2 == 0 ? "0" : "1"); // retry after the pushback
    } else if (r < 95) {
      return fail(Status.Code.RESOURCE_EXHAUSTED, "-1"); // do not retry
    } else if (r < 96) {
      return fail(Status.Code.UNAVAILABLE, "later"); // unparseable: do not retry
    } else if (r < 98) {
      return fail(Status.Code.INVALID_ARGUMENT);
    }
    return fail(Status.Code.PERMISSION_DENIED);
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static int callNumber(String request) {
    return Integer.parseInt(request.substring(request.indexOf('-') + 1));
  }

  /** gRPC's own retry policy and throttling, as a service config gives them. */
  static Map<String, ?> grpcServiceConfig() {
    return Map.of(
        "methodConfig", List.of(Map.of(
            "name", List.of(Map.of("service", "quell.test.Faults")),
            "retryPolicy", Map.of(
                "maxAttempts", (double) ATTEMPTS,
                "initialBackoff", "0.001s",
                "maxBackoff", "0.001s",
                "backoffMultiplier", 1.0,
                "retryableStatusCodes", List.of("UNAVAILABLE", "RESOURCE_EXHAUSTED")))),
        "retryThrottling", Map.of("maxTokens", (double) MAX_TOKENS, "tokenRatio", TOKEN_RATIO));
  }

  /** One call's fate: how many attempts reached the server, and what the caller heard. */
  record Fate(int call, int attempts, Status.Code status) {}

  private static List<Fate> run(FaultServer server, ManagedChannel channel) throws InterruptedException {
    List<Fate> fates = new ArrayList<>();
    try {
      for (int i = 0; i < CALLS; i++) {
        Status.Code code;
        try {
          ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "call-" + i);
          code = Status.Code.OK;
        } catch (StatusRuntimeException e) {
          code = e.getStatus().getCode();
        }
        fates.add(new Fate(i, server.seen("call-" + i).size(), code));
      }
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(10, TimeUnit.SECONDS);
    }
    return fates;
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void quellsFeedbackBudgetAdmitsTheRetriesGrpcsThrottlingAdmits(long seed) throws Exception {
    FaultServer.Script script = (req, n) -> script(seed, callNumber(req), n);
    List<Fate> grpc;
    try (FaultServer server = FaultServer.start(script)) {
      grpc = run(server, server.channelBuilder().defaultServiceConfig(grpcServiceConfig()).enableRetry().build());
    }
    RetryBudget throttle = RetryBudget.feedback(MAX_TOKENS, TOKEN_RATIO);
    Resilience policy = Resilience.DEFAULT.withName("differential")
        .withAttempts(ATTEMPTS)
        .withBackoff(Backoff.NONE)
        .withoutAttemptTimeout()
        .withoutDeadline()
        .withTimeSource(new InstantTimers()) // the guarded pause after a refusal costs no wall-clock time
        .withBudget(throttle);
    List<Fate> quell;
    try (FaultServer server = FaultServer.start(script)) {
      quell = run(server, server.channel(ResilienceInterceptor.of(policy)));
    }

    assertThat(quell).as("call by call: attempts seen by the server and the status heard").isEqualTo(grpc);

    // the script must have made the throttle decide both ways, or the comparison proves little
    List<Fate> outage = grpc.subList(40, 120);
    assertThat(outage).as("retries funded early in the outage").anyMatch(f -> f.attempts() == ATTEMPTS);
    assertThat(outage).as("retries refused once the throttle fell to half").anyMatch(f -> f.attempts() == 1);
    List<Fate> mixed = grpc.subList(220, CALLS);
    assertThat(mixed).as("a retry that rescued a call").anyMatch(f -> f.attempts() > 1 && f.status() == Status.Code.OK);
    assertThat(mixed).as("a retryable failure the throttle refused to retry")
        .anyMatch(f -> f.attempts() == 1 && f.status() == Status.Code.UNAVAILABLE);
  }
}
