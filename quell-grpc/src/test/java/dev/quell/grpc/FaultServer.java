package dev.quell.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.ResilienceContext;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
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
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A real gRPC server on a loopback port whose answers are scripted per call and attempt: the
 * request message names the call, and the server counts the attempts it sees of each. It records
 * what each attempt arrived with (headers, deadline, the handler's ResilienceContext) and whether
 * the client cancelled it.
 */
final class FaultServer implements AutoCloseable {
  static final MethodDescriptor.Marshaller<String> STRINGS = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(String value) {
      return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String parse(InputStream stream) {
      try {
        return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  };

  static final MethodDescriptor<String, String> UNARY = method("quell.test.Faults", "Unary", MethodDescriptor.MethodType.UNARY);
  static final MethodDescriptor<String, String> STREAM =
      method("quell.test.Faults", "Stream", MethodDescriptor.MethodType.SERVER_STREAMING);
  static final MethodDescriptor<String, String> COLLECT =
      method("quell.test.Faults", "Collect", MethodDescriptor.MethodType.CLIENT_STREAMING);
  static final MethodDescriptor<String, String> CHAT =
      method("quell.test.Faults", "Chat", MethodDescriptor.MethodType.BIDI_STREAMING);
  static final MethodDescriptor<String, String> OTHER = method("quell.test.Other", "Unary", MethodDescriptor.MethodType.UNARY);

  private static final Context.Key<Metadata> HEADERS = Context.key("headers");

  static MethodDescriptor<String, String> method(String service, String name, MethodDescriptor.MethodType type) {
    return MethodDescriptor.<String, String>newBuilder()
        .setType(type)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(service, name))
        .setRequestMarshaller(STRINGS)
        .setResponseMarshaller(STRINGS)
        .build();
  }

  /** What the server does with attempt {@code attempt} (1 for the first) of the call named {@code request}. */
  @FunctionalInterface
  interface Script {
    Action answer(String request, int attempt);
  }

  /** One scripted answer. */
  @FunctionalInterface
  interface Action {
    void respond(String request, ServerCallStreamObserver<String> out);

    static Action reply(String value) {
      return (request, out) -> {
        out.onNext(value);
        out.onCompleted();
      };
    }

    static Action fail(Status.Code code) {
      return fail(code, null);
    }

    /** Fails with {@code code}; a non-null {@code pushback} goes out as grpc-retry-pushback-ms, verbatim. */
    static Action fail(Status.Code code, @Nullable String pushback) {
      return (request, out) -> {
        Metadata trailers = new Metadata();
        if (pushback != null) {
          trailers.put(QuellMetadata.RETRY_PUSHBACK_MS, pushback);
        }
        out.onError(Status.fromCode(code).withDescription("scripted " + code).asRuntimeException(trailers));
      };
    }

    /** Never answers; the client must give up (its cancellation is recorded). */
    static Action hang() {
      return (request, out) -> { };
    }

    /** Hands the call to the test, which answers it when it chooses. */
    static Action park(BlockingQueue<ServerCallStreamObserver<String>> parked) {
      return (request, out) -> parked.add(out);
    }

    /** Sends {@code messages} responses, then closes with {@code end}. */
    static Action stream(int messages, Status.Code end) {
      return (request, out) -> {
        for (int i = 1; i <= messages; i++) {
          out.onNext(request + "#" + i);
        }
        if (end == Status.Code.OK) {
          out.onCompleted();
        } else {
          out.onError(Status.fromCode(end).withDescription("scripted " + end).asRuntimeException());
        }
      };
    }
  }

  /** What one attempt arrived with. */
  static final class Seen {
    final String request;
    final int attempt;
    final Metadata headers;
    final @Nullable Deadline deadline;
    final long deadlineNanosAtArrival;
    final ResilienceContext context;
    final CountDownLatch cancelled = new CountDownLatch(1);

    Seen(String request, int attempt, Metadata headers, @Nullable Deadline deadline, ResilienceContext context) {
      this.request = request;
      this.attempt = attempt;
      this.headers = headers;
      this.deadline = deadline;
      this.deadlineNanosAtArrival = deadline == null ? Long.MAX_VALUE : deadline.timeRemaining(TimeUnit.NANOSECONDS);
      this.context = context;
    }

    @Nullable String header(Metadata.Key<String> key) {
      return headers.get(key);
    }

    boolean wasCancelled() throws InterruptedException {
      return cancelled.await(10, TimeUnit.SECONDS);
    }
  }

  private final Server server;
  private final Script script;
  private final Map<String, AtomicInteger> counters = new ConcurrentHashMap<>();
  private final Map<String, List<Seen>> seen = new ConcurrentHashMap<>();
  private final BlockingQueue<Seen> arrivals = new LinkedBlockingQueue<>();

  private FaultServer(Script script, ServerInterceptor... interceptors) throws IOException {
    this.script = script;
    ServerServiceDefinition faults = ServerServiceDefinition.builder("quell.test.Faults")
        .addMethod(UNARY, ServerCalls.asyncUnaryCall(this::answer))
        .addMethod(STREAM, ServerCalls.asyncServerStreamingCall(this::answer))
        .addMethod(COLLECT, ServerCalls.asyncClientStreamingCall(this::collect))
        .addMethod(CHAT, ServerCalls.asyncBidiStreamingCall(this::chat))
        .build();
    ServerServiceDefinition other = ServerServiceDefinition.builder("quell.test.Other")
        .addMethod(OTHER, ServerCalls.asyncUnaryCall(this::answer))
        .build();
    this.server = NettyServerBuilder
        .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), InsecureServerCredentials.create())
        .addService(intercept(faults, interceptors))
        .addService(intercept(other, interceptors))
        .build()
        .start();
  }

  static FaultServer start(Script script, ServerInterceptor... interceptors) throws IOException {
    return new FaultServer(script, interceptors);
  }

  private static ServerServiceDefinition intercept(ServerServiceDefinition service, ServerInterceptor... interceptors) {
    ServerServiceDefinition s = ServerInterceptors.intercept(service, interceptors);
    // the header-capturing interceptor runs first, so the handler sees the headers as sent
    return ServerInterceptors.intercept(s, new ServerInterceptor() {
      @Override
      public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
          ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        return Contexts.interceptCall(Context.current().withValue(HEADERS, headers), call, headers, next);
      }
    });
  }

  int port() {
    return server.getPort();
  }

  /** A plaintext channel builder to this server; gRPC's own retry as grpc-java leaves it by default. */
  NettyChannelBuilder channelBuilder() {
    return NettyChannelBuilder.forAddress("127.0.0.1", port()).usePlaintext();
  }

  /** A channel with Quell in charge: gRPC's retry off, {@code interceptor} on. */
  ManagedChannel channel(ResilienceInterceptor interceptor) {
    return interceptor.applyTo(channelBuilder()).build();
  }

  /** Every attempt of the call named {@code request} the server has seen so far, in order. */
  List<Seen> seen(String request) {
    return seen.getOrDefault(request, List.of());
  }

  /** The next attempt to arrive, of any call; fails the test after 10 s without one. */
  Seen nextArrival() throws InterruptedException {
    Seen s = arrivals.poll(10, TimeUnit.SECONDS);
    assertThat(s).as("an attempt should have reached the server").isNotNull();
    return s;
  }

  private Seen arrive(String request) {
    int attempt = counters.computeIfAbsent(request, k -> new AtomicInteger()).incrementAndGet();
    Metadata headers = HEADERS.get();
    Seen s = new Seen(request, attempt, headers == null ? new Metadata() : headers, Context.current().getDeadline(),
        ResilienceContext.current());
    seen.computeIfAbsent(request, k -> new CopyOnWriteArrayList<>()).add(s);
    Context.current().addListener(c -> s.cancelled.countDown(), Runnable::run);
    arrivals.add(s);
    return s;
  }

  private void answer(String request, StreamObserver<String> out) {
    Seen s = arrive(request);
    script.answer(request, s.attempt).respond(request, (ServerCallStreamObserver<String>) out);
  }

  private StreamObserver<String> collect(StreamObserver<String> out) {
    StringBuilder all = new StringBuilder();
    return new StreamObserver<>() {
      @Override
      public void onNext(String value) {
        all.append(value);
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {
        String request = all.toString();
        Seen s = arrive(request);
        script.answer(request, s.attempt).respond(request, (ServerCallStreamObserver<String>) out);
      }
    };
  }

  private StreamObserver<String> chat(StreamObserver<String> out) {
    return new StreamObserver<>() {
      private boolean first = true;

      @Override
      public void onNext(String value) {
        if (first) {
          first = false;
          Seen s = arrive(value);
          script.answer(value, s.attempt).respond(value, (ServerCallStreamObserver<String>) out);
        }
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    };
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).as("server terminated").isTrue();
  }
}
