package dev.quell.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.quell.CircuitBreaker;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The Micrometer examples of docs/telemetry.md, compiled and run. */
class TelemetryDocsExamplesTest {

  /** The plain Java app of the docs: a policy with meters, and a /metrics endpoint for Prometheus. */
  static final class InventoryApp {
    public static void main(String[] args) throws Exception {
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      Resilience inventory = Resilience.DEFAULT
          .withName("inventory")
          .withListener(QuellMicrometer.listener(registry));
      QuellMicrometer.bindBudget(inventory, registry); // show the budget before the first call
      serveMetrics(registry, new InetSocketAddress(9464));

      String stock = inventory.execute(() -> "42 in stock"); // calls are counted from here on
      System.out.println(stock);
    }

    static HttpServer serveMetrics(PrometheusMeterRegistry registry, InetSocketAddress address) throws IOException {
      HttpServer server = HttpServer.create(address, 0);
      server.createContext("/metrics", exchange -> {
        byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      });
      server.start();
      return server;
    }
  }

  @Test
  void prometheusScrapesTheAppOverHttp() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Resilience inventory = Resilience.DEFAULT
        .withName("inventory")
        .withListener(QuellMicrometer.listener(registry));
    QuellMicrometer.bindBudget(inventory, registry);
    HttpServer server = InventoryApp.serveMetrics(registry, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    try {
      for (int i = 0; i < 3; i++) {
        inventory.execute(() -> "42 in stock");
      }
      HttpResponse<String> scrape = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(scrape.body())
          .contains("quell_calls_total{quell_outcome=\"SUCCEEDED\",quell_policy=\"inventory\"} 3.0")
          .contains("quell_attempts_total{kind=\"first\",quell_policy=\"inventory\"} 3.0")
          .contains("quell_budget_utilization{quell_budget=\"inventory\",quell_policy=\"inventory\"} 0.0");
    } finally {
      server.stop(0);
    }
  }

  @Test
  void sharedBudgetsAreBoundByName() {
    MeterRegistry registry = new SimpleMeterRegistry();
    RetryBudget payments = RetryBudget.shared("payments-api");
    QuellMicrometer.bindBudget(payments, registry);
    Resilience charge = Resilience.DEFAULT.withName("charge").withBudget(payments)
        .withListener(QuellMicrometer.listener(registry));
    Resilience refund = Resilience.DEFAULT.withName("refund").withBudget(payments)
        .withListener(QuellMicrometer.listener(registry));
    assertThat(registry.find("quell.budget.utilization").tag("quell.budget", "payments-api").tag("quell.policy", "")
        .gauge()).isNotNull();
    assertThat(charge.budget()).isSameAs(refund.budget());
  }

  @Test
  void aPolicysBreakerLimitersAndTimingAreBoundBeforeTheFirstCall() {
    MeterRegistry registry = new SimpleMeterRegistry();
    CircuitBreaker inventoryApi = CircuitBreaker.of("inventory-api");
    Resilience inventory = Resilience.DEFAULT
        .withName("inventory")
        .withBreaker(inventoryApi)
        .withListener(QuellMicrometer.listener(registry));
    QuellMicrometer.bind(inventory, registry); // budget, breaker, limiters and timing before the first call
    assertThat(registry.find("quell.breaker.state").tag("quell.breaker", "inventory-api").tag("quell.policy", "")
        .tag("state", "CLOSED").gauge().value()).isEqualTo(1);
    assertThat(registry.find("quell.budget.tokens").tag("quell.budget", "inventory").gauge()).isNotNull();
  }
}
