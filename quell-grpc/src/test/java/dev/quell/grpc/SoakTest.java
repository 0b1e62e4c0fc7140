package dev.quell.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A bounded soak over loopback (about 10 s of load): callers on six threads make unary calls through
 * two Quell channels — one retrying, one hedging — funded by one retry budget, with blocking, future
 * and plain-listener stubs, while the server answers with faults (UNAVAILABLE, RESOURCE_EXHAUSTED with
 * pushback, permanent codes), hangs, slow answers, and is killed abruptly ({@code shutdownNow}: every
 * call in flight reset) and restarted on the same port every 1.5 s; one call in six is cancelled by
 * its caller at a random moment.
 *
 * <p>At the end: every call had exactly one outcome (one close, the listener contract kept, a status
 * its story allows); the attempts the server counted stay within what the budget's documented formula
 * allows (retries and hedges ≤ capacity + fraction × successful attempts + floor × seconds elapsed);
 * every attempt an interceptor below Quell saw open was closed; the channels terminate gracefully
 * (no call left open); and no thread started during the soak outlives it.
 */
class SoakTest {
  private static final Duration LOAD = Duration.ofSeconds(10);
  private static final int CALLERS = 6;
  private static final double FRACTION = 0.1;
  private static final double FLOOR_PER_SECOND = 3;
  /** The token bucket's capacity, as RetryBudget documents it: ten seconds of its floor. */
  private static final double CAPACITY = 10 * FLOOR_PER_SECOND;

  private static final MethodDescriptor<String, String> UNARY = FaultServer.UNARY;

  /** A server that answers from a script per attempt, counts what it sees, and can be killed and restarted on its port. */
  private static final class ChaosServer {
    final AtomicInteger attempts = new AtomicInteger();
    /** Attempts that arrived as a retry or a hedge: with {@code grpc-previous-rpc-attempts}. */
    final AtomicInteger retries = new AtomicInteger();
    final AtomicInteger succeeded = new AtomicInteger();
    final Map<String, AtomicInteger> perCall = new ConcurrentHashMap<>();
    final ScheduledExecutorService later;
    final int port;
    volatile Server server;

    ChaosServer(ScheduledExecutorService later) throws IOException {
      this.later = later;
      this.server = start(0);
      this.port = server.getPort();
    }

