package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.fail;
import static dev.quell.grpc.FaultServer.Action.reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.RateLimitedException;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Budgets per channel, service or method. The policies run on a clock that never moves, so the
 * budget's floor never refills and the token arithmetic is exact: the automatic budget holds 30
 * tokens, and a call that fails three times spends two.
 */
class BudgetScopeTest {
  private static final Resilience TEMPLATE = Resilience.DEFAULT.withName("shop")
      .withBackoff(Backoff.NONE).withoutAttemptTimeout().withoutDeadline()
      .withTimeSource(new InstantTimers());

  private FaultServer server;

  @BeforeEach
  void start() throws Exception {
    // "storm-…" calls always fail; "calm-…" calls fail once, then answer
    server = FaultServer.start((req, n) -> req.startsWith("storm") || n == 1 ? fail(Status.Code.UNAVAILABLE) : reply("ok"));
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
  }

  /** Makes failing calls until the budget refuses a retry; returns how many calls that took. */
  private int stormUntilRefused(ManagedChannel channel, MethodDescriptor<String, String> method) {
    for (int i = 1; i <= 100; i++) {
      try {
        ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT, "storm-" + method.getBareMethodName() + i);
      } catch (StatusRuntimeException e) {
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        if (e.getStatus().getCause() instanceof CallRejectedException) {
          assertThat(((CallRejectedException) e.getStatus().getCause()).reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
          assertThat(server.seen("storm-" + method.getBareMethodName() + i)).as("refused after the first attempt").hasSize(1);
          return i;
        }
      }
    }
    throw new AssertionError("the budget never refused a retry");
  }

  private ManagedChannel channel(ResilienceInterceptor interceptor) {
    return server.channel(interceptor);
  }

  private static void shutdown(ManagedChannel channel) throws InterruptedException {
    channel.shutdownNow();
    channel.awaitTermination(10, TimeUnit.SECONDS);
  }

  @Test
  void perServiceAStormSpendsOnlyItsOwnServicesBudget() throws Exception {
    ResilienceInterceptor quell = ResilienceInterceptor.perService(TEMPLATE);
    ManagedChannel channel = channel(quell);
    try {
      assertThat(stormUntilRefused(channel, FaultServer.UNARY)).as("30 tokens, 2 per failed call").isEqualTo(16);

      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.OTHER, CallOptions.DEFAULT, "calm-1")).isEqualTo("ok");
      assertThat(server.seen("calm-1")).as("the other service still retries").hasSize(2);

