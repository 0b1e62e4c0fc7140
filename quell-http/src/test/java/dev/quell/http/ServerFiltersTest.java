package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.AttemptTimeoutException;
import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.Draining;
import dev.quell.DrainingForTests;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.StopReason;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Both server filters, the same behaviour: {@link QuellHttpServerFilter} on the JDK HttpServer and
 * {@link QuellServletFilter} on Jetty 12, each called over real loopback connections.
 */
@Timeout(60)
class ServerFiltersTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final String TRUSTED = "X-Test-Trusted";

  private FilteredServer server;
  private RawServer backend;

  @AfterEach
  void stop() throws Exception {
    DrainingForTests.reset();
    if (server != null) {
      server.close();
    }
    if (backend != null) {
      backend.close();
    }
  }

  private FilteredServer start(FilteredServer.Kind kind, FilteredServer.Handler handler) throws Exception {
    return start(kind, handler, ResilienceContext.Inbound.DEFAULT);
  }

  private FilteredServer start(FilteredServer.Kind kind, FilteredServer.Handler handler, ResilienceContext.Inbound inbound)
      throws Exception {
    server = kind.start(handler, inbound, TRUSTED);
    return server;
  }

  private HttpResponse<String> get(String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(server.uri("/work"));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(b.build(), BodyHandlers.ofString());
  }

  // ---------------------------------------------------------------- the inbound context

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void theCallersDeadlineAndCriticalityAreCurrentInTheHandler(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> FilteredServer.describeContext());

    String[] seen = get("X-Deadline-Ms", "800", "X-Criticality", "SHEDDABLE").body().split(" ");

    assertThat(Long.parseLong(seen[0])).isBetween(1L, 800L);
    assertThat(seen[1]).isEqualTo("SHEDDABLE");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void withoutHeadersTheHandlerHasNoDeadlineAndIsCritical(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> FilteredServer.describeContext());

    assertThat(get().body()).isEqualTo("none CRITICAL");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void anInboundDeadlineIsCappedAndNonsenseIsIgnored(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> FilteredServer.describeContext(),
        ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(2)));

    assertThat(Long.parseLong(get("X-Deadline-Ms", "3600000").body().split(" ")[0])).isBetween(1L, 2000L);
    assertThat(get("X-Deadline-Ms", "-5").body()).isEqualTo("none CRITICAL");
    assertThat(get("X-Deadline-Ms", "soon", "X-Criticality", "URGENT").body()).isEqualTo("none CRITICAL");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void criticalPlusFromOutsideIsLoweredUnlessTheCallerIsTrusted(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> FilteredServer.describeContext());

    assertThat(get("X-Criticality", "CRITICAL_PLUS").body()).isEqualTo("none CRITICAL");
    assertThat(get("X-Criticality", "CRITICAL_PLUS", TRUSTED, "yes").body()).isEqualTo("none CRITICAL_PLUS");
  }

  @ParameterizedTest
  @EnumSource(value = FilteredServer.Kind.class, names = "JETTY")
  void theServletFilterPutsTheCallersRetryMarkerInARequestAttribute(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> String.valueOf(exchange.attribute(RetryMarker.ATTRIBUTE)));

    assertThat(get(RetryMarker.HEADER, "2/3").body()).isEqualTo(RetryMarker.of(2, 3).toString());
    assertThat(get(RetryMarker.HEADER, "junk").body()).isEqualTo("null");
    assertThat(get().body()).isEqualTo("null");
  }

  // ---------------------------------------------------------------- refusals mapped

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void aBudgetRefusalBecomes503ProblemJsonWithRetryAfterRoundedUp(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> {
      throw new CallRejectedException("retry budget 'internal-secret' refused", StopReason.BUDGET_EXHAUSTED, 3,
          Duration.ofMillis(2500), null);
    });

    HttpResponse<String> r = get();

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/problem+json"));
    assertThat(r.headers().firstValue("Retry-After")).contains("3");
    assertThat(r.body()).contains("\"type\":\"about:blank\"", "\"title\":\"Service Unavailable\"", "\"status\":503",
        "\"reason\":\"BUDGET_EXHAUSTED\"").doesNotContain("internal-secret");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void aRefusalWithoutAHintAsksForOneSecond(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> {
      throw new CallRejectedException("open", StopReason.DEPENDENCY_UNAVAILABLE, 0, null, null);
    });

    HttpResponse<String> r = get();

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).contains("1");
    assertThat(r.body()).contains("\"reason\":\"DEPENDENCY_UNAVAILABLE\"");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void aDeadlineOverrunBecomes504(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> {
      throw new DeadlineExceededException("deadline", 2, Duration.ofMillis(800), null);
    });

    HttpResponse<String> r = get();

    assertThat(r.statusCode()).isEqualTo(504);
    assertThat(r.headers().firstValue("Retry-After")).isEmpty();
    assertThat(r.body()).contains("\"title\":\"Gateway Timeout\"", "\"status\":504", "\"reason\":\"DEADLINE_EXCEEDED\"");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void aTimedOutLastAttemptBecomes504Too(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> {
      throw new AttemptTimeoutException(Duration.ofMillis(200));
    });

    assertThat(get().statusCode()).isEqualTo(504);
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void aRefusalWrappedInAnotherExceptionIsFoundByItsCause(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> {
      throw new IllegalStateException("lookup failed",
          new IOException("outbound", new CallRejectedException("x", StopReason.LIMITED, 1, Duration.ofSeconds(4), null)));
    });

    HttpResponse<String> r = get();

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).contains("4");
    assertThat(r.body()).contains("\"reason\":\"LIMITED\"");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void anyOtherExceptionIsLeftToTheServer(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> {
      throw new IllegalStateException("a bug");
    });

    if (kind == FilteredServer.Kind.JDK) {
      // the JDK's HttpServer answers an exception escaping its handler by closing the connection
      assertThat(org.assertj.core.api.Assertions.catchThrowable(this::get)).isInstanceOf(IOException.class);
      return;
    }
    HttpResponse<String> r = get();

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).doesNotContain("problem+json");
  }

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void aResponseAlreadyCommittedIsNotRewritten(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> {
      exchange.commitPartly();
      throw new CallRejectedException("late", StopReason.BUDGET_EXHAUSTED, 2, null, null);
    });

    int status;
    try {
      status = get().statusCode();
    } catch (IOException brokenOffMidBody) {
      status = 200; // the server cut the body short: the 200 it had sent stands
    }

    assertThat(status).isEqualTo(200);
  }

  // ---------------------------------------------------------------- draining

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void whileDrainingNewRequestsGet503AndTheConnectionIsClosed(FilteredServer.Kind kind) throws Exception {
    start(kind, exchange -> "ran");
    Draining.begin(Duration.ofSeconds(30));

    URI uri = server.uri("/work");
    String answer;
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      socket.getOutputStream().write(("GET /work HTTP/1.1\r\nHost: " + uri.getAuthority() + "\r\n\r\n")
          .getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all); // returns only when the server closes the connection
      answer = all.toString(StandardCharsets.UTF_8);
    }

    assertThat(answer).startsWith("HTTP/1.1 503");
    assertThat(answer.toLowerCase(java.util.Locale.ROOT)).contains("connection: close", "application/problem+json");
    assertThat(answer).contains("\"reason\":\"DRAINING\"");
    assertThat(server.handled).as("the handler never ran").hasValue(0);
  }

  // ---------------------------------------------------------------- end to end

  @ParameterizedTest
  @EnumSource(FilteredServer.Kind.class)
  void theCallersDeadlineBoundsTheHandlersOwnOutboundCallsAndTheOverrunIsA504(FilteredServer.Kind kind)
      throws Exception {
    backend = new RawServer().then(RawServer.HANG);
    ResilientHttpClient outbound = ResilientHttpClient.of(HTTP, Resilience.HTTP); // 30 s deadline of its own
    start(kind, exchange -> outbound.send(HttpRequest.newBuilder(backend.uri("/slow")).build(), BodyHandlers.ofString()).body());

    HttpResponse<String> r = get("X-Deadline-Ms", "300");

    assertThat(r.statusCode()).isEqualTo(504);
    assertThat(backend.awaitAbandoned(1, 10)).as("the hung backend call was abandoned at the caller's deadline").isTrue();
    long forwarded = Long.parseLong(backend.requests().get(0).get("x-deadline-ms"));
    assertThat(forwarded).as("the backend was told what was left of 300 ms").isBetween(1L, 300L);
  }
}
