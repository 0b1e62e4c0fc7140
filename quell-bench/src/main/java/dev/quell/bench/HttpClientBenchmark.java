package dev.quell.bench;

import com.sun.net.httpserver.HttpServer;
import dev.quell.Resilience;
import dev.quell.http.ResilientHttpClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * The library's share of a real request: one loopback GET through {@link ResilientHttpClient} with
 * {@link Resilience#HTTP} (budget, deadline, attempt timeout, per-host scope, a fresh request per
 * attempt with its deadline, criticality and retry-marker headers) against the same GET through the
 * bare {@link HttpClient} it wraps. Both talk to the JDK's HttpServer on loopback in the same JVM, over
 * HTTP/1.1 keep-alive connections, and read a two-byte body as a String.
 *
 * <p>The difference between the two is what Quell adds to a request that succeeds on its first
 * attempt, measured against the cost of the request itself.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
// Without TCP_NODELAY the JDK's HttpServer sends headers and body as two small segments, and the
// client's delayed ACK holds the second for ~40 ms: the benchmark would measure Nagle, not HTTP.
@Fork(value = 1, jvmArgsAppend = "-Dsun.net.httpserver.nodelay=true")
public class HttpClientBenchmark {

  /** One loopback server and the two clients, for the whole run. */
  @State(Scope.Benchmark)
  public static class Loopback {
    HttpServer server;
    ExecutorService serverThreads;
    HttpClient http;
    ResilientHttpClient quell;
    HttpRequest request;

    @Setup(Level.Trial)
    public void start() throws IOException {
      System.setProperty("sun.net.httpserver.nodelay", "true"); // for the sanity test, which runs unforked
      serverThreads = Executors.newFixedThreadPool(2);
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      server.setExecutor(serverThreads);
      byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
      server.createContext("/", exchange -> {
        try (InputStream in = exchange.getRequestBody()) {
          in.transferTo(OutputStream.nullOutputStream());
        }
        exchange.sendResponseHeaders(200, ok.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(ok);
        }
      });
      server.start();
      http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      quell = ResilientHttpClient.of(http, Resilience.HTTP);
      request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/item")).build();
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
      server.stop(0);
      serverThreads.shutdownNow();
      serverThreads.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** The bare JDK client: the cost of the request itself. */
  @Benchmark
  public String bareHttpClient(Loopback loopback) throws IOException, InterruptedException {
    return loopback.http.send(loopback.request, HttpResponse.BodyHandlers.ofString()).body();
  }

  /** The same request through Quell. */
  @Benchmark
  public String resilientHttpClient(Loopback loopback) throws IOException, InterruptedException {
    return loopback.quell.send(loopback.request, HttpResponse.BodyHandlers.ofString()).body();
  }
}
