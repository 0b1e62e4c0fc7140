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
import java.net.http.HttpHeaders;
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
 * attempt, measured against the cost of the request itself. {@link #policyAroundSend} is the same
 * request with the policy wrapped by hand around the bare client's {@code send}
 * ({@code Resilience.HTTP.execute(() -> http.send(...))}), without the per-host scope and headers.
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
    Resilience policy;
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
      policy = Resilience.HTTP.withName("around-send");
      request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/item")).build();
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
      server.stop(0);
      serverThreads.shutdownNow();
      serverThreads.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /**
   * An {@code HttpClient} that answers at once, with no I/O: through it, {@link #quellAlone} measures
   * what Quell itself does per request (the scope lookup, the policy, the per-attempt request copy with
   * its headers, the response tracking) without the loopback's noise.
   */
  static final class Instant extends HttpClient {
    private final HttpHeaders none = HttpHeaders.of(java.util.Map.of(), (a, b) -> true);

    @Override public java.util.Optional<java.net.CookieHandler> cookieHandler() { return java.util.Optional.empty(); }
    @Override public java.util.Optional<java.time.Duration> connectTimeout() { return java.util.Optional.empty(); }
    @Override public Redirect followRedirects() { return Redirect.NEVER; }
    @Override public java.util.Optional<java.net.ProxySelector> proxy() { return java.util.Optional.empty(); }
    @Override public javax.net.ssl.SSLContext sslContext() { throw new UnsupportedOperationException(); }
    @Override public javax.net.ssl.SSLParameters sslParameters() { return new javax.net.ssl.SSLParameters(); }
    @Override public java.util.Optional<java.net.Authenticator> authenticator() { return java.util.Optional.empty(); }
    @Override public Version version() { return Version.HTTP_1_1; }
    @Override public java.util.Optional<java.util.concurrent.Executor> executor() { return java.util.Optional.empty(); }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
      return answer(request);
    }

    @Override
    public <T> java.util.concurrent.CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request,
        HttpResponse.BodyHandler<T> handler) {
      return java.util.concurrent.CompletableFuture.completedFuture(answer(request));
    }

    @Override
    public <T> java.util.concurrent.CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request,
        HttpResponse.BodyHandler<T> handler, HttpResponse.PushPromiseHandler<T> push) {
      return sendAsync(request, handler);
    }

    @SuppressWarnings("unchecked")
    private <T> HttpResponse<T> answer(HttpRequest request) {
      HttpHeaders headers = none;
      return (HttpResponse<T>) new HttpResponse<String>() {
        @Override public int statusCode() { return 200; }
        @Override public HttpRequest request() { return request; }
        @Override public java.util.Optional<HttpResponse<String>> previousResponse() { return java.util.Optional.empty(); }
        @Override public HttpHeaders headers() { return headers; }
        @Override public String body() { return "ok"; }
        @Override public java.util.Optional<javax.net.ssl.SSLSession> sslSession() { return java.util.Optional.empty(); }
        @Override public URI uri() { return request.uri(); }
        @Override public Version version() { return Version.HTTP_1_1; }
      };
    }
  }

  /** Quell in front of a client that answers at once: Quell's own work per request, alone. */
  @State(Scope.Benchmark)
  public static class Alone {
    final Instant http = new Instant();
    final ResilientHttpClient quell = ResilientHttpClient.of(http, Resilience.HTTP);
    final HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:8080/item")).build();
  }

  /** What Quell itself does per request, with no I/O behind it. */
  @Benchmark
  public String quellAlone(Alone alone) throws IOException, InterruptedException {
    return alone.quell.send(alone.request, HttpResponse.BodyHandlers.ofString()).body();
  }

  /** The client that answers at once, called directly: the baseline for {@link #quellAlone}. */
  @Benchmark
  public String instantAlone(Alone alone) {
    return alone.http.send(alone.request, HttpResponse.BodyHandlers.ofString()).body();
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

  /** The bare client's blocking send inside a policy by hand: the core's synchronous driver alone. */
  @Benchmark
  public String policyAroundSend(Loopback loopback) throws Exception {
    HttpResponse<String> response = loopback.policy.execute(
        () -> loopback.http.send(loopback.request, HttpResponse.BodyHandlers.ofString()));
    return response == null ? "" : response.body();
  }

  /**
   * The three loopback contenders measured in one JVM, one request each in turn (bare, Quell, the policy
   * by hand, rotating which goes first), so that a machine whose load moves during the run moves them
   * alike: on a busy machine JMH's one fork per benchmark can put minutes of different load between
   * them. Prints the mean and percentiles of each, and their ratios to the bare client.
   *
   * <pre>{@code java -cp quell-bench/target/benchmarks.jar dev.quell.bench.HttpClientBenchmark\$Interleaved 20000}</pre>
   */
  public static final class Interleaved {
    private Interleaved() {}

    public static void main(String[] args) throws Exception {
      int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
      Loopback loopback = new Loopback();
      loopback.start();
      HttpClientBenchmark bench = new HttpClientBenchmark();
      String[] names = {"bareHttpClient", "resilientHttpClient", "policyAroundSend"};
      long[][] nanos = new long[names.length][n];
      try {
        for (int i = 0; i < 3_000; i++) { // warm-up
          bench.bareHttpClient(loopback);
          bench.resilientHttpClient(loopback);
          bench.policyAroundSend(loopback);
        }
        for (int i = 0; i < n; i++) {
          for (int k = 0; k < names.length; k++) {
            int which = (i + k) % names.length;
            long started = System.nanoTime();
            if (which == 0) {
              bench.bareHttpClient(loopback);
            } else if (which == 1) {
              bench.resilientHttpClient(loopback);
            } else {
              bench.policyAroundSend(loopback);
            }
            nanos[which][i] = System.nanoTime() - started;
          }
        }
      } finally {
        loopback.stop();
      }
      double[] mean = new double[names.length];
      long[] p50 = new long[names.length];
      for (int k = 0; k < names.length; k++) {
        long[] sorted = nanos[k].clone();
        java.util.Arrays.sort(sorted);
        mean[k] = java.util.Arrays.stream(sorted).average().orElse(0);
        p50[k] = sorted[n / 2];
        System.out.printf("%-20s mean %8.1f us   p10 %8.1f us   p50 %8.1f us   p90 %8.1f us%n", names[k], mean[k] / 1e3,
            sorted[n / 10] / 1e3, p50[k] / 1e3, sorted[n * 9 / 10] / 1e3);
      }
      for (int k = 1; k < names.length; k++) {
        System.out.printf("%-20s / bare: mean %.2fx   p50 %.2fx%n", names[k], mean[k] / mean[0], (double) p50[k] / p50[0]);
      }
    }
  }
}
