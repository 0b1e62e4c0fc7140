package dev.quell.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.test.EventRecorder;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the server sees is what the policy and its budget allow: OkHttp's own resends (after a 408, a
 * 503 with {@code Retry-After: 0}, a connection reset) run below the application interceptor, so they
 * are counted here at the server, on loopback. And a body that trickles in is cut off at the deadline.
 */
@Timeout(60)
class WireAttemptsTest {
  /** The request is read (the server counts it), then the connection is closed without an answer. */
  private static final MockResponse RESET =
      new MockResponse.Builder().onResponseStart(new SocketEffect.CloseSocket(true, false, false)).build();

  private final VirtualTime time = VirtualTime.create();
  private final EventRecorder events = new EventRecorder();
  private final List<OkHttpClient> clients = new ArrayList<>();
  private MockWebServer server;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    for (OkHttpClient c : clients) {
      assertThat(c.connectionPool().connectionCount()).as("no connection left in use")
          .isEqualTo(c.connectionPool().idleConnectionCount());
      c.dispatcher().executorService().shutdown();
      c.connectionPool().evictAll();
    }
    server.close();
  }

  /** The setup docs/http.md gives: the interceptor, and its network half. */
  private OkHttpClient client(QuellInterceptor quell) {
    return track(new OkHttpClient.Builder().addInterceptor(quell).addNetworkInterceptor(quell.networkInterceptor()).build());
  }

  private OkHttpClient track(OkHttpClient client) {
    clients.add(client);
    return client;
  }

  private Resilience threeAttempts() {
    return Resilience.HTTP.withName("wire").withAttempts(3).withTimeSource(time).withListener(events);
  }

  private void always(MockResponse response) {
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return response;
      }
    });
  }

  private Request get() {
    return new Request.Builder().url(server.url("/")).build();
  }

  @Test
  void a408ReachesTheServerOncePerAttempt() throws Exception {
    always(new MockResponse.Builder().code(408).body("slow down").build());
    OkHttpClient client = client(QuellOkHttp.interceptor(threeAttempts()));

    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(408);
    }

    assertThat(server.getRequestCount()).as("OkHttp resends a 408 by itself unless told not to").isEqualTo(3);
    assertThat(events.count(ResilienceEvent.Type.ATTEMPT_STARTED)).isEqualTo(3);
  }

  @Test
  void a503WithRetryAfterZeroReachesTheServerOncePerAttemptAndTheCallerSeesItsHeader() throws Exception {
    always(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").body("busy").build());
    OkHttpClient client = client(QuellOkHttp.interceptor(threeAttempts()));

    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.header("Retry-After")).as("given back after OkHttp was kept from reading it").isEqualTo("0");
      assertThat(r.priorResponse()).as("OkHttp followed nothing up").isNull();
      assertThat(r.body().string()).isEqualTo("busy");
    }

    assertThat(server.getRequestCount()).isEqualTo(3);
    assertThat(events.ofType(ResilienceEvent.Type.RETRYING)).allSatisfy(e -> assertThat(e.delay()).contains(Duration.ZERO));
  }

  @Test
  void withoutTheNetworkHalfOkHttpsOwnResendAfterA503IsChargedToTheBudget() throws Exception {
    always(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").body("busy").build());
    QuellInterceptor quell = QuellOkHttp.interceptor(threeAttempts());
    OkHttpClient client = track(new OkHttpClient.Builder().addInterceptor(quell).build());

    client.newCall(get()).execute().close();

    assertThat(server.getRequestCount()).as("OkHttp resent each of the 3 attempts once").isEqualTo(6);
    RetryBudget budget = quell.budgetsByHost().values().iterator().next();
    // Quell's 2 retries and OkHttp's 3 resends, each one token; the clock did not move, so nothing refilled
    assertThat(budget.tokens()).isCloseTo(budget.capacity() - 5, org.assertj.core.data.Offset.offset(1e-9));
  }

  @ParameterizedTest(name = "retryOnConnectionFailure({0})")
  @ValueSource(booleans = {true, false})
  void aResetConnectionReachesTheServerOncePerAttempt(boolean retryOnConnectionFailure) throws Exception {
    always(RESET);
    QuellInterceptor quell = QuellOkHttp.interceptor(threeAttempts());
    OkHttpClient client = track(new OkHttpClient.Builder().retryOnConnectionFailure(retryOnConnectionFailure)
        .addInterceptor(quell).addNetworkInterceptor(quell.networkInterceptor()).build());

    Throwable thrown = catchThrowable(() -> client.newCall(get()).execute());

    assertThat(thrown).isInstanceOf(IOException.class);
    assertThat(server.getRequestCount()).as("each of the 3 attempts, and nothing OkHttp added").isEqualTo(3);
  }

  /**
   * Many calls against a server that answers only 408s, 503s with {@code Retry-After: 0} and resets: what
   * reaches it stays within the bound docs/retry-budget.md gives the token bucket — every first attempt,
   * plus at most its capacity, plus {@code fraction} of a token per success and {@code minimumPerSecond}
   * per second of the storm.
   */
  @Test
  void aStormReachesTheServerNoMoreThanTheBudgetsBound() throws Exception {
    int calls = 600;
    double fraction = 0.1;
    double perSecond = 3;
    java.util.concurrent.atomic.AtomicInteger seen = new java.util.concurrent.atomic.AtomicInteger();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        switch (seen.getAndIncrement() % 3) {
          case 0:
            return new MockResponse.Builder().code(408).build();
          case 1:
            return new MockResponse.Builder().code(503).addHeader("Retry-After", "0").build();
          default:
            return RESET;
        }
      }
    });
    RetryBudget budget = RetryBudget.of(fraction, perSecond);
    QuellInterceptor quell = QuellOkHttp.interceptor(Resilience.HTTP.withName("storm").withAttempts(5)
        .withBackoff(Backoff.NONE).withBudget(budget).withListener(events));
    OkHttpClient client = client(quell);
    client.dispatcher().setMaxRequestsPerHost(16);

    ExecutorService callers = Executors.newFixedThreadPool(8);
    long started = System.nanoTime();
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      done.add(callers.submit(() -> {
        try (Response r = client.newCall(get()).execute()) {
          return r.code();
        } catch (IOException e) {
          return -1;
        }
      }));
    }
    for (Future<?> f : done) {
      f.get(30, TimeUnit.SECONDS);
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    callers.shutdown();
    assertThat(callers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

    long successes = 0; // the server never answers well
    double bound = calls + budget.capacity() + fraction * successes + perSecond * seconds;
    assertThat(server.getRequestCount()).as("server saw %s requests in %.1f s; bound %.0f; attempts %s", server.getRequestCount(), seconds, bound,
        events.count(ResilienceEvent.Type.ATTEMPT_STARTED))
        .isGreaterThanOrEqualTo(calls)
        .isLessThanOrEqualTo((int) Math.floor(bound));
    assertThat(events.terminals()).hasSize(calls);
  }

  /**
   * A body that trickles in — 20 bytes every 100 ms, 10 s in all — never lets a read wait long enough
   * for the read timeout, so only the deadline can end it: at 1.5 s, not 10.
   */
  @Test
  void aTricklingBodyIsCutOffAtTheDeadline() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).body("x".repeat(2_000))
        .throttleBody(20, 100, TimeUnit.MILLISECONDS).build());
    Duration deadline = Duration.ofMillis(1_500);
    OkHttpClient client = client(QuellOkHttp.interceptor(Resilience.HTTP.withName("trickle")
        .withDeadline(deadline).withAttemptTimeout(Duration.ofSeconds(1))));

    long started = System.nanoTime();
    int read = 0;
    Throwable thrown;
    try (Response r = client.newCall(get()).execute()) {
      thrown = catchThrowable(() -> r.body().source().readByteArray());
      read = (int) r.body().source().getBuffer().size();
    }
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    assertThat(thrown).isInstanceOf(SocketTimeoutException.class).hasMessageContaining("deadline");
    assertThat(read).as("the body was not read to its end").isLessThan(2_000);
    // generous: the point is 1.5 s against the 10 s the body would take, not a precise figure
    assertThat(took).as("took %s", took).isLessThan(deadline.plusSeconds(4));
  }

  @Test
  void aBodyReadInTimeIsNotTouched() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).body("x".repeat(200))
        .throttleBody(20, 10, TimeUnit.MILLISECONDS).build());
    OkHttpClient client = client(QuellOkHttp.interceptor(Resilience.HTTP.withName("in-time").withDeadline(Duration.ofSeconds(20))));

    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.body().string()).hasSize(200);
    }
  }
}
