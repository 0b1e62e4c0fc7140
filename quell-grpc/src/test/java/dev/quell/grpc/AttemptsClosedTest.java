package dev.quell.grpc;

import static dev.quell.grpc.FaultServer.Action.hang;
import static dev.quell.grpc.FaultServer.Action.reply;
import static dev.quell.grpc.FaultServer.Action.stream;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.test.VirtualTime;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every attempt Quell makes is a call that interceptors installed below it see open and close: a
 * per-attempt metrics or tracing interceptor must end as many spans as it opened, whichever stub the
 * caller used — above all the blocking one, whose executor (grpc-java's ThreadlessExecutor) nobody
 * drains once the caller has its answer, while the losing hedge is still closing.
 */
class AttemptsClosedTest {
  private static final int CALLS = 40;

  /** The first attempt of every call hangs, so every call is hedged and every call has a loser. */
  private static final Resilience HEDGED = Resilience.DEFAULT.withName("hedged")
      .withAttempts(2)
      .withBackoff(Backoff.NONE)
      .withBudget(RetryBudget.NONE) // every call hedges: no refusal depends on timing
      .withHedge(Hedge.after(Duration.ofMillis(5)));

  private final CountingInterceptor spans = new CountingInterceptor();
  private FaultServer server;
  private ManagedChannel channel;

  private void start(FaultServer.Script script, Resilience policy) throws Exception {
    server = FaultServer.start(script);
    // added first, so it runs below Quell, which applyTo adds last (interceptors run last-added first)
    channel = ResilienceInterceptor.of(policy).applyTo(server.channelBuilder().intercept(spans)).build();
  }

  @AfterEach
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow();
      assertThat(channel.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    if (server != null) {
      server.close();
    }
  }

  private void assertEverySpanEnded(int attemptsPerCall) throws InterruptedException {
    assertThat(spans.opened()).as("attempts that went out").isEqualTo(CALLS * attemptsPerCall);
    assertThat(spans.openAfter(10)).as("spans still open of " + spans.opened()).isZero();
  }

  @Test
  void aBlockingUnaryCallsLosingHedgeIsClosedBelowQuell() throws Exception {
    start((req, n) -> n == 1 ? hang() : reply("ok"), HEDGED);

    for (int i = 0; i < CALLS; i++) {
      assertThat(ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, "b" + i)).isEqualTo("ok");
    }

    assertEverySpanEnded(2);
    for (int i = 0; i < CALLS; i++) {
      assertThat(server.seen("b" + i).get(0).wasCancelled()).as("loser of b" + i + " cancelled on the server").isTrue();
    }
  }

  @Test
  void blockingCallsFromManyThreadsCloseEveryAttempt() throws Exception {
    start((req, n) -> n == 1 ? hang() : reply("ok"), HEDGED);
    ExecutorService callers = Executors.newFixedThreadPool(4);
    try {
      List<Future<String>> answers = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        String name = "t" + i;
        answers.add(callers.submit(() -> ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, name)));
      }
      for (Future<String> a : answers) {
        assertThat(a.get(30, TimeUnit.SECONDS)).isEqualTo("ok");
      }
    } finally {
      callers.shutdownNow();
    }

    assertEverySpanEnded(2);
  }

  @Test
  void aBlockingServerStreamsLosingHedgeIsClosedBelowQuell() throws Exception {
    start((req, n) -> n == 1 ? hang() : stream(2, Status.Code.OK), HEDGED);

    for (int i = 0; i < CALLS; i++) {
      List<String> got = new ArrayList<>();
      Iterator<String> it = ClientCalls.blockingServerStreamingCall(channel, FaultServer.STREAM, CallOptions.DEFAULT, "s" + i);
      it.forEachRemaining(got::add);
      assertThat(got).containsExactly("s" + i + "#1", "s" + i + "#2");
    }

    assertEverySpanEnded(2);
  }

  @Test
  void aBlockingCallsTimedOutAttemptIsClosedBelowQuell() throws Exception {
    VirtualTime time = VirtualTime.create();
    start((req, n) -> n == 1 ? hang() : reply("ok"), Resilience.DEFAULT.withName("timeouts")
        .withAttempts(2)
        .withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.NONE)
        .withAttemptTimeout(Duration.ofSeconds(1))
        .withTimeSource(time));
    ExecutorService caller = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < CALLS; i++) {
        String name = "r" + i;
        Future<String> answer = caller.submit(() -> ClientCalls.blockingUnaryCall(channel, FaultServer.UNARY, CallOptions.DEFAULT, name));
        assertThat(server.nextArrival().attempt).isEqualTo(1);
        time.advance(Duration.ofSeconds(1)); // the first attempt times out; the retry answers
        assertThat(server.nextArrival().attempt).isEqualTo(2);
        assertThat(answer.get(30, TimeUnit.SECONDS)).isEqualTo("ok");
      }
    } finally {
      caller.shutdownNow();
    }

    assertEverySpanEnded(2);
  }

  @Test
  void aFutureStubsLosingHedgeIsClosedBelowQuell() throws Exception {
    start((req, n) -> n == 1 ? hang() : reply("ok"), HEDGED);

    List<Future<String>> answers = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      answers.add(ClientCalls.futureUnaryCall(channel.newCall(FaultServer.UNARY, CallOptions.DEFAULT), "f" + i));
    }
    for (Future<String> a : answers) {
      assertThat(a.get(30, TimeUnit.SECONDS)).isEqualTo("ok");
    }

    assertEverySpanEnded(2);
  }

  @Test
  void anAsyncStubsLosingHedgeIsClosedBelowQuell() throws Exception {
    start((req, n) -> n == 1 ? hang() : reply("ok"), HEDGED);

    List<CompletableFuture<String>> answers = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      CompletableFuture<String> answer = new CompletableFuture<>();
      answers.add(answer);
      ClientCalls.asyncUnaryCall(channel.newCall(FaultServer.UNARY, CallOptions.DEFAULT), "a" + i, new StreamObserver<>() {
        @Override
        public void onNext(String value) {
          answer.complete(value);
        }

        @Override
        public void onError(Throwable t) {
          answer.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {}
      });
    }
    for (CompletableFuture<String> a : answers) {
      assertThat(a.get(30, TimeUnit.SECONDS)).isEqualTo("ok");
    }

    assertEverySpanEnded(2);
  }

  @Test
  void aCallersOwnExecutorStillHearsItsCallAndEveryAttemptCloses() throws Exception {
    start((req, n) -> n == 1 ? hang() : reply("ok"), HEDGED);
    ExecutorService mine = Executors.newSingleThreadExecutor();
    try {
      List<Future<String>> answers = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        answers.add(ClientCalls.futureUnaryCall(
            channel.newCall(FaultServer.UNARY, CallOptions.DEFAULT.withExecutor(mine)), "e" + i));
      }
      for (Future<String> a : answers) {
        assertThat(a.get(30, TimeUnit.SECONDS)).isEqualTo("ok");
      }
    } finally {
      mine.shutdown();
    }

    assertEverySpanEnded(2);
  }
}
