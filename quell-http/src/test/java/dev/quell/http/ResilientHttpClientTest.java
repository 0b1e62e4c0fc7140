package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.AttemptTimeoutException;
import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Criticality;
import dev.quell.DeadlineExceededException;
import dev.quell.Draining;
import dev.quell.DrainingForTests;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.test.EventRecorder;
import dev.quell.test.VirtualTime;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ResilientHttpClient} against real servers on loopback: the JDK's HttpServer, and a raw-socket
 * server for resets, hangs and exact headers. Time-dependent logic (backoff, Retry-After) runs on a
 * virtual clock; only the tests of aborting a hung exchange use real, short attempt timeouts, and none
 * asserts how long anything took on the wall clock.
 */
@Timeout(60)
class ResilientHttpClientTest {
  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private final VirtualTime time = VirtualTime.create();
  private final EventRecorder events = new EventRecorder();
  private final Resilience policy = Resilience.HTTP.withName("t").withTimeSource(time).withListener(events);

  private JdkServer server;
  private RawServer raw;

  @AfterEach
  void stop() throws Exception {
    DrainingForTests.reset();
    if (server != null) {
      server.close();
    }
    if (raw != null) {
      raw.close();
    }
  }

  @AfterAll
  static void closeClient() {
    ResilientHttpClient.of(HTTP).close(); // releases the client's threads on JDK 21+
  }

  private JdkServer server(JdkServer.Reply... replies) throws Exception {
    server = new JdkServer().then(replies);
    return server;
  }

  private RawServer raw(RawServer.Action... actions) throws Exception {
    raw = new RawServer().then(actions);
    return raw;
  }

  private static HttpRequest get(java.net.URI uri) {
    return HttpRequest.newBuilder(uri).build();
  }

  // ---------------------------------------------------------------- retries and superseded bodies

  @Test
  void aRetried503IsClosedSoItsConnectionIsReleasedAndTheRetryAnswers() throws Exception {
    server(JdkServer.endless(503), JdkServer.status(200, "fine"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    HttpResponse<InputStream> r = client.send(get(server.uri("/")), BodyHandlers.ofInputStream());

    assertThat(r.statusCode()).isEqualTo(200);
    try (InputStream body = r.body()) {
      assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("fine");
    }
    assertThat(server.requests()).hasSize(2);
    assertThat(server.awaitIdle(10)).as("the 503's endless body was closed by the client").isTrue();
    assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).isEqualTo(2);
    assertThat(events.terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED);
  }

  @Test
  void whenTheAttemptsRunOutTheLast503IsReturnedOpenAndOnlyTheEarlierOnesAreClosed() throws Exception {
    server(JdkServer.endless(503), JdkServer.endless(503), JdkServer.endless(503));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    HttpResponse<InputStream> r = client.send(get(server.uri("/")), BodyHandlers.ofInputStream());

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(events.terminal().stopReason()).contains(StopReason.ATTEMPTS_EXHAUSTED);
    assertThat(r.body().readNBytes(5)).as("the returned body is the caller's, still readable").hasSize(5);
    assertThat(server.awaitInProgressAtMost(1, 10)).as("the earlier 503s' exchanges were closed").isTrue();
    assertThat(server.inProgress()).as("only the returned response's exchange is still open").isEqualTo(1);
    r.body().close();
    assertThat(server.awaitIdle(10)).isTrue();
  }

  @Test
  void aStreamingBodyIsHandedOverUnreadNeverBuffered() throws Exception {
    server(JdkServer.endless(200)); // a body that never ends: buffering it would never return
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    HttpResponse<InputStream> r = client.send(get(server.uri("/")), BodyHandlers.ofInputStream());

    try (InputStream body = r.body()) {
      assertThat(body.readNBytes(100)).hasSize(100);
    }
    assertThat(server.awaitIdle(10)).isTrue();
  }

  static Stream<Arguments> bodyHandlers() {
    return Stream.of(
        Arguments.of("string", BodyHandlers.ofString(), (Reader) b -> (String) b),
        Arguments.of("bytes", BodyHandlers.ofByteArray(), (Reader) b -> new String((byte[]) b, StandardCharsets.UTF_8)),
        Arguments.of("stream", BodyHandlers.ofInputStream(), (Reader) b -> {
          try (InputStream in = (InputStream) b) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
          }
        }),
        Arguments.of("lines", BodyHandlers.ofLines(), (Reader) b -> {
          try (Stream<?> lines = (Stream<?>) b) {
            return lines.map(Object::toString).collect(Collectors.joining("\n"));
          }
        }),
        Arguments.of("publisher", BodyHandlers.ofPublisher(), (Reader) ResilientHttpClientTest::readPublisher),
        Arguments.of("discarding", BodyHandlers.discarding(), (Reader) b -> b == null ? "hello" : "not discarded"));
  }