      Map<String, RetryBudget> budgets = quell.budgets();
      assertThat(budgets).containsOnlyKeys("quell.test.Faults", "quell.test.Other");
      assertThat(budgets.get("quell.test.Faults").tokens()).isZero();
      assertThat(budgets.get("quell.test.Other").tokens()).isEqualTo(29.1, org.assertj.core.data.Offset.offset(1e-9));
      assertThat(budgets.get("quell.test.Other").name()).isEqualTo("shop:quell.test.Other");
      assertThat(quell.policy(FaultServer.OTHER).name()).isEqualTo("shop:quell.test.Other");
      assertThat(quell.policy(FaultServer.OTHER).budget()).isSameAs(budgets.get("quell.test.Other"));
    } finally {
      shutdown(channel);
    }
  }

  @Test
  void perMethodKeepsABudgetPerFullMethodName() throws Exception {
    ResilienceInterceptor quell = ResilienceInterceptor.perMethod(TEMPLATE);
    ManagedChannel channel = channel(quell);
    try {
      assertThat(stormUntilRefused(channel, FaultServer.UNARY)).isEqualTo(16);
      assertThat(ClientCalls.blockingServerStreamingCall(channel, FaultServer.STREAM, CallOptions.DEFAULT, "calm-s"))
          .toIterable().containsExactly("ok");
      assertThat(server.seen("calm-s")).hasSize(2);
      assertThat(quell.budgets()).containsOnlyKeys("quell.test.Faults/Unary", "quell.test.Faults/Stream");
    } finally {
      shutdown(channel);
    }
  }

  @Test
  void oneInterceptorPolicyMeansOneBudgetForTheChannel() throws Exception {
    ResilienceInterceptor quell = ResilienceInterceptor.of(TEMPLATE);
    ManagedChannel channel = channel(quell);
    try {
      assertThat(stormUntilRefused(channel, FaultServer.UNARY)).isEqualTo(16);
      StatusRuntimeException refused = org.assertj.core.api.Assertions.catchThrowableOfType(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(channel, FaultServer.OTHER, CallOptions.DEFAULT, "calm-2"));
      assertThat(refused.getStatus().getCause()).isInstanceOf(CallRejectedException.class);
      assertThat(server.seen("calm-2")).as("the storm on one service spent the other's retries too").hasSize(1);
      assertThat(quell.budgets()).containsOnlyKeys("shop");
    } finally {
      shutdown(channel);
    }
  }

  @Test
  void perServiceABreakerOpensForItsOwnServiceOnly() throws Exception {
    // the clock never moves, so an open breaker stays open: the test counts attempts, not seconds
    ResilienceInterceptor quell = ResilienceInterceptor.perService(
        TEMPLATE.withBudget(RetryBudget.NONE).withBreaker(CircuitBreaker.Config.DEFAULT.withConsecutiveFailures(3)));
    ManagedChannel channel = channel(quell);
    try {
      StatusRuntimeException exhausted = catchThrowableOfType(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "storm-1"));
      assertThat(exhausted.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(server.seen("storm-1")).as("three failed attempts open the breaker").hasSize(3);

      StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "storm-2"));
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(refused.getStatus().getCause()).isInstanceOfSatisfying(CallRejectedException.class,
          e -> assertThat(e.reason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE));
      assertThat(server.seen("storm-2")).as("refused before reaching the server").isEmpty();

      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.OTHER, CallOptions.DEFAULT, "calm-3")).isEqualTo("ok");

      Map<String, CircuitBreaker> breakers = quell.breakers();
      assertThat(breakers).containsOnlyKeys("quell.test.Faults", "quell.test.Other");
      assertThat(breakers.get("quell.test.Faults").state()).isEqualTo(CircuitBreaker.State.OPEN);
      assertThat(breakers.get("quell.test.Other").state()).isEqualTo(CircuitBreaker.State.CLOSED);
      assertThat(quell.policy(FaultServer.OTHER).breaker()).containsSame(breakers.get("quell.test.Other"));
    } finally {
      shutdown(channel);
    }
  }

  @Test
  void breakersAreEmptyWithoutOneAndOneForTheChannelWithOf() {
    assertThat(ResilienceInterceptor.perService(TEMPLATE).breakers()).isEmpty();
    assertThat(ResilienceInterceptor.of(TEMPLATE).breakers()).isEmpty();
    ResilienceInterceptor one = ResilienceInterceptor.of(TEMPLATE.withBreaker(CircuitBreaker.Config.DEFAULT));
    assertThat(one.breakers()).containsOnlyKeys("shop");
    assertThat(one.breakers().get("shop")).isSameAs(one.policy(FaultServer.UNARY).breaker().orElseThrow());
  }

  @Test
  void aLimiterRefusalReachesTheCallerAsResourceExhausted() throws Exception {
    InstantTimers clock = new InstantTimers();
    ResilienceInterceptor quell = ResilienceInterceptor.of(TEMPLATE.withTimeSource(clock)
        .withLimiter(Limiter.rate(1, 2, clock))); // two attempts, then none: the clock never refills it
    ManagedChannel channel = channel(quell);
    try {
      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "calm-a")).isEqualTo("ok");
      assertThat(server.seen("calm-a")).hasSize(2);
      StatusRuntimeException limited = catchThrowableOfType(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "calm-b"));

      assertThat(limited.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(limited.getStatus().getCause()).isInstanceOf(RateLimitedException.class);
      assertThat(server.seen("calm-b")).isEmpty();
    } finally {
      shutdown(channel);
    }
  }

  @Test
  void anExplicitBudgetIsSharedByEveryKey() {
    RetryBudget shared = RetryBudget.of(0.1, 1);
    ResilienceInterceptor quell = ResilienceInterceptor.perService(TEMPLATE.withBudget(shared));

    assertThat(quell.policy(FaultServer.UNARY).budget()).isSameAs(shared);
    assertThat(quell.policy(FaultServer.OTHER).budget()).isSameAs(shared);
  }
}
