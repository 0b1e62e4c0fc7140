package dev.quell.bench;

import dev.quell.Resilience;
import dev.quell.grpc.ResilienceInterceptor;
import io.grpc.CallOptions;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One unary gRPC call over a real loopback connection (grpc-netty-shaded, plaintext, default
 * executors), answered at once by an echo server, with and without Quell's client interceptor:
 *
 * <ul>
 *   <li>{@code bareChannel}: grpc-java as it comes (its retry machinery on, no service config);
 *   <li>{@code bareChannelRetryOff}: {@code disableRetry()}, as {@code applyTo} builds Quell's channel,
 *       so the difference to {@code quell} is the interceptor alone;
 *   <li>{@code quell}: {@code ResilienceInterceptor.of(Resilience.DEFAULT)} via {@code applyTo}: budget,
 *       30 s deadline, 10 s attempt timeout (so a wire deadline on every call), all on;
 *   <li>{@code quellPerService}: the same with a budget per service ({@code perService}), which adds
 *       a scope lookup per call.
 * </ul>
 *
 * <p>The caller blocks for each answer ({@code ClientCalls.blockingUnaryCall}), as most callers do, so
 * the numbers are dominated by the loopback round trip and the hand-offs between threads; what
 * matters is the gap between the rows.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class GrpcCallBenchmark {
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

  static final MethodDescriptor<String, String> ECHO = MethodDescriptor.<String, String>newBuilder()
      .setType(MethodDescriptor.MethodType.UNARY)
      .setFullMethodName(MethodDescriptor.generateFullMethodName("quell.bench.Echo", "Echo"))
      .setRequestMarshaller(STRINGS)
      .setResponseMarshaller(STRINGS)
      .build();

  Server server;
  ManagedChannel bare;
  ManagedChannel bareRetryOff;
  ManagedChannel quell;
  ManagedChannel quellPerService;

  @Setup(Level.Trial)
  public void start() throws IOException {
    server = NettyServerBuilder
        .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), InsecureServerCredentials.create())
        .addService(ServerServiceDefinition.builder("quell.bench.Echo")
            .addMethod(ECHO, ServerCalls.asyncUnaryCall((String request, io.grpc.stub.StreamObserver<String> out) -> {
              out.onNext(request);
              out.onCompleted();
            }))
            .build())
        .build()
        .start();
    bare = channel().build();
    bareRetryOff = channel().disableRetry().build();
    quell = ResilienceInterceptor.of(Resilience.DEFAULT.withName("bench")).applyTo(channel()).build();
    quellPerService = ResilienceInterceptor.perService(Resilience.DEFAULT.withName("bench")).applyTo(channel()).build();
  }

  private NettyChannelBuilder channel() {
    return NettyChannelBuilder.forAddress(InetAddress.getLoopbackAddress().getHostAddress(), server.getPort()).usePlaintext();
  }

  @TearDown(Level.Trial)
  public void stop() throws InterruptedException {
    for (ManagedChannel c : new ManagedChannel[] {bare, bareRetryOff, quell, quellPerService}) {
      c.shutdownNow();
      c.awaitTermination(10, TimeUnit.SECONDS);
    }
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
  }

  @Benchmark
  public String bareChannel() {
    return ClientCalls.blockingUnaryCall(bare, ECHO, CallOptions.DEFAULT, "ping");
  }

  @Benchmark
  public String bareChannelRetryOff() {
    return ClientCalls.blockingUnaryCall(bareRetryOff, ECHO, CallOptions.DEFAULT, "ping");
  }

  @Benchmark
  public String quell() {
    return ClientCalls.blockingUnaryCall(quell, ECHO, CallOptions.DEFAULT, "ping");
  }

  @Benchmark
  public String quellPerService() {
    return ClientCalls.blockingUnaryCall(quellPerService, ECHO, CallOptions.DEFAULT, "ping");
  }
}
