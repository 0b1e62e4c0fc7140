package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import dev.quell.internal.HttpClassification;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Classifier.HTTP over real java.net.http responses from a JDK HttpServer on loopback. */
class HttpClassifierTest {
  private HttpServer server;
  private final ConcurrentLinkedQueue<int[]> script = new ConcurrentLinkedQueue<>();
  private final AtomicInteger requests = new AtomicInteger();
  private volatile String retryAfter;
  private final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", exchange -> {
      requests.incrementAndGet();
      int[] next = script.poll();
      int status = next == null ? 200 : next[0];
      if (retryAfter != null) {
        exchange.getResponseHeaders().add("Retry-After", retryAfter);
      }
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
    });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private HttpResponse<Void> get() throws IOException, InterruptedException {
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
    return client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding());
  }

  @ParameterizedTest
  @CsvSource({"200, OK", "204, OK", "304, OK", "404, PERMANENT", "400, PERMANENT", "408, TRANSIENT", "500, TRANSIENT",
      "502, TRANSIENT", "503, TRANSIENT", "429, THROTTLED"})
  void statusCodes(int status, Verdict.Kind kind) throws Exception {
    script.add(new int[] {status});
    assertThat(Classifier.HTTP.classify(get(), null).kind()).isEqualTo(kind);
  }

  @Test
  void retryAfterInSecondsMakesA503Throttled() throws Exception {
    retryAfter = "7";
    script.add(new int[] {503});
    assertThat(Classifier.HTTP.classify(get(), null)).isEqualTo(Verdict.throttled(Duration.ofSeconds(7)));
  }

  @Test
  void retryAfterAsAnHttpDateIsHonoured() {
    Instant now = Instant.parse("2026-11-30T10:00:00Z");
    String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(90).atOffset(ZoneOffset.UTC));
    assertThat(HttpClassification.parseRetryAfter(date, now)).isEqualTo(Duration.ofSeconds(90));
    assertThat(HttpClassification.parseRetryAfter("soon", now)).isNull();
    assertThat(HttpClassification.parseRetryAfter("-1", now)).isNull();
    assertThat(HttpClassification.classifyStatus(429, Optional.of("garbage"))).isEqualTo(Verdict.THROTTLED);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Sun, 06 Nov 1994 08:51:07 GMT", "Sunday, 06-Nov-94 08:51:07 GMT", "Sun Nov  6 08:51:07 1994"})
  void eachHttpDateFormIsMeasuredFromTheResponsesOwnDate(String when) throws Exception {
    // the JDK's HttpServer writes its own Date: a socket on loopback answers with a server clock 32 years
    // behind ours, which must still get the 90 s it asked for
    try (ServerSocket raw = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Void> answered = CompletableFuture.runAsync(() -> {
        try (Socket s = raw.accept()) {
          BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
          for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
            // the request's headers: read and ignored
          }
          s.getOutputStream().write(("HTTP/1.1 503 Service Unavailable\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
              + "Retry-After: " + when + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      URI uri = URI.create("http://127.0.0.1:" + raw.getLocalPort() + "/");
      HttpResponse<Void> response = client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding());
      answered.get(10, TimeUnit.SECONDS);
      assertThat(response.headers().firstValue("Date")).contains("Sun, 06 Nov 1994 08:49:37 GMT");
      assertThat(Classifier.HTTP.classify(response, null)).isEqualTo(Verdict.throttled(Duration.ofSeconds(90)));
    }
  }

  @Test
  void aHugeRetryAfterSaturatesInsteadOfBeingIgnored() throws Exception {
    retryAfter = "99999999999999999999";
    script.add(new int[] {429});
    assertThat(Classifier.HTTP.classify(get(), null)).isEqualTo(Verdict.throttled(HttpClassification.MAX_RETRY_AFTER));
  }

  @Test
  void exceptionsFallBackToTheDefaultClassifier() {
    assertThat(Classifier.HTTP.classify(null, new java.net.ConnectException()).kind()).isEqualTo(Verdict.Kind.TRANSIENT);
    assertThat(Classifier.HTTP.classify(null, new IllegalArgumentException()).kind()).isEqualTo(Verdict.Kind.PERMANENT);
  }

  @Test
  void theHttpPresetRetriesServerErrorsAgainstARealServer() throws Exception {
    script.add(new int[] {503});
    script.add(new int[] {500});
    retryAfter = null;
    Resilience policy = Resilience.HTTP.withBackoff(Backoff.NONE);
    HttpResponse<Void> response = policy.execute(this::get);
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(requests).hasValue(3);
  }

  @Test
  void anUnretriableResponseIsReturnedWhenRetryingIsOver() throws Exception {
    script.add(new int[] {500});
    script.add(new int[] {500});
    script.add(new int[] {500});
    Outcome<HttpResponse<Void>> o = Resilience.HTTP.withBackoff(Backoff.NONE).run(this::get);
    assertThat(o.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(o.hasValue()).isTrue();
    assertThat(o.value().statusCode()).isEqualTo(500);
    assertThat(o.failure()).isEmpty();
  }
}
