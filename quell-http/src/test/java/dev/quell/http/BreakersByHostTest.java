package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.CallRejectedException;
import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.StopReason;
import dev.quell.test.EventRecorder;
import dev.quell.test.VirtualTime;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Circuit breakers per host, against the JDK's HttpServer on loopback: a host that keeps failing opens
 * its own breaker, another host is not refused, and every request to a host — repeatable or not — is
 * judged by that one breaker. Backoff, the guarded pause and the breaker's clock are virtual.
 */
@Timeout(60)
class BreakersByHostTest {
  /** Opens once four attempts in the window failed, half of them or more; breaks for 5 s; no ramp. */
  private static final CircuitBreaker.Config TRIPS_AFTER_FOUR = CircuitBreaker.Config.DEFAULT
      .withMinimumCalls(4).withFailureRate(0.5).withBreakDuration(Duration.ofSeconds(5)).withRamp(Duration.ZERO);

  private final VirtualTime time = VirtualTime.create();
  private final EventRecorder events = new EventRecorder();
  private final Resilience policy = Resilience.HTTP.withName("t").withTimeSource(time).withListener(events)
      .withBreaker(TRIPS_AFTER_FOUR);

  private JdkServer failing;
  private JdkServer healthy;

  @AfterEach
  void stop() throws Exception {
    if (failing != null) {
      failing.close();
    }
    if (healthy != null) {
      healthy.close();
    }
  }

  private JdkServer alwaysFailing() throws Exception {
    failing = new JdkServer().otherwise(() -> JdkServer.status(503, "busy"));
    return failing;
  }

  private static String host(JdkServer server) {
    return "127.0.0.1:" + server.uri("/").getPort();
  }

  private static HttpRequest get(URI uri) {
    return HttpRequest.newBuilder(uri).build();
  }

  private static HttpRequest post(URI uri) {
    return HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
  }

