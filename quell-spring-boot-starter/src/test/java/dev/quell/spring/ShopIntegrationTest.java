package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.quell.CircuitBreaker;
import dev.quell.Resilience;
import dev.quell.spring.Downstream.Answer;
import dev.quell.spring.shop.ShopApplication;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The shop, a real Spring Boot web application on a random loopback port, calling real dependencies
 * (two JDK HTTP servers on loopback) through RestClient and WebClient; read from outside over HTTP like
 * any client would: its answers, the actuator endpoint, health and a Prometheus scrape.
 */
@SpringBootTest(classes = ShopApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "server.address=127.0.0.1",
    "spring.http.clients.imperative.factory=jdk",
    "management.endpoints.web.exposure.include=quell,quellevents,prometheus,health",
    "management.endpoint.health.show-details=always",
    "management.endpoint.health.probes.enabled=true",
    "management.health.quell.enabled=true",
    "quell.defaults.backoff.base=10ms",
    "quell.policies.inventory.attempts=3",
    "quell.policies.fragile.attempts=3",
    "quell.policies.fragile.budget.fraction=0.1",
    "quell.policies.fragile.budget.minimum-per-second=0",
    "quell.policies.breaking.attempts=1",
    "quell.policies.breaking.breaker.consecutive-failures=1",
    "quell.policies.breaking.breaker.break-duration=1h",
    "quell.policies.breaking.breaker.max-break-duration=1h",
    "quell.policies.switchable.attempts=2",
    "quell.policies.switchable.breaker.enabled=true"})
class ShopIntegrationTest {
  static final Downstream INVENTORY = Downstream.start();
  static final Downstream OTHER = Downstream.start();
  static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  @DynamicPropertySource
  static void inventory(DynamicPropertyRegistry registry) {
    registry.add("inventory.url", INVENTORY::url);
  }

  @AfterAll
  static void stopDependencies() {
    INVENTORY.close();
    OTHER.close();
  }

  @LocalServerPort
  int port;

  @Autowired
  QuellPolicies policies;

  HttpResponse<String> get(String pathAndQuery, String... headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
        .timeout(Duration.ofSeconds(30));
    if (headers.length > 0) {
      request.headers(headers);
    }
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  static String proxy(String kind, Downstream to, String path, String policy) {
    return "/" + kind + "?policy=" + policy + "&url=" + URLEncoder.encode(to.url() + path, StandardCharsets.UTF_8);
  }

  @Test
  void aRestClientRetriesA503AndEachAttemptCarriesItsOwnHeaders() throws Exception {
    INVENTORY.script("/stock/sku-1", Answer.status(503), Answer.ok("42 in stock"));

    HttpResponse<String> response = get("/stock/sku-1");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("42 in stock");
    List<Downstream.Seen> attempts = INVENTORY.seen("/stock/sku-1");
    assertThat(attempts).extracting(s -> s.header("X-Quell-Attempt")).containsExactly("1/3", "2/3");
    assertThat(attempts).allSatisfy(s -> assertThat(Long.parseLong(s.header("X-Deadline-Ms"))).isBetween(1L, 10_000L));
  }

  @Test
  void aWebClientRetriesA503Too() throws Exception {
    INVENTORY.script("/stock/sku-2", Answer.status(503), Answer.status(502), Answer.ok("7 in stock"));

    HttpResponse<String> response = get("/stock-async/sku-2");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("7 in stock");
    assertThat(INVENTORY.seen("/stock/sku-2")).extracting(s -> s.header("X-Quell-Attempt"))
        .containsExactly("1/3", "2/3", "3/3");
  }

  @Test
  void theCallersDeadlineFlowsThroughTheShopToItsDependency() throws Exception {
    HttpResponse<String> response = get("/stock/sku-3", "X-Deadline-Ms", "1500");

    assertThat(response.statusCode()).isEqualTo(200);
    long passedOn = Long.parseLong(INVENTORY.seen("/stock/sku-3").get(0).header("X-Deadline-Ms"));
    assertThat(passedOn).isBetween(1L, 1500L); // never more than the caller has left
  }

  @Test
  void eachHostHasItsOwnBudgetAndARefusalReachesTheCallerAsA503() throws Exception {
    INVENTORY.script("/down", Answer.status(500));
    OTHER.script("/flaky", Answer.status(503), Answer.ok("fine"));

    // inventory's host: the budget (one token, no floor) funds one retry, then refuses
    HttpResponse<String> refused = get(proxy("proxy", INVENTORY, "/down", "fragile"));
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).contains("application/problem+json"));
    assertThat(JsonPath.<String>read(refused.body(), "$.reason")).isEqualTo("BUDGET_EXHAUSTED");
    assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    assertThat(INVENTORY.seen("/down")).hasSize(2);

