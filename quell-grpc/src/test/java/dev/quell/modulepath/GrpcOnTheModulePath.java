package dev.quell.modulepath;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.Verdict;
import dev.quell.grpc.GrpcClassifier;
import dev.quell.grpc.ResilienceInterceptor;
import dev.quell.grpc.ResilienceServerInterceptor;
import io.grpc.CallOptions;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
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
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tiny application run by {@code dev.quell.grpc.ModulePathIT} in a child JVM with quell-grpc,
 * quell-core and gRPC on the module path (this class alone on the class path): each line it prints
 * is a check that passed; any failure, an IllegalAccessError above all, ends it with a stack trace
 * and a non-zero exit.
 */
public final class GrpcOnTheModulePath {
  private GrpcOnTheModulePath() {}

  private static final MethodDescriptor.Marshaller<String> STRINGS = new MethodDescriptor.Marshaller<>() {
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

  public static void main(String[] args) throws Exception {
    GrpcClassifier classifier = GrpcClassifier.DEFAULT.with(Status.Code.ABORTED, Verdict.Kind.TRANSIENT);
    check(classifier.kindOf(Status.Code.ABORTED), Verdict.Kind.TRANSIENT);
    System.out.println("GrpcClassifier.with");

    ResilienceInterceptor quell = ResilienceInterceptor.of(Resilience.DEFAULT.withName("modular").withBackoff(Backoff.NONE))
        .withClassifier(classifier)
        .withDeadlineSlack(Duration.ofMillis(5));
    check(quell.deadlineSlack(), Duration.ofMillis(5));
    try {
      quell.withDeadlineSlack(Duration.ofMillis(-1));
      throw new AssertionError("a negative slack was accepted");
    } catch (ResilienceConfigurationException expected) {
      check(expected.getMessage().contains("deadlineSlack"), true);
    }
    System.out.println("ResilienceInterceptor.withDeadlineSlack");

    check(ResilienceInterceptor.class.getModule().getName(), "dev.quell.grpc");
    check(Resilience.class.getModule().getName(), "dev.quell");
    System.out.println("module dev.quell.grpc");

    MethodDescriptor<String, String> echo = MethodDescriptor.<String, String>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName("modular.Echo/Echo")
        .setRequestMarshaller(STRINGS)
        .setResponseMarshaller(STRINGS)
        .build();
    AtomicInteger attempts = new AtomicInteger();
    ServerServiceDefinition service = ServerServiceDefinition.builder("modular.Echo")
        .addMethod(echo, ServerCalls.asyncUnaryCall((String request, io.grpc.stub.StreamObserver<String> out) -> {
          if (attempts.incrementAndGet() == 1) {
            out.onError(Status.ABORTED.withDescription("conflict").asRuntimeException());
          } else {
            out.onNext(request);
            out.onCompleted();
          }
        }))
        .build();
    Server server = NettyServerBuilder
        .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), InsecureServerCredentials.create())
        .addService(ServerInterceptors.intercept(service, ResilienceServerInterceptor.create()))
        .build()
        .start();
    ManagedChannel channel = quell.applyTo(NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext())
        .build();
    try {
      check(ClientCalls.blockingUnaryCall(channel, echo, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "hi"),
          "hi");
      check(attempts.get(), 2);
      System.out.println("a call retried over loopback");
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static void check(Object actual, Object expected) {
    if (!expected.equals(actual)) {
      throw new AssertionError("expected " + expected + " but was " + actual);
    }
  }
}