  private static void assertRefusedByTheBreaker(Throwable thrown) {
    assertThat(thrown).isInstanceOf(CallRejectedException.class);
    CallRejectedException refused = (CallRejectedException) thrown;
    assertThat(refused.reason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    assertThat(refused.retryAfter()).as("the time left until the next probe")
        .get().satisfies(d -> assertThat(d).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5)));
  }

  @Test
  void aHostThatKeepsFailingOpensItsOwnBreakerAndAnotherHostIsUnaffected() throws Exception {
    alwaysFailing();
    healthy = new JdkServer();
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP, policy);

    HttpResponse<String> first = client.send(get(failing.uri("/")), BodyHandlers.ofString());
    assertThat(first.statusCode()).as("three 503s: the window holds fewer than four").isEqualTo(503);
    Throwable opening = catchThrowable(() -> client.send(get(failing.uri("/")), BodyHandlers.ofString()));
    assertThat(failing.requests()).as("the fourth failure opened it; its retry never left").hasSize(4);
    assertRefusedByTheBreaker(opening);

    Duration before = time.elapsed();
    Throwable refused = catchThrowable(() -> client.send(get(failing.uri("/")), BodyHandlers.ofString()));
    assertRefusedByTheBreaker(refused);
    assertThat(time.elapsed().minus(before)).as("the guarded pause, as for any refusal").isEqualTo(Duration.ofMillis(100));
    assertThat(failing.requests()).as("nothing reached the failing host").hasSize(4);
    assertThat(events.terminals()).last().satisfies(e -> assertThat(e.type()).isEqualTo(ResilienceEvent.Type.REJECTED_BY_BREAKER));

    assertThat(client.send(get(healthy.uri("/")), BodyHandlers.ofString()).body()).as("the other host still answers")
        .isEqualTo("ok");
    assertThat(client.breakersByHost()).containsOnlyKeys(host(failing), host(healthy));
    CircuitBreaker open = client.breakersByHost().get(host(failing));
    CircuitBreaker closed = client.breakersByHost().get(host(healthy));
    assertThat(open.state()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(open.name()).isEqualTo("t:" + host(failing));
    assertThat(closed.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(closed.metrics().calls()).isEqualTo(1);
    assertThat(closed).isNotSameAs(open);
  }

  @Test
  void sendAsyncToAnOpenHostFailsWithTheRefusalAndSendsNothing() throws Exception {
    alwaysFailing();
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP, policy);
    client.breakersByHost(); // nothing yet: the host's policy is made by its first request
    client.send(get(failing.uri("/")), BodyHandlers.ofString());
    catchThrowable(() -> client.send(get(failing.uri("/")), BodyHandlers.ofString()));
    assertThat(client.breakersByHost().get(host(failing)).state()).isEqualTo(CircuitBreaker.State.OPEN);
    int sent = failing.requests().size();

    Duration before = time.elapsed();
    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(failing.uri("/")), BodyHandlers.ofString());
    assertThat(future).as("refused, then the guarded pause on the policy's clock").isNotDone();
    time.runUntilIdle(Duration.ofSeconds(1));

    assertThat(time.elapsed().minus(before)).isEqualTo(Duration.ofMillis(100));
    Throwable thrown = catchThrowable(() -> future.get(10, TimeUnit.SECONDS));
    assertThat(thrown).isInstanceOf(ExecutionException.class);
    assertRefusedByTheBreaker(thrown.getCause());
    assertThat(failing.requests()).hasSize(sent);
  }

  @Test
  void requestsThatMayNotBeRepeatedOpenTheBreakerThatRepeatableOnesAreThenRefusedBy() throws Exception {
    alwaysFailing();
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP, policy);

    for (int i = 0; i < 4; i++) {
      assertThat(client.send(post(failing.uri("/orders")), BodyHandlers.ofString()).statusCode())
          .as("a POST gets one attempt").isEqualTo(503);
    }
    assertThat(failing.requests()).hasSize(4);

    Throwable refused = catchThrowable(() -> client.send(get(failing.uri("/")), BodyHandlers.ofString()));

    assertRefusedByTheBreaker(refused);
    assertThat(failing.requests()).as("the GET never left").hasSize(4);
    assertThat(client.breakersByHost()).as("one breaker for the host, not one per kind of request").hasSize(1);
    CircuitBreaker breaker = client.breakersByHost().get(host(failing));
    assertThat(breaker.metrics().failedCalls()).isEqualTo(4);
    assertThat(client.policyFor(host(failing)).once().breaker()).contains(breaker);
  }

  @Test
  void repeatableRequestsOpenTheBreakerThatRequestsThatMayNotBeRepeatedAreThenRefusedBy() throws Exception {
    alwaysFailing();
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP, policy);
    client.send(get(failing.uri("/")), BodyHandlers.ofString());
    catchThrowable(() -> client.send(get(failing.uri("/")), BodyHandlers.ofString()));
    int sent = failing.requests().size();

    Throwable refused = catchThrowable(() -> client.send(post(failing.uri("/orders")), BodyHandlers.ofString()));

    assertRefusedByTheBreaker(refused);
    assertThat(failing.requests()).as("the POST never left").hasSize(sent);
    assertThat(client.breakersByHost()).hasSize(1);
  }

  @Test
  void aRequestThatMayNotBeRepeatedSharesTheHostsBudgetAndItsSuccessesCountInTheSameWindow() throws Exception {
    healthy = new JdkServer();
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP, policy);

    client.send(post(healthy.uri("/orders")), BodyHandlers.ofString());
    client.send(get(healthy.uri("/")), BodyHandlers.ofString());

    Resilience host = client.policyFor(host(healthy));
    assertThat(host.once().budget()).isSameAs(host.budget()).isSameAs(client.budgetsByHost().get(host(healthy)));
    assertThat(client.breakersByHost().get(host(healthy)).metrics().calls()).isEqualTo(2);
  }

  @Test
  void aSharedLiveBreakerIsTheOneBreakerOfEveryHost() throws Exception {
    alwaysFailing();
    healthy = new JdkServer();
    CircuitBreaker shared = CircuitBreaker.of("everything", TRIPS_AFTER_FOUR, time);
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP,
        Resilience.HTTP.withTimeSource(time).withBreaker(shared));

    client.send(get(failing.uri("/")), BodyHandlers.ofString());
    client.send(get(healthy.uri("/")), BodyHandlers.ofString());

    assertThat(client.breakersByHost()).containsOnlyKeys(host(failing), host(healthy));
    assertThat(client.breakersByHost().values()).containsOnly(shared);
  }

  @Test
  void withoutABreakerThereAreNoBreakersByHost() throws Exception {
    healthy = new JdkServer();
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP, Resilience.HTTP.withTimeSource(time));

    client.send(get(healthy.uri("/")), BodyHandlers.ofString());

    assertThat(client.breakersByHost()).isEmpty();
    assertThat(client.budgetsByHost()).containsOnlyKeys(host(healthy));
  }

  @Test
  void eachHostLearnsItsOwnAdaptiveLimit() throws Exception {
    alwaysFailing();
    healthy = new JdkServer();
    ResilientHttpClient client = ResilientHttpClient.of(ResilientHttpClientTest.HTTP,
        Resilience.HTTP.withTimeSource(time).withLimiter(Limiter.adaptive()));

    client.send(get(failing.uri("/")), BodyHandlers.ofString());
    client.send(get(healthy.uri("/")), BodyHandlers.ofString());

    assertThat(client.adaptiveLimitsByHost()).containsOnlyKeys(host(failing), host(healthy));
    assertThat(client.adaptiveLimitsByHost().get(host(failing))).isNotSameAs(client.adaptiveLimitsByHost().get(host(healthy)));
  }
}