    // the other host's budget is untouched: its retry is funded
    HttpResponse<String> other = get(proxy("proxy", OTHER, "/flaky", "fragile"));
    assertThat(other.statusCode()).isEqualTo(200);
    assertThat(OTHER.seen("/flaky")).hasSize(2);

    Map<String, Resilience> hosts = policies.hostPolicies("fragile");
    assertThat(hosts).containsOnlyKeys(INVENTORY.host(), OTHER.host());
    assertThat(hosts.get(INVENTORY.host()).budget().utilization()).isEqualTo(1.0);
    assertThat(hosts.get(OTHER.host()).budget()).isNotSameAs(hosts.get(INVENTORY.host()).budget());
    assertThat(hosts.get(OTHER.host()).name()).isEqualTo("fragile:" + OTHER.host());
  }

  @Test
  void theActuatorEndpointShowsPoliciesBudgetsBreakersAndHosts() throws Exception {
    assertThat(get("/stock/sku-4").statusCode()).isEqualTo(200);

    HttpResponse<String> response = get("/actuator/quell");

    assertThat(response.statusCode()).isEqualTo(200);
    String json = response.body();
    assertThat(JsonPath.<Integer>read(json, "$.policies.inventory.attempts")).isEqualTo(3);
    assertThat(JsonPath.<String>read(json, "$.policies.inventory.budget.name")).isEqualTo("inventory");
    assertThat(JsonPath.<String>read(json, "$.policies.inventory.budget.kind")).isEqualTo("token-bucket");
    assertThat(JsonPath.<Double>read(json, "$.policies.inventory.budget.capacity")).isEqualTo(30.0);
    String host = "$.policies.inventory.hosts['" + INVENTORY.host() + "']";
    assertThat(JsonPath.<Double>read(json, host + ".budget.utilization")).isBetween(0.0, 1.0);
    assertThat(JsonPath.<Number>read(json, host + ".budget.tokens").doubleValue()).isPositive();
    assertThat(JsonPath.<String>read(json, "$.policies.breaking.breaker.state")).isIn("CLOSED", "OPEN");
    assertThat(JsonPath.<Boolean>read(json, "$.draining.draining")).isFalse();

    HttpResponse<String> one = get("/actuator/quell/inventory");
    assertThat(one.statusCode()).isEqualTo(200);
    assertThat(JsonPath.<String>read(one.body(), "$.name")).isEqualTo("inventory");
    assertThat(get("/actuator/quell/nobody").statusCode()).isEqualTo(404);
  }

  @Test
  void aPrometheusScrapeShowsCallsAttemptsAndBudgetsTaggedByPolicy() throws Exception {
    INVENTORY.script("/stock/sku-5", Answer.status(503), Answer.ok("3 in stock"));
    assertThat(get("/stock/sku-5").statusCode()).isEqualTo(200);

    HttpResponse<String> scrape = get("/actuator/prometheus");

    assertThat(scrape.statusCode()).isEqualTo(200);
    String policy = "inventory:" + INVENTORY.host();
    assertThat(scrape.body())
        .containsPattern("quell_calls_total\\{[^}]*quell_outcome=\"SUCCEEDED\"[^}]*quell_policy=\"" + policy + "\"[^}]*} [1-9]")
        .containsPattern("quell_attempts_total\\{[^}]*kind=\"retry\"[^}]*quell_policy=\"" + policy + "\"[^}]*} [1-9]")
        .contains("quell_budget_utilization{quell_budget=\"" + policy + "\",quell_policy=\"" + policy + "\"}")
        .contains("quell_budget_tokens{quell_budget=\"inventory\",quell_policy=\"inventory\"}") // bound before any call
        // a configured policy's breaker has its state series from startup, before any call went through it
        .containsPattern("quell_breaker_state\\{[^}]*quell_policy=\"breaking\"[^}]*state=\"CLOSED\"[^}]*} 1");
  }

  HttpResponse<String> post(String path, String json) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anOperatorIsolatesAndResetsABreakerAndReadsTheRecentEvents() throws Exception {
    INVENTORY.script("/switch", Answer.status(503), Answer.ok("on"));
    String host = "switchable:" + INVENTORY.host();
    assertThat(get(proxy("proxy", INVENTORY, "/switch", "switchable")).body()).isEqualTo("on");

    HttpResponse<String> isolated = post("/actuator/quell/" + host, "{\"breaker\":\"isolate\"}");
    assertThat(isolated.statusCode()).isEqualTo(200);
    assertThat(JsonPath.<String>read(isolated.body(), "$.state")).isEqualTo("ISOLATED");
    int seen = INVENTORY.seen("/switch").size();
    HttpResponse<String> refused = get(proxy("proxy", INVENTORY, "/switch", "switchable"));
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(JsonPath.<String>read(refused.body(), "$.reason")).isEqualTo("DEPENDENCY_UNAVAILABLE");
    assertThat(INVENTORY.seen("/switch")).hasSize(seen);

    HttpResponse<String> reset = post("/actuator/quell/" + host, "{\"breaker\":\"reset\"}");
    assertThat(JsonPath.<String>read(reset.body(), "$.state")).isEqualTo("CLOSED");
    assertThat(get(proxy("proxy", INVENTORY, "/switch", "switchable")).statusCode()).isEqualTo(200);

    assertThat(post("/actuator/quell/" + host, "{\"breaker\":\"open\"}").statusCode()).isEqualTo(400);
    assertThat(post("/actuator/quell/nobody", "{\"breaker\":\"reset\"}").statusCode()).isEqualTo(404);

    // the recent events: the retry, the success, the breaker held open and the refusal, in order
    HttpResponse<String> events = get("/actuator/quellevents/switchable");
    assertThat(events.statusCode()).isEqualTo(200);
    List<String> types = JsonPath.read(events.body(), "$.events[*].type");
    assertThat(types).containsSubsequence("RETRYING", "SUCCEEDED", "REJECTED_BY_BREAKER", "SUCCEEDED");
    assertThat(JsonPath.<List<String>>read(events.body(), "$.events[*].policy")).containsOnly(host);
  }

  @Test
  void healthReportsAnOpenBreakerButLivenessNeverLooksAtQuell() throws Exception {
    INVENTORY.script("/broken", Answer.status(500));
    assertThat(get(proxy("proxy", INVENTORY, "/broken", "breaking")).statusCode()).isEqualTo(500);
    CircuitBreaker breaker = policies.hostPolicies("breaking").get(INVENTORY.host()).breaker().orElseThrow();
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);

    HttpResponse<String> health = get("/actuator/health");
    assertThat(JsonPath.<String>read(health.body(), "$.components.quell.status")).isEqualTo("UP");
    assertThat(JsonPath.<Map<String, Object>>read(health.body(), "$.components.quell.details.breakersNotClosed"))
        .containsEntry("breaking:" + INVENTORY.host(), "OPEN");

    HttpResponse<String> liveness = get("/actuator/health/liveness");
    assertThat(liveness.statusCode()).isEqualTo(200);
    assertThat(liveness.body()).doesNotContain("quell");

    // and the open breaker refuses the next call before it reaches the dependency: a 503 for the caller
    int before = INVENTORY.seen("/broken").size();
    HttpResponse<String> refused = get(proxy("proxy", INVENTORY, "/broken", "breaking"));
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(JsonPath.<String>read(refused.body(), "$.reason")).isEqualTo("DEPENDENCY_UNAVAILABLE");
    assertThat(INVENTORY.seen("/broken")).hasSize(before);
  }
}