  interface Reader {
    String read(Object body) throws Exception;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bodyHandlers")
  void everyKindOfBodyHandlerWorksThroughARetry(String kind, HttpResponse.BodyHandler<?> handler, Reader reader)
      throws Exception {
    // an endless 503 for the handlers that stream; the buffering ones would read it for ever, by design
    boolean streams = kind.equals("stream") || kind.equals("lines") || kind.equals("publisher");
    server(streams ? JdkServer.endless(503) : JdkServer.status(503, "busy"), JdkServer.status(200, "hello"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    HttpResponse<?> r = client.send(get(server.uri("/")), handler);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(reader.read(r.body())).isEqualTo("hello");
    assertThat(server.awaitIdle(10)).as("the superseded %s body was released", kind).isTrue();
  }

  private static String readPublisher(Object body) throws Exception {
    @SuppressWarnings("unchecked")
    Flow.Publisher<List<ByteBuffer>> publisher = (Flow.Publisher<List<ByteBuffer>>) body;
    CompletableFuture<String> text = new CompletableFuture<>();
    StringBuilder sb = new StringBuilder();
    publisher.subscribe(new Flow.Subscriber<>() {
      @Override
      public void onSubscribe(Flow.Subscription s) {
        s.request(Long.MAX_VALUE);
      }

      @Override
      public void onNext(List<ByteBuffer> item) {
        item.forEach(b -> sb.append(StandardCharsets.UTF_8.decode(b)));
      }

      @Override
      public void onError(Throwable t) {
        text.completeExceptionally(t);
      }

      @Override
      public void onComplete() {
        text.complete(sb.toString());
      }
    });
    return text.get(10, TimeUnit.SECONDS);
  }

  // ---------------------------------------------------------------- Retry-After

  @Test
  void retryAfterInDeltaSecondsIsWaitedExactly() throws Exception {
    server(JdkServer.status(503, "", "Retry-After", "7"), JdkServer.status(200, "ok"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    assertThat(client.send(get(server.uri("/")), BodyHandlers.ofString()).statusCode()).isEqualTo(200);

    ResilienceEvent retrying = events.ofType(ResilienceEvent.Type.RETRYING).get(0);
    assertThat(retrying.delay()).contains(Duration.ofSeconds(7));
    assertThat(retrying.verdict()).contains(Verdict.throttled(Duration.ofSeconds(7)));
    assertThat(time.elapsed()).isEqualTo(Duration.ofSeconds(7));
  }

  @ParameterizedTest
  @ValueSource(strings = {"Sun, 06 Nov 1994 08:49:40 GMT", "Sunday, 06-Nov-94 08:49:40 GMT", "Sun Nov  6 08:49:40 1994"})
  void retryAfterAsAnHttpDateInEachFormIsMeasuredFromTheResponsesDate(String retryAfter) throws Exception {
    raw(RawServer.respond(503, "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nRetry-After: " + retryAfter + "\r\n", ""),
        RawServer.respond(200, "", "ok"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    assertThat(client.send(get(raw.uri("/")), BodyHandlers.ofString()).body()).isEqualTo("ok");

    assertThat(events.ofType(ResilienceEvent.Type.RETRYING).get(0).delay()).contains(Duration.ofSeconds(3));
    assertThat(time.elapsed()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void a429IsThrottledAndWaitsItsRetryAfter() throws Exception {
    server(JdkServer.status(429, "slow down", "Retry-After", "2"), JdkServer.status(200, "ok"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    assertThat(client.send(get(server.uri("/")), BodyHandlers.ofString()).statusCode()).isEqualTo(200);

    assertThat(events.ofType(ResilienceEvent.Type.RETRYING).get(0).verdict())
        .contains(Verdict.throttled(Duration.ofSeconds(2)));
    assertThat(time.elapsed()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void aRetryAfterPastTheDeadlineEndsTheCallAtOnceAndClosesTheResponse() throws Exception {
    server(JdkServer.endless(503, "Retry-After", "20"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy.withDeadline(Duration.ofSeconds(5)));

    Throwable thrown = catchThrowable(() -> client.send(get(server.uri("/")), BodyHandlers.ofInputStream()));

    assertThat(thrown).isInstanceOf(DeadlineExceededException.class);
    assertThat(time.elapsed()).as("no wait past the deadline, not even up to it").isZero();
    assertThat(server.awaitIdle(10)).as("the 503 the caller never saw was closed").isTrue();
    assertThat(events.terminals()).hasSize(1);
  }

  // ---------------------------------------------------------------- what may be repeated

  @Test
  void aPostIsNotRetriedButStillFundsTheHostsBudget() throws Exception {
    server(JdkServer.status(503, ""), JdkServer.status(200, "created"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);
    HttpRequest post = HttpRequest.newBuilder(server.uri("/orders")).POST(HttpRequest.BodyPublishers.ofString("{}")).build();

    assertThat(client.send(post, BodyHandlers.ofString()).statusCode()).isEqualTo(503);
    assertThat(server.requests()).hasSize(1);
    assertThat(server.requests().get(0).getFirst(RetryMarker.HEADER)).as("no retry, so no marker").isNull();

    RetryBudget budget = client.policyFor("127.0.0.1:" + server.uri("/").getPort()).budget();
    budget.trySpend();
    budget.trySpend();
    double before = budget.tokens();
    assertThat(client.send(post, BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    assertThat(budget.tokens()).as("the POST's success deposited into the host's budget")
        .isCloseTo(before + 0.1, org.assertj.core.api.Assertions.within(1e-9));
  }

  static Stream<Arguments> repeatable() {
    return Stream.of(
        Arguments.of("POST with Idempotency-Key", "POST", "Idempotency-Key", Repeatable.BY_METHOD, 2),
        Arguments.of("POST", "POST", null, Repeatable.BY_METHOD, 1),
        Arguments.of("PATCH", "PATCH", null, Repeatable.BY_METHOD, 1),
        Arguments.of("PATCH marked YES", "PATCH", null, Repeatable.YES, 2),
        Arguments.of("GET marked NO", "GET", null, Repeatable.NO, 1),
        Arguments.of("PUT", "PUT", null, Repeatable.BY_METHOD, 2),
        Arguments.of("DELETE", "DELETE", null, Repeatable.BY_METHOD, 2),
        Arguments.of("OPTIONS", "OPTIONS", null, Repeatable.BY_METHOD, 2),
        Arguments.of("HEAD", "HEAD", null, Repeatable.BY_METHOD, 2));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("repeatable")
  void onlyRepeatableRequestsAreRetried(String name, String method, String header, Repeatable repeatable, int attempts)
      throws Exception {
    server(JdkServer.status(503, ""), JdkServer.status(200, ""));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);
    HttpRequest.Builder b = HttpRequest.newBuilder(server.uri("/")).method(method, HttpRequest.BodyPublishers.noBody());
    if (header != null) {
      b.header(header, "k-1");
    }

    client.send(b.build(), BodyHandlers.ofString(), repeatable);

    assertThat(server.requests()).hasSize(attempts);
  }

  // ---------------------------------------------------------------- headers on every attempt

  @Test
  void eachAttemptCarriesItsOwnDeadlineAndTheNestedRetryMarker() throws Exception {
    server(JdkServer.status(503, ""), JdkServer.status(503, ""), JdkServer.status(200, ""));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy.withAttemptTimeout(Duration.ofSeconds(2)));

    client.send(get(server.uri("/")), BodyHandlers.ofString());

    assertThat(server.requests()).extracting(h -> h.getFirst(ResilienceContext.DEADLINE_HEADER))
        .as("the attempt timeout, not the 30 s deadline: each attempt's own end")
        .containsExactly("2000", "2000", "2000");
    assertThat(server.requests()).extracting(h -> h.getFirst(RetryMarker.HEADER)).containsExactly("1/3", "2/3", "3/3");
  }

  @Test
  void theLastAttemptsDeadlineIsWhatIsLeftOfTheCall() throws Exception {
    server(JdkServer.status(503, "", "Retry-After", "3"), JdkServer.status(200, ""));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP,
        policy.withDeadline(Duration.ofSeconds(10)).withAttemptTimeout(Duration.ofSeconds(8)));

    client.send(get(server.uri("/")), BodyHandlers.ofString());

    assertThat(server.requests()).extracting(h -> h.getFirst(ResilienceContext.DEADLINE_HEADER))
        .containsExactly("8000", "7000"); // 10 s deadline, 3 s spent waiting: 7 s left, less than 8
  }

  @Test
  void theAmbientDeadlineAndCriticalityReachTheServer() throws Exception {
    server(JdkServer.status(200, ""));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);
    ResilienceContext inbound = ResilienceContext.current()
        .withDeadline(Duration.ofMillis(1500), time)
        .withCriticality(Criticality.SHEDDABLE);

    try (ResilienceContext.Scope scope = inbound.open()) {
      client.send(get(server.uri("/")), BodyHandlers.ofString());
    }

    assertThat(server.requests().get(0).getFirst(ResilienceContext.DEADLINE_HEADER)).isEqualTo("1500");
    assertThat(server.requests().get(0).getFirst(ResilienceContext.CRITICALITY_HEADER)).isEqualTo("SHEDDABLE");
  }

  @Test
  void aTighterDeadlineTheCallerSetIsKeptAndALooserOneReplaced() throws Exception {
    server(JdkServer.status(200, ""), JdkServer.status(200, ""));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy.withAttemptTimeout(Duration.ofSeconds(2)));

    client.send(HttpRequest.newBuilder(server.uri("/")).header("X-Deadline-Ms", "500")
        .header("X-Criticality", "SHEDDABLE_PLUS").build(), BodyHandlers.ofString());
    client.send(HttpRequest.newBuilder(server.uri("/")).header("X-Deadline-Ms", "90000").build(), BodyHandlers.ofString());

    assertThat(server.requests()).extracting(h -> h.get(ResilienceContext.DEADLINE_HEADER))
        .containsExactly(List.of("500"), List.of("2000"));
    assertThat(server.requests().get(0).getFirst(ResilienceContext.CRITICALITY_HEADER))
        .as("without an ambient criticality, the caller's own header is kept").isEqualTo("SHEDDABLE_PLUS");
  }

  // ---------------------------------------------------------------- faults on the wire

  @Test
  void aResetConnectionIsRetriedOnANewOne() throws Exception {
    raw(RawServer.RESET, RawServer.respond(200, "", "ok"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);
    HttpRequest post = HttpRequest.newBuilder(raw.uri("/")).header("Idempotency-Key", "k-7")
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build();

    assertThat(client.send(post, BodyHandlers.ofString()).body()).isEqualTo("ok");
    assertThat(raw.connections()).isEqualTo(2);
    assertThat(events.ofType(ResilienceEvent.Type.RETRYING)).singleElement()
        .satisfies(e -> assertThat(e.verdict()).contains(Verdict.TRANSIENT));
  }

  @Test
  void theJdkItselfResendsAGetOnceWhenItsConnectionIsResetInsideOneQuellAttempt() throws Exception {
    raw(RawServer.RESET, RawServer.RESET, RawServer.respond(200, "", "ok"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    assertThat(client.send(get(raw.uri("/")), BodyHandlers.ofString()).body()).isEqualTo("ok");

    assertThat(raw.connections()).as("three connections for two Quell attempts").isEqualTo(3);
    assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).isEqualTo(2);
  }

  @Test
  void aConnectionDroppedWithoutAnAnswerIsRetried() throws Exception {
    server(JdkServer.drop(), JdkServer.status(200, "ok"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);

    assertThat(client.send(get(server.uri("/")), BodyHandlers.ofString()).body()).isEqualTo("ok");
    assertThat(server.requests()).hasSize(2);
  }

  @Test
  void aHungServerIsAbandonedAtEachAttemptTimeoutAndItsConnectionClosed() throws Exception {
    raw(RawServer.HANG, RawServer.HANG);
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP.withAttempts(2)
        .withAttemptTimeout(Duration.ofMillis(200)).withBackoff(Backoff.NONE).withListener(events));

    Throwable thrown = catchThrowable(() -> client.send(get(raw.uri("/")), BodyHandlers.ofString()));

    assertThat(thrown).isInstanceOf(AttemptTimeoutException.class);
    assertThat(raw.awaitAbandoned(2, 10)).as("the JDK aborted both exchanges and closed their connections").isTrue();
    assertThat(events.terminals()).hasSize(1);
    assertThat(client.abandonedExchanges()).as("both exchanges were given up on in flight").isEqualTo(2);
    assertThat(Thread.currentThread().isInterrupted()).as("the timeouts' interrupts were taken back").isFalse();
  }

  @Test
  void cancellingTheFutureAbortsTheExchangeInFlightAndStartsNoRetry() throws Exception {
    raw(RawServer.HANG);
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP.withListener(events));

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(raw.uri("/")), BodyHandlers.ofString());
    assertThat(raw.awaitHanging(1, 10)).isTrue();
    assertThat(future.cancel(true)).isTrue();

    assertThat(raw.awaitAbandoned(1, 10)).as("the exchange was aborted, its connection closed").isTrue();
    assertThat(catchThrowable(future::join)).isInstanceOf(CancellationException.class);
    assertThat(client.abandonedExchanges()).isEqualTo(1);
    assertThat(raw.connections()).isEqualTo(1);
    assertThat(events.terminals()).singleElement().extracting(ResilienceEvent::type)
        .isEqualTo(ResilienceEvent.Type.CANCELLED);
  }

  @Test
  void interruptingSendAbortsTheExchangeAndKeepsTheInterruptFlag() throws Exception {
    raw(RawServer.HANG);
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicBoolean flagKept = new AtomicBoolean();
    Thread caller = new Thread(() -> {
      try {
        client.send(get(raw.uri("/")), BodyHandlers.ofString());
      } catch (Throwable t) {
        thrown.set(t);
        flagKept.set(Thread.currentThread().isInterrupted());
      }
    });
    caller.start();
    assertThat(raw.awaitHanging(1, 10)).isTrue();

    caller.interrupt();
    caller.join(10_000);

    assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
    assertThat(flagKept).isTrue();
    assertThat(raw.awaitAbandoned(1, 10)).isTrue();
    assertThat(raw.connections()).as("an interrupt is not retried").isEqualTo(1);
    assertThat(client.abandonedExchanges()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- async

  @Test
  void sendAsyncRetriesClosesTheSupersededBodyAndAnswers() throws Exception {
    server(JdkServer.endless(503), JdkServer.status(200, "later"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP.withBackoff(Backoff.NONE));

    HttpResponse<InputStream> r = client.sendAsync(get(server.uri("/")), BodyHandlers.ofInputStream())
        .get(10, TimeUnit.SECONDS);

    try (InputStream body = r.body()) {
      assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("later");
    }
    assertThat(server.awaitIdle(10)).isTrue();
  }

  @Test
  void sendAsyncFailsWithTheSameExceptionSendWouldThrow() throws Exception {
    server(JdkServer.status(503, "", "Retry-After", "60"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP,
        Resilience.HTTP.withDeadline(Duration.ofSeconds(5)).withBackoff(Backoff.NONE));

    Throwable thrown = catchThrowable(() -> client.sendAsync(get(server.uri("/")), BodyHandlers.ofString())
        .get(10, TimeUnit.SECONDS));

    assertThat(thrown).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(DeadlineExceededException.class);
  }

  @Test
  void anAsyncAttemptThatTimesOutIsAbortedAndRetried() throws Exception {
    raw(RawServer.HANG, RawServer.respond(200, "", "ok"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP
        .withAttemptTimeout(Duration.ofMillis(200)).withBackoff(Backoff.NONE));

    HttpResponse<String> r = client.sendAsync(get(raw.uri("/")), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);

    assertThat(r.body()).isEqualTo("ok");
    assertThat(raw.awaitAbandoned(1, 10)).isTrue();
  }

  // ---------------------------------------------------------------- hedging

  @Test
  void aHedgeAnswersForAHungAttemptWhoseExchangeIsThenAborted() throws Exception {
    raw(RawServer.HANG, RawServer.respond(200, "", "hedged"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP.withListener(events)
        .withHedge(dev.quell.Hedge.after(Duration.ofMillis(100))));

    assertThat(client.send(get(raw.uri("/")), BodyHandlers.ofString()).body()).isEqualTo("hedged");

    assertThat(raw.awaitAbandoned(1, 10)).as("the losing attempt's exchange was aborted").isTrue();
    assertThat(events.terminals()).hasSize(1);
  }

  @Test
  void aLosingHedgesResponseIsClosed() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    server(exchange -> {
      try {
        release.await(10, TimeUnit.SECONDS); // the first attempt answers only after the hedge has won
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      JdkServer.endless(200).send(exchange);
    }, JdkServer.status(200, "hedged"));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP
        .withHedge(dev.quell.Hedge.after(Duration.ofMillis(100))));

    HttpResponse<InputStream> r = client.sendAsync(get(server.uri("/")), BodyHandlers.ofInputStream()).get(10, TimeUnit.SECONDS);
    try (InputStream body = r.body()) {
      assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("hedged");
    }
    release.countDown();

    assertThat(server.awaitIdle(10)).as("the loser's endless body was closed or its exchange aborted").isTrue();
  }

  // ---------------------------------------------------------------- scopes, draining, lifecycle

  @Test
  void eachHostHasItsOwnBudgetSoAStormAgainstOneLeavesTheOtherRetrying() throws Exception {
    JdkServer failing = new JdkServer();
    try {
      for (int i = 0; i < 200; i++) {
        failing.then(JdkServer.status(503, ""));
      }
      server(JdkServer.status(503, ""), JdkServer.status(200, "ok"));
      ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP.withTimeSource(time));

      Throwable refused = null;
      for (int i = 0; i < 60 && refused == null; i++) {
        refused = catchThrowable(() -> client.send(get(failing.uri("/")), BodyHandlers.ofString()));
      }
      assertThat(refused).isInstanceOf(CallRejectedException.class);
      assertThat(((CallRejectedException) refused).reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);

      assertThat(client.send(get(server.uri("/")), BodyHandlers.ofString()).body())
          .as("the healthy host still retries").isEqualTo("ok");
      String failingHost = "127.0.0.1:" + failing.uri("/").getPort();
      String healthyHost = "127.0.0.1:" + server.uri("/").getPort();
      assertThat(client.budgetsByHost()).containsOnlyKeys(failingHost, healthyHost);
      assertThat(client.budgetsByHost().get(failingHost).utilization()).isGreaterThan(0.9);
      assertThat(client.budgetsByHost().get(healthyHost).utilization()).isLessThan(0.1);
      assertThat(client.budgetsByHost().get(healthyHost).name()).isEqualTo("http:" + healthyHost);
    } finally {
      failing.close();
    }
  }

  @Test
  void aScopeKeyOfYourOwnSharesOneBudgetAcrossHosts() throws Exception {
    server(JdkServer.status(200, ""));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy).withScopeKey(request -> "everything");

    client.send(get(server.uri("/")), BodyHandlers.ofString());

    assertThat(client.budgetsByHost()).containsOnlyKeys("everything");
  }

  @Test
  void aScopeKeyFunctionThatReturnsNullIsAClearError() throws Exception {
    server();
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy).withScopeKey(request -> null);

    assertThat(catchThrowable(() -> client.send(get(server.uri("/x")), BodyHandlers.ofString())))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("scope key function returned null")
        .hasMessageContaining("/x");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void whileDrainingNoRequestLeaves() throws Exception {
    server(JdkServer.status(200, ""));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, policy);
    Draining.begin(Duration.ofSeconds(5), time);

    Throwable thrown = catchThrowable(() -> client.send(get(server.uri("/")), BodyHandlers.ofString()));

    assertThat(thrown).isInstanceOf(CallRejectedException.class);
    assertThat(((CallRejectedException) thrown).reason()).isEqualTo(StopReason.DRAINING);
    assertThat(server.requests()).isEmpty();
  }

  @Test
  @EnabledForJreRange(max = JRE.JAVA_20)
  void onJava17CloseLeavesTheHttpClientWorking() throws Exception {
    server(JdkServer.status(200, "ok"));
    HttpClient own = HttpClient.newHttpClient();
    ResilientHttpClient client = ResilientHttpClient.of(own, policy);

    client.close();

    assertThat(own.send(get(server.uri("/")), BodyHandlers.ofString()).body())
        .as("HttpClient has no close() before JDK 21: nothing to forward").isEqualTo("ok");
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void onJava21CloseClosesTheHttpClient() throws Exception {
    HttpClient own = HttpClient.newHttpClient();
    ResilientHttpClient client = ResilientHttpClient.of(own, policy);

    client.close();

    assertThat(HttpClient.class.getMethod("isTerminated").invoke(own)).isEqualTo(true);
  }

  @Test
  void anAttemptFinishedByTheCallerIsNotBlockedOn() throws Exception {
    // the future the caller holds is independent of the core's: completing it by hand does not leak the response
    server(JdkServer.endless(200));
    ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP);
    CountDownLatch received = new CountDownLatch(1);
    CompletableFuture<HttpResponse<InputStream>> future = client.sendAsync(get(server.uri("/")), BodyHandlers.ofInputStream());
    future.complete(null);
    future.whenComplete((r, t) -> received.countDown());

    assertThat(received.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(server.awaitArrived(1, 10)).isTrue();
    // JDK 17 does not always abort an exchange whose future was cancelled (docs/http.md says so): the
    // response nobody can receive any more is closed, or the exchange the JDK kept going is counted
    boolean idle = server.awaitIdle(10);
    assertThat(idle || client.abandonedExchanges() > 0)
        .as("the response was closed (server idle: %s), or the abandoned exchange counted (%s)", idle,
            client.abandonedExchanges())
        .isTrue();
  }
}
