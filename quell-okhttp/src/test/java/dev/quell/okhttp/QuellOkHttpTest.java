package dev.quell.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Criticality;
import dev.quell.DeadlineExceededException;
import dev.quell.Draining;
import dev.quell.DrainingForTests;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.ResilienceEvent;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.http.Repeatable;
import dev.quell.http.RetryMarker;
import dev.quell.test.EventRecorder;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The interceptor against OkHttp's MockWebServer on loopback. Backoff and Retry-After run on a virtual
 * clock; the tests of hung servers, timeouts and cancellation use short real timeouts and assert what
 * happened, never how long it took. After every test no connection is left in use: every response the
 * interceptor superseded was closed (the test closes the ones it receives).
 */
@Timeout(60)
class QuellOkHttpTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final VirtualTime time = VirtualTime.create();
  private final EventRecorder events = new EventRecorder();
  private final Resilience policy = Resilience.HTTP.withName("t").withTimeSource(time).withListener(events);
  private final List<OkHttpClient> clients = new ArrayList<>();

  private MockWebServer server;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    DrainingForTests.reset();
    for (OkHttpClient c : clients) {
      assertThat(c.connectionPool().connectionCount())
          .as("no connection left in use: every response was closed")
          .isEqualTo(c.connectionPool().idleConnectionCount());
      c.dispatcher().executorService().shutdown();
      c.connectionPool().evictAll();
    }
    server.close();
  }

  private OkHttpClient client(QuellInterceptor quell) {
    return client(quell, new OkHttpClient.Builder());
  }

  private OkHttpClient client(QuellInterceptor quell, OkHttpClient.Builder builder) {
    OkHttpClient c = builder.addInterceptor(quell).addNetworkInterceptor(quell.networkInterceptor()).build();
    clients.add(c);
    return c;
  }

  private static MockResponse status(int code, String body, String... headers) {
    MockResponse.Builder b = new MockResponse.Builder().code(code).body(body);
    for (int i = 0; i < headers.length; i += 2) {
      b.addHeader(headers[i], headers[i + 1]);
    }
    return b.build();
  }

  private Request get() {
    return new Request.Builder().url(server.url("/")).build();
  }

  private static String body(Response r) throws IOException {
    try (r) {
      return r.body().string();
    }
  }

  private List<RecordedRequest> requests(int n) throws InterruptedException {
    List<RecordedRequest> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(server.takeRequest(10, TimeUnit.SECONDS));
    }
    return all;
  }

  // ---------------------------------------------------------------- retries and superseded responses

  @Test
  void a503IsRetriedAfterTheInterceptorClosesIt() throws Exception {
    server.enqueue(status(503, "x".repeat(64 * 1024))); // a body OkHttp would have to read or discard
    server.enqueue(status(200, "fine"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.body().string()).isEqualTo("fine");
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).isEqualTo(2);
  }

  @Test
  void whenTheAttemptsRunOutTheLast503IsReturnedAndTheOthersClosed() throws Exception {
    for (int i = 0; i < 3; i++) {
      server.enqueue(status(503, "busy " + i));
    }
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    Response r = client.newCall(get()).execute();

    assertThat(r.code()).isEqualTo(503);
    assertThat(body(r)).isEqualTo("busy 2");
    assertThat(events.terminal().stopReason()).contains(StopReason.ATTEMPTS_EXHAUSTED);
  }

  @Test
  void aStreamingBodyReachesTheCallerUnread() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).body("streamed").throttleBody(2, 1, TimeUnit.MILLISECONDS).build());
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.body().source().readUtf8(4)).isEqualTo("stre");
    }
  }

  // ---------------------------------------------------------------- Retry-After

  @Test
  void retryAfterInSecondsIsWaited() throws Exception {
    server.enqueue(status(503, "", "Retry-After", "7"));
    server.enqueue(status(200, "ok"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    assertThat(body(client.newCall(get()).execute())).isEqualTo("ok");
    assertThat(time.elapsed()).isEqualTo(Duration.ofSeconds(7));
  }

  @ParameterizedTest
  @ValueSource(strings = {"Sun, 06 Nov 1994 08:49:40 GMT", "Sunday, 06-Nov-94 08:49:40 GMT", "Sun Nov  6 08:49:40 1994"})
  void retryAfterAsAnHttpDateIsParsedWhereOkHttpIgnoresIt(String retryAfter) throws Exception {
    server.enqueue(status(503, "", "Date", "Sun, 06 Nov 1994 08:49:37 GMT", "Retry-After", retryAfter));
    server.enqueue(status(200, "ok"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    assertThat(body(client.newCall(get()).execute())).isEqualTo("ok");
    assertThat(events.ofType(ResilienceEvent.Type.RETRYING).get(0).verdict())
        .contains(Verdict.throttled(Duration.ofSeconds(3)));
    assertThat(time.elapsed()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void a429IsThrottled() throws Exception {
    server.enqueue(status(429, "", "Retry-After", "2"));
    server.enqueue(status(200, "ok"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    assertThat(body(client.newCall(get()).execute())).isEqualTo("ok");
    assertThat(time.elapsed()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void aRetryAfterPastTheDeadlineEndsTheCallAtOnceAsATimeout() throws Exception {
    server.enqueue(status(503, "busy", "Retry-After", "120"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy.withDeadline(Duration.ofSeconds(5))));

    Throwable thrown = catchThrowable(() -> client.newCall(get()).execute());

    assertThat(thrown).isInstanceOf(SocketTimeoutException.class).hasCauseInstanceOf(DeadlineExceededException.class);
    assertThat(time.elapsed()).isZero();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- what may be repeated

  @Test
  void aPostIsNotRetriedWithoutAnIdempotencyKeyAndIsWithOne() throws Exception {
    server.enqueue(status(503, ""));
    server.enqueue(status(503, ""));
    server.enqueue(status(200, "created"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));
    RequestBody json = RequestBody.create("{}", JSON);

    assertThat(body(client.newCall(new Request.Builder().url(server.url("/")).post(json).build()).execute())).isEmpty();
    assertThat(server.getRequestCount()).isEqualTo(1);

    Request keyed = new Request.Builder().url(server.url("/")).post(json).header("Idempotency-Key", "k-1").build();
    assertThat(body(client.newCall(keyed).execute())).isEqualTo("created");
    assertThat(server.getRequestCount()).isEqualTo(3);
  }

  @Test
  void aTagDecidesWhateverTheMethod() throws Exception {
    server.enqueue(status(503, ""));
    server.enqueue(status(200, ""));
    server.enqueue(status(503, ""));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    Request patch = new Request.Builder().url(server.url("/")).patch(RequestBody.create("{}", JSON))
        .tag(Repeatable.class, Repeatable.YES).build();
    assertThat(client.newCall(patch).execute().code()).isEqualTo(200);
    Request get = new Request.Builder().url(server.url("/")).tag(Repeatable.class, Repeatable.NO).build();
    try (Response r = client.newCall(get).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(server.getRequestCount()).isEqualTo(3);
  }

  /** A body that can be written once, as an upload streamed from somewhere that cannot rewind. */
  private static RequestBody oneShot() {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return JSON;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        sink.writeUtf8("{}");
      }

      @Override
      public boolean isOneShot() {
        return true;
      }
    };
  }

  @Test
  void aOneShotBodyIsNotRetriedEvenWithAnIdempotencyKey() throws Exception {
    server.enqueue(status(503, ""));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    Request keyed = new Request.Builder().url(server.url("/")).put(oneShot()).header("Idempotency-Key", "k-2").build();
    try (Response r = client.newCall(keyed).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void aOneShotBodyThatFailsSaysWhyItWasNotRetried() throws Exception {
    server.enqueue(new MockResponse.Builder().onRequestStart(new SocketEffect.CloseSocket(true, false, false)).build());
    OkHttpClient client = client(QuellOkHttp.interceptor(policy),
        new OkHttpClient.Builder().retryOnConnectionFailure(false));

    Throwable thrown = catchThrowable(() -> client.newCall(
        new Request.Builder().url(server.url("/")).put(oneShot()).build()).execute());

    assertThat(thrown).isInstanceOf(IOException.class);
    assertThat(thrown.getSuppressed()).singleElement().satisfies(note -> assertThat(note)
        .hasMessageContaining("Quell did not retry this request: its body is one-shot (RequestBody.isOneShot() is true)"));
  }

  @Test
  void aDuplexBodyIsNeverRetriedAndSaysWhy() throws Exception {
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));
    RequestBody duplex = new RequestBody() {
      @Override
      public MediaType contentType() {
        return JSON;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        sink.writeUtf8("{}");
      }

      @Override
      public boolean isDuplex() {
        return true;
      }
    };

    // OkHttp refuses duplex bodies over HTTP/1.1 with an IOException: a failure Quell would otherwise retry
    Throwable thrown = catchThrowable(() -> client.newCall(new Request.Builder().url(server.url("/")).put(duplex).build()).execute());

    assertThat(thrown).isInstanceOf(IOException.class);
    assertThat(thrown.getSuppressed()).singleElement()
        .satisfies(note -> assertThat(note).hasMessageContaining("its body is duplex (RequestBody.isDuplex() is true)"));
    assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).isEqualTo(1);
  }

  // ---------------------------------------------------------------- headers

  @Test
  void eachAttemptCarriesItsOwnDeadlineTheMarkerAndTheAmbientCriticality() throws Exception {
    server.enqueue(status(503, ""));
    server.enqueue(status(200, ""));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy.withAttemptTimeout(Duration.ofSeconds(2))));

    try (ResilienceContext.Scope scope = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE_PLUS).open()) {
      client.newCall(get()).execute().close();
    }

    List<RecordedRequest> seen = requests(2);
    assertThat(seen).extracting(r -> r.getHeaders().get(ResilienceContext.DEADLINE_HEADER)).containsExactly("2000", "2000");
    assertThat(seen).extracting(r -> r.getHeaders().get(RetryMarker.HEADER)).containsExactly("1/3", "2/3");
    assertThat(seen).extracting(r -> r.getHeaders().get(ResilienceContext.CRITICALITY_HEADER))
        .containsExactly("SHEDDABLE_PLUS", "SHEDDABLE_PLUS");
  }

  @Test
  void aCallersTighterDeadlineHeaderIsKept() throws Exception {
    server.enqueue(status(200, ""));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));

    client.newCall(new Request.Builder().url(server.url("/")).header("X-Deadline-Ms", "250").build()).execute().close();

    assertThat(requests(1).get(0).getHeaders().values(ResilienceContext.DEADLINE_HEADER)).containsExactly("250");
  }

  // ---------------------------------------------------------------- faults, OkHttp's timeouts and cancellation

  @Test
  void withRetryOnConnectionFailureOffADroppedConnectionIsRetriedByQuell() throws Exception {
    server.enqueue(new MockResponse.Builder().onRequestStart(new SocketEffect.CloseSocket(true, false, false)).build());
    server.enqueue(status(200, "ok"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy), new OkHttpClient.Builder().retryOnConnectionFailure(false));

    assertThat(body(client.newCall(get()).execute())).isEqualTo("ok");
    assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).as("Quell retried").isEqualTo(2);
    assertThat(events.ofType(ResilienceEvent.Type.RETRYING).get(0).verdict()).contains(Verdict.TRANSIENT);
  }

  /** The first call's connection goes back to the pool, then the server closes it: the next call finds it dead. */
  private int attemptsOfACallOnAStaleConnection(boolean retryOnConnectionFailure) throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).body("first")
        .onResponseEnd(SocketEffect.ShutdownConnection.INSTANCE).build());
    server.enqueue(status(200, "second"));
    OkHttpClient client = client(QuellOkHttp.interceptor(policy),
        new OkHttpClient.Builder().retryOnConnectionFailure(retryOnConnectionFailure));
    assertThat(body(client.newCall(get()).execute())).isEqualTo("first");
    int before = events.count(ResilienceEvent.Type.ATTEMPT_STARTED);

    assertThat(body(client.newCall(get()).execute())).isEqualTo("second");
    return events.count(ResilienceEvent.Type.ATTEMPT_STARTED) - before;
  }

  @ParameterizedTest(name = "retryOnConnectionFailure({0})")
  @ValueSource(booleans = {true, false})
  void whateverRetryOnConnectionFailureSaysQuellRetriesTheStaleConnectionItself(boolean retryOnConnectionFailure)
      throws Exception {
    assertThat(attemptsOfACallOnAStaleConnection(retryOnConnectionFailure))
        .as("OkHttp's own resend is off under Quell: the retry is Quell's, and the budget funds it").isEqualTo(2);
  }

  @Test
  void aHungServerIsGivenUpOnAtEachAttemptTimeout() throws Exception {
    server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build());
    server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build());
    OkHttpClient client = client(QuellOkHttp.interceptor(Resilience.HTTP.withAttempts(2)
        .withAttemptTimeout(Duration.ofMillis(200)).withBackoff(Backoff.NONE).withListener(events)));

    Throwable thrown = catchThrowable(() -> client.newCall(get()).execute());

    assertThat(thrown).isInstanceOf(SocketTimeoutException.class);
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(events.terminals()).hasSize(1);
  }

  @Test
  void okHttpsCallTimeoutBecomesTheCallsDeadlineSoNoRetryWaitsPastIt() throws Exception {
    server.enqueue(status(503, "", "Retry-After", "30"));
    OkHttpClient client = client(QuellOkHttp.interceptor(Resilience.HTTP.withListener(events)),
        new OkHttpClient.Builder().callTimeout(Duration.ofSeconds(2)));

    Throwable thrown = catchThrowable(() -> client.newCall(get()).execute());

    assertThat(thrown).as("Quell gave up at once: the 30 s wait would cross the 2 s call timeout")
        .isInstanceOf(SocketTimeoutException.class).hasCauseInstanceOf(DeadlineExceededException.class);
    assertThat(events.terminal().stopReason()).contains(StopReason.DEADLINE_EXCEEDED);
  }

  @Test
  void whenOkHttpsCallTimeoutFiresMidAttemptTheCallEndsWithItsTimeout() throws Exception {
    server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build());
    OkHttpClient client = client(QuellOkHttp.interceptor(Resilience.HTTP.withListener(events)),
        new OkHttpClient.Builder().callTimeout(Duration.ofMillis(300)));

    Throwable thrown = catchThrowable(() -> client.newCall(get()).execute());

    assertThat(thrown).isInstanceOf(InterruptedIOException.class);
    assertThat(events.terminals()).hasSize(1);
    assertThat(server.getRequestCount()).as("no retry after the call's time is up").isEqualTo(1);
  }

  @Test
  void cancellingMidAttemptAbortsItRetriesNothingAndLeavesNoInterrupt() throws Exception {
    server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build());
    OkHttpClient client = client(QuellOkHttp.interceptor(Resilience.HTTP.withListener(events)));
    Call call = client.newCall(get());
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    AtomicBoolean interruptLeft = new AtomicBoolean(true);
    Thread caller = new Thread(() -> {
      try {
        call.execute().close();
        thrown.complete(null);
      } catch (Throwable t) {
        interruptLeft.set(Thread.currentThread().isInterrupted());
        thrown.complete(t);
      }
    });
    caller.start();
    assertThat(server.takeRequest(10, TimeUnit.SECONDS)).isNotNull();

    call.cancel();

    assertThat(thrown.get(10, TimeUnit.SECONDS)).as("what OkHttp threw as it cancelled, unchanged").isInstanceOf(IOException.class);
    assertThat(interruptLeft).isFalse();
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(events.terminal().stopReason()).contains(StopReason.CANCELLED);
  }

  @Test
  void cancellingDuringABackoffWaitWakesTheCallAtOnce() throws Exception {
    server.enqueue(status(503, ""));
    CountDownLatch waiting = new CountDownLatch(1);
    Resilience slowBackoff = Resilience.HTTP.withBackoff(Backoff.constant(Duration.ofMinutes(10)))
        .withDeadline(Duration.ofHours(1)).withListener(events)
        .withListener(e -> {
          if (e.type() == ResilienceEvent.Type.RETRYING) {
            waiting.countDown();
          }
        });
    OkHttpClient client = client(QuellOkHttp.interceptor(slowBackoff));
    Call call = client.newCall(get());
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    AtomicBoolean interruptLeft = new AtomicBoolean(true);
    Thread caller = new Thread(() -> {
      try {
        call.execute().close();
        thrown.complete(null);
      } catch (Throwable t) {
        interruptLeft.set(Thread.currentThread().isInterrupted());
        thrown.complete(t);
      }
    });
    caller.start();
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();

    call.cancel();

    assertThat(thrown.get(10, TimeUnit.SECONDS)).as("ended long before the 10 minute backoff")
        .isInstanceOf(IOException.class);
    assertThat(interruptLeft).as("the interrupt that woke the wait was taken back").isFalse();
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(events.terminal().stopReason()).contains(StopReason.CANCELLED);
  }

  @Test
  void enqueuedCallsRetryOnTheDispatcher() throws Exception {
    server.enqueue(status(503, ""));
    server.enqueue(status(200, "async"));
    OkHttpClient client = client(QuellOkHttp.interceptor(Resilience.HTTP.withBackoff(Backoff.NONE)));
    CompletableFuture<String> result = new CompletableFuture<>();

    client.newCall(get()).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        result.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call call, Response response) throws IOException {
        result.complete(body(response));
      }
    });

    assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("async");
  }

  @Test
  void aRefusalArrivesAsAnIOExceptionCausedByIt() throws Exception {
    OkHttpClient client = client(QuellOkHttp.interceptor(policy));
    Draining.begin(Duration.ofSeconds(5), time);

    Throwable thrown = catchThrowable(() -> client.newCall(get()).execute());

    assertThat(thrown).isInstanceOf(IOException.class).hasCauseInstanceOf(CallRejectedException.class);
    assertThat(((CallRejectedException) thrown.getCause()).reason()).isEqualTo(StopReason.DRAINING);
    assertThat(server.getRequestCount()).isZero();
  }

  // ---------------------------------------------------------------- scope

  @Test
  void eachHostHasItsOwnBudget() throws Exception {
    try (MockWebServer other = new MockWebServer()) {
      other.start();
      server.enqueue(status(200, ""));
      other.enqueue(status(200, ""));
      QuellInterceptor quell = QuellOkHttp.interceptor(policy);
      OkHttpClient client = client(quell);

      client.newCall(get()).execute().close();
      client.newCall(new Request.Builder().url(other.url("/")).build()).execute().close();

      String a = server.getHostName() + ":" + server.getPort();
      String b = other.getHostName() + ":" + other.getPort();
      assertThat(quell.budgetsByHost()).containsOnlyKeys(a.toLowerCase(java.util.Locale.ROOT), b.toLowerCase(java.util.Locale.ROOT));
      assertThat(quell.budgetsByHost().get(a.toLowerCase(java.util.Locale.ROOT))).isNotSameAs(quell.budgetsByHost().get(b.toLowerCase(java.util.Locale.ROOT)));
    }
  }

  @Test
  void aPostsSuccessFundsTheHostsBudget() throws Exception {
    server.enqueue(status(200, ""));
    QuellInterceptor quell = QuellOkHttp.interceptor(policy);
    OkHttpClient client = client(quell);
    String host = (server.getHostName() + ":" + server.getPort()).toLowerCase(java.util.Locale.ROOT);
    quell.policyFor(host).budget().trySpend();
    double before = quell.policyFor(host).budget().tokens();

    client.newCall(new Request.Builder().url(server.url("/")).post(RequestBody.create("{}", JSON)).build()).execute().close();

    assertThat(quell.policyFor(host).budget().tokens()).isCloseTo(before + 0.1, org.assertj.core.api.Assertions.within(1e-9));
  }

  @Test
  void aHedgingPolicyIsRefusedWhenTheInterceptorIsMade() {
    Throwable thrown = catchThrowable(() -> QuellOkHttp.interceptor(policy.withHedge(dev.quell.Hedge.after(Duration.ofMillis(50)))));

    assertThat(thrown).isInstanceOf(dev.quell.ResilienceConfigurationException.class)
        .hasMessageContaining("in policy 't'").hasMessageContaining("withoutHedge()");
  }

  @Test
  void aScopeKeyFunctionThatReturnsNullIsAClearError() {
    OkHttpClient client = client(QuellOkHttp.interceptor(policy).withScopeKey(r -> null));

    assertThat(catchThrowable(() -> client.newCall(get()).execute()))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("scope key function returned null");
    assertThat(server.getRequestCount()).isZero();
  }
}
