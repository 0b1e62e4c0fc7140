package dev.quell.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.CallRejectedException;
import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Circuit breakers per host through the interceptor, against two MockWebServers on loopback: a host that
 * keeps failing opens its own breaker, the other host is not refused, and requests that are retried and
 * requests that are not share the host's one breaker. Backoff, the guarded pause and the breaker's clock
 * are virtual.
 */
@Timeout(60)
class BreakersByHostTest {
  private static final MediaType JSON = MediaType.get("application/json");
  /** Opens once four attempts in the window failed, half of them or more; breaks for 5 s; no ramp. */
  private static final CircuitBreaker.Config TRIPS_AFTER_FOUR = CircuitBreaker.Config.DEFAULT
      .withMinimumCalls(4).withFailureRate(0.5).withBreakDuration(Duration.ofSeconds(5)).withRamp(Duration.ZERO);

  private final VirtualTime time = VirtualTime.create();
  private final Resilience policy = Resilience.HTTP.withName("t").withTimeSource(time).withBreaker(TRIPS_AFTER_FOUR);
  private final List<OkHttpClient> clients = new ArrayList<>();
  private MockWebServer failing;
  private MockWebServer healthy;

  @BeforeEach
  void start() throws IOException {
    failing = new MockWebServer();
    failing.start();
    for (int i = 0; i < 20; i++) {
      failing.enqueue(new MockResponse.Builder().code(503).body("busy").build());
    }
    healthy = new MockWebServer();
    healthy.start();
    for (int i = 0; i < 5; i++) {
      healthy.enqueue(new MockResponse.Builder().code(200).body("ok").build());
    }
  }

  @AfterEach
  void stop() {
    for (OkHttpClient c : clients) {
      assertThat(c.connectionPool().connectionCount()).as("no connection left in use")
          .isEqualTo(c.connectionPool().idleConnectionCount());
      c.dispatcher().executorService().shutdown();
      c.connectionPool().evictAll();
    }
    failing.close();
    healthy.close();
  }

  private OkHttpClient client(QuellInterceptor quell) {
    OkHttpClient c = new OkHttpClient.Builder().addInterceptor(quell).build();
    clients.add(c);
    return c;
  }

  private static String host(MockWebServer server) {
    return (server.getHostName() + ":" + server.getPort()).toLowerCase(Locale.ROOT);
  }

  private static Request get(MockWebServer server) {
    return new Request.Builder().url(server.url("/")).build();
  }

  private static Request post(MockWebServer server) {
    return new Request.Builder().url(server.url("/orders")).post(RequestBody.create("{}", JSON)).build();
  }

  private static int status(OkHttpClient client, Request request) throws IOException {
    try (Response r = client.newCall(request).execute()) {
      return r.code();
    }
  }

  private static void assertRefusedByTheBreaker(Throwable thrown) {
    assertThat(thrown).isInstanceOf(IOException.class).hasCauseInstanceOf(CallRejectedException.class);
    CallRejectedException refused = (CallRejectedException) thrown.getCause();
    assertThat(refused.reason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    assertThat(refused.retryAfter()).as("the time left until the next probe")
        .get().satisfies(d -> assertThat(d).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5)));
  }

  @Test
  void aHostThatKeepsFailingOpensItsOwnBreakerAndAnotherHostIsUnaffected() throws Exception {
    QuellInterceptor quell = QuellOkHttp.interceptor(policy);
    OkHttpClient client = client(quell);

    assertThat(status(client, get(failing))).as("three 503s: the window holds fewer than four").isEqualTo(503);
    assertRefusedByTheBreaker(catchThrowable(() -> status(client, get(failing))));
    assertThat(failing.getRequestCount()).as("the fourth failure opened it; its retry never left").isEqualTo(4);

    Duration before = time.elapsed();
    Throwable refused = catchThrowable(() -> status(client, get(failing)));
    assertRefusedByTheBreaker(refused);
    assertThat(time.elapsed().minus(before)).as("the guarded pause, as for any refusal").isEqualTo(Duration.ofMillis(100));
    assertThat(failing.getRequestCount()).as("nothing reached the failing host").isEqualTo(4);

    assertThat(status(client, get(healthy))).as("the other host still answers").isEqualTo(200);
    assertThat(quell.breakersByHost()).containsOnlyKeys(host(failing), host(healthy));
    CircuitBreaker open = quell.breakersByHost().get(host(failing));
    CircuitBreaker closed = quell.breakersByHost().get(host(healthy));
    assertThat(open.state()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(open.name()).isEqualTo("t:" + host(failing));
    assertThat(closed.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(closed).isNotSameAs(open);
  }

  @Test
  void requestsThatAreNotRetriedOpenTheBreakerThatRetriedOnesAreThenRefusedBy() throws Exception {
    QuellInterceptor quell = QuellOkHttp.interceptor(policy);
    OkHttpClient client = client(quell);

    for (int i = 0; i < 4; i++) {
      assertThat(status(client, post(failing))).as("a POST gets one attempt").isEqualTo(503);
    }
    assertThat(failing.getRequestCount()).isEqualTo(4);

    assertRefusedByTheBreaker(catchThrowable(() -> status(client, get(failing))));

    assertThat(failing.getRequestCount()).as("the GET never left").isEqualTo(4);
    assertThat(quell.breakersByHost()).as("one breaker for the host, not one per kind of request").hasSize(1);
    CircuitBreaker breaker = quell.breakersByHost().get(host(failing));
    assertThat(breaker.metrics().failedCalls()).isEqualTo(4);
    assertThat(quell.policyFor(host(failing)).once().breaker()).contains(breaker);
  }

  @Test
  void retriedRequestsOpenTheBreakerThatRequestsThatAreNotRetriedAreThenRefusedBy() throws Exception {
    QuellInterceptor quell = QuellOkHttp.interceptor(policy);
    OkHttpClient client = client(quell);
    status(client, get(failing));
    catchThrowable(() -> status(client, get(failing)));
    int sent = failing.getRequestCount();

    assertRefusedByTheBreaker(catchThrowable(() -> status(client, post(failing))));

    assertThat(failing.getRequestCount()).as("the POST never left").isEqualTo(sent);
    assertThat(quell.breakersByHost()).hasSize(1);
  }

  @Test
  void aPostSharesTheHostsBudgetAndItsSuccessCountsInTheSameWindow() throws Exception {
    QuellInterceptor quell = QuellOkHttp.interceptor(policy);
    OkHttpClient client = client(quell);

    status(client, post(healthy));
    status(client, get(healthy));

    Resilience host = quell.policyFor(host(healthy));
    assertThat(host.once().budget()).isSameAs(host.budget()).isSameAs(quell.budgetsByHost().get(host(healthy)));
    assertThat(quell.breakersByHost().get(host(healthy)).metrics().calls()).isEqualTo(2);
  }

  @Test
  void eachHostLearnsItsOwnAdaptiveLimitAndWithoutABreakerThereAreNoBreakers() throws Exception {
    QuellInterceptor quell = QuellOkHttp.interceptor(Resilience.HTTP.withTimeSource(time).withLimiter(Limiter.adaptive()));
    OkHttpClient client = client(quell);

    status(client, get(failing));
    status(client, get(healthy));

    assertThat(quell.adaptiveLimitsByHost()).containsOnlyKeys(host(failing), host(healthy));
    assertThat(quell.adaptiveLimitsByHost().get(host(failing))).isNotSameAs(quell.adaptiveLimitsByHost().get(host(healthy)));
    assertThat(quell.breakersByHost()).isEmpty();
  }
}