    private Server start(int port) throws IOException {
      ServerServiceDefinition service = ServerServiceDefinition.builder("quell.test.Faults")
          .addMethod(UNARY, ServerCalls.asyncUnaryCall(this::answer))
          .build();
      return NettyServerBuilder
          .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), InsecureServerCredentials.create())
          .addService(ServerInterceptors.intercept(service, new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
                ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
              if (headers.containsKey(QuellMetadata.PREVIOUS_RPC_ATTEMPTS)) {
                retries.incrementAndGet();
              }
              return next.startCall(call, headers);
            }
          }))
          .build()
          .start();
    }

    void answer(String request, StreamObserver<String> response) {
      attempts.incrementAndGet();
      int attempt = perCall.computeIfAbsent(request, k -> new AtomicInteger()).incrementAndGet();
      ServerCallStreamObserver<String> out = (ServerCallStreamObserver<String>) response;
      int r = new SplittableRandom(request.hashCode() * 31L + attempt).nextInt(100);
      if (r < 50) {
        ok(out);
      } else if (r < 60) {
        later.schedule(() -> ok(out), 30, TimeUnit.MILLISECONDS); // slow: a hedge may beat it
      } else if (r < 80) {
        out.onError(Status.UNAVAILABLE.withDescription("scripted").asRuntimeException());
      } else if (r < 85) {
        Metadata trailers = new Metadata();
        trailers.put(QuellMetadata.RETRY_PUSHBACK_MS, "5");
        out.onError(Status.RESOURCE_EXHAUSTED.withDescription("scripted").asRuntimeException(trailers));
      } else if (r < 88) {
        out.onError(Status.INVALID_ARGUMENT.withDescription("scripted").asRuntimeException());
      }
      // else: hang, until the client gives up or the server is killed
    }

    private void ok(ServerCallStreamObserver<String> out) {
      try {
        if (!out.isCancelled()) {
          out.onNext("ok");
          out.onCompleted();
          succeeded.incrementAndGet();
        }
      } catch (IllegalStateException | StatusRuntimeException e) {
        // the call was reset (the client gave up, or the server was killed) between the check and the answer
      }
    }

    /** Kills the server as a crash would (every call in flight reset) and starts it again on its port. */
    void crashAndRestart() throws IOException, InterruptedException {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      for (int tries = 0; ; tries++) {
        try {
          server = start(port);
          return;
        } catch (IOException e) {
          if (!(e.getCause() instanceof BindException) || tries >= 50) {
            throw e;
          }
          TimeUnit.MILLISECONDS.sleep(20); // the port is still being released
        }
      }
    }

    void stop() throws InterruptedException {
      server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** One call's story and its end. */
  private record Ended(String name, boolean cancelledByCaller, Status status, int closes, List<String> violations) {}

  @Test
  void underFaultsHangsCrashesAndCancellationsEveryCallEndsOnceWithinTheBudget() throws Exception {
    Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
    ScheduledExecutorService chaos = Executors.newScheduledThreadPool(2);
    ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
    ChaosServer server = new ChaosServer(chaos);

    long started = System.nanoTime(); // the budget's floor accrues from its creation: count from before it
    RetryBudget budget = RetryBudget.of(FRACTION, FLOOR_PER_SECOND);
    AtomicInteger refusedByBudget = new AtomicInteger();
    Resilience base = Resilience.DEFAULT
        .withBudget(budget)
        .withListener(e -> {
          if (e.type() == ResilienceEvent.Type.REJECTED_BY_BUDGET) {
            refusedByBudget.incrementAndGet();
          }
        });
    ResilienceInterceptor retrying = ResilienceInterceptor.of(base.withName("soak-retry")
        .withAttempts(3)
        .withAttemptTimeout(Duration.ofMillis(150))
        .withBackoff(Backoff.exponential(Duration.ofMillis(5)).withMax(Duration.ofMillis(50))));
    ResilienceInterceptor hedging = ResilienceInterceptor.of(base.withName("soak-hedge")
        .withAttempts(2)
        .withAttemptTimeout(Duration.ofMillis(300))
        .withBackoff(Backoff.exponential(Duration.ofMillis(5)).withMax(Duration.ofMillis(50)))
        .withHedge(Hedge.after(Duration.ofMillis(20))));
    CountingInterceptor spans = new CountingInterceptor();
    ManagedChannel retryChannel = retrying.applyTo(channelTo(server.port).intercept(spans)).build();
    ManagedChannel hedgeChannel = hedging.applyTo(channelTo(server.port).intercept(spans)).build();

    long loadEnds = started + LOAD.toNanos();
    Future<?> crashes = chaos.scheduleWithFixedDelay(() -> {
      try {
        server.crashAndRestart();
        retryChannel.resetConnectBackoff();
        hedgeChannel.resetConnectBackoff();
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }, 1500, 1500, TimeUnit.MILLISECONDS);

    List<Future<List<Ended>>> work = new ArrayList<>();
    for (int t = 0; t < CALLERS; t++) {
      int thread = t;
      work.add(callers.submit(() -> {
        SplittableRandom random = new SplittableRandom(7919L * thread);
        List<Ended> ended = new ArrayList<>();
        for (int i = 0; System.nanoTime() < loadEnds; i++) {
          String name = thread + "-" + i;
          ManagedChannel channel = random.nextBoolean() ? retryChannel : hedgeChannel;
          boolean cancel = random.nextInt(6) == 0;
          long cancelAfterMicros = random.nextLong(30_000);
          ended.add(random.nextBoolean()
              ? listenerCall(channel, name, cancel, cancelAfterMicros, chaos)
              : blockingCall(channel, name, cancel, cancelAfterMicros, chaos));
        }
        return ended;
      }));
    }
    List<Ended> all = new ArrayList<>();
    for (Future<List<Ended>> f : work) {
      all.addAll(f.get(60, TimeUnit.SECONDS));
    }
    double elapsedSeconds = (System.nanoTime() - started) / 1e9;
    crashes.cancel(false);

    try {
      // every call had one outcome, with a status its story allows
      Map<Status.Code, Integer> codes = new EnumMap<>(Status.Code.class);
      for (Ended e : all) {
        codes.merge(e.status().getCode(), 1, Integer::sum);
        assertThat(e.closes()).as(e.name()).isEqualTo(1);
        assertThat(e.violations()).as(e.name()).isEmpty();
        assertThat(e.status().getCode()).as(e.name() + " " + e.status()).isIn(
            Status.Code.OK, Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED, Status.Code.INVALID_ARGUMENT,
            Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED);
        if (e.status().getCode() == Status.Code.CANCELLED && !e.cancelledByCaller()) {
          // only a crash resets a call its caller did not cancel: gRPC reports the server's RST_STREAM as CANCELLED
          assertThat(e.status().getDescription()).as(e.name() + " " + e.status()).contains("RST_STREAM");
        }
      }
      int calls = all.size();
      assertThat(calls).as("calls made").isGreaterThan(200);
      assertThat(codes.getOrDefault(Status.Code.OK, 0)).as("calls that succeeded, of " + codes).isGreaterThan(calls / 4);
      assertThat(all).as("calls their callers cancelled").anyMatch(Ended::cancelledByCaller);

      // the attempts the server counted, within the budget's bound; and the bound was what held them
      double bound = CAPACITY + FRACTION * server.succeeded.get() + FLOOR_PER_SECOND * elapsedSeconds;
      int retries = server.retries.get();
      Files.writeString(Path.of("target", "soak.txt"), String.format(
          "%d calls in %.1f s, %s; the server counted %d attempts, %d of them retries or hedges, and %d successes;"
              + " budget bound %.1f; %d retries or hedges refused by the budget; %d attempts below Quell%n",
          calls, elapsedSeconds, codes, server.attempts.get(), retries, server.succeeded.get(), bound,
          refusedByBudget.get(), spans.opened()), StandardCharsets.UTF_8);
      assertThat((double) retries)
          .as("retries and hedges the server saw (%d calls, %d attempts, %d successes, %.1f s): %s",
              calls, server.attempts.get(), server.succeeded.get(), elapsedSeconds, codes)
          .isLessThanOrEqualTo(bound);
      assertThat(server.attempts.get()).as("at most one first attempt per call").isLessThanOrEqualTo(calls + retries);
      assertThat(refusedByBudget.get()).as("retries the budget refused").isPositive();

      // every attempt was closed below Quell, and the channels end with no call left open
      assertThat(spans.openAfter(10)).as("attempts still open of " + spans.opened()).isZero();
      retryChannel.shutdown();
      hedgeChannel.shutdown();
      assertThat(retryChannel.awaitTermination(10, TimeUnit.SECONDS)).as("retry channel terminated").isTrue();
      assertThat(hedgeChannel.awaitTermination(10, TimeUnit.SECONDS)).as("hedge channel terminated").isTrue();
    } finally {
      retryChannel.shutdownNow();
      hedgeChannel.shutdownNow();
      server.stop();
      callers.shutdownNow();
      chaos.shutdownNow();
      assertThat(callers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(chaos.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    assertThat(threadsLeftOver(before, 15)).as("threads started by the soak and still alive").isEmpty();
  }

  private static NettyChannelBuilder channelTo(int port) {
    return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext();
  }

  private static CallOptions options() {
    return CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS);
  }

  /** A call through the plain ClientCall API; the caller may cancel it a little later. */
  private static Ended listenerCall(ManagedChannel channel, String name, boolean cancel, long cancelAfterMicros,
      ScheduledExecutorService later) throws InterruptedException {
    RecordingListener listener = new RecordingListener();
    ClientCall<String, String> call = channel.newCall(UNARY, options());
    call.start(listener, new Metadata());
    call.request(1);
    call.sendMessage(name);
    call.halfClose();
    if (cancel) {
      later.schedule(() -> call.cancel("the caller gave up", null), cancelAfterMicros, TimeUnit.MICROSECONDS);
    }
    Status status = listener.awaitClose();
    return new Ended(name, cancel, status, listener.closes(), listener.violations());
  }

  /** A blocking stub's call (grpc-java's ThreadlessExecutor); the caller's gRPC Context may be cancelled a little later. */
  private static Ended blockingCall(ManagedChannel channel, String name, boolean cancel, long cancelAfterMicros,
      ScheduledExecutorService later) throws Exception {
    Context.CancellableContext context = Context.current().withCancellation();
    if (cancel) {
      later.schedule(() -> context.cancel(null), cancelAfterMicros, TimeUnit.MICROSECONDS);
    }
    Status status;
    try {
      context.call(() -> ClientCalls.blockingUnaryCall(channel, UNARY, options(), name));
      status = Status.OK;
    } catch (StatusRuntimeException e) {
      status = e.getStatus();
    } finally {
      context.cancel(null);
    }
    return new Ended(name, cancel, status, 1, List.of());
  }

  /**
   * Threads alive now that were not before, waiting up to {@code seconds} for them to end. Process-wide
   * threads that live for the JVM by design are not leaks: the common pool's workers, Quell's timer
   * and watchdog.
   */
  private static List<String> threadsLeftOver(Set<Thread> before, int seconds) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    List<String> left;
    do {
      left = Thread.getAllStackTraces().keySet().stream()
          .filter(t -> t.isAlive() && !before.contains(t))
          .map(Thread::getName)
          .filter(n -> !n.startsWith("ForkJoinPool.commonPool-worker-") && !n.equals("quell-timer") && !n.equals("quell-watchdog"))
          .sorted()
          .collect(Collectors.toList());
      if (left.isEmpty()) {
        return left;
      }
      TimeUnit.MILLISECONDS.sleep(100); // gRPC releases its shared executors a second after their last user
    } while (System.nanoTime() < until);
    return left;
  }
}
