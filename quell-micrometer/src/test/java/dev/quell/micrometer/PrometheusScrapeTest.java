package dev.quell.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Hedge;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** What a Prometheus server scraping the app sees: the names and labels docs/telemetry.md queries. */
class PrometheusScrapeTest {
  private final VirtualTime time = VirtualTime.create();
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  /** The value of the sample {@code name{labels}}, labels given in Prometheus' (alphabetical) order. */
  private static double sample(String scrape, String name, String labels) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name + "{" + labels + "}") + " (\\S+)").matcher(scrape);
    assertThat(m.find()).as("%s{%s} in%n%s", name, labels, scrape).isTrue();
    return Double.parseDouble(m.group(1));
  }

  @Test
  void scrapeShowsCallsAttemptsDurationsAndBudgetGauges() {
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withBackoff(Backoff.constant(Duration.ofMillis(100)))
        .withListener(QuellMicrometer.listener(registry));
    for (int i = 0; i < 10; i++) {
      int[] n = new int[1];
      inventory.run(() -> {
        if (n[0]++ == 0) {
          throw new IOException("flaky");
        }
        return "ok";
      });
    }
    RetryBudget shared = RetryBudget.of(0.1, 3, time);
    QuellMicrometer.bindBudget(shared, registry);

    String scrape = registry.scrape();
    assertThat(sample(scrape, "quell_calls_total", "quell_outcome=\"SUCCEEDED\",quell_policy=\"inventory\"")).isEqualTo(10);
    assertThat(sample(scrape, "quell_attempts_total", "kind=\"first\",quell_policy=\"inventory\"")).isEqualTo(10);
    assertThat(sample(scrape, "quell_attempts_total", "kind=\"retry\",quell_policy=\"inventory\"")).isEqualTo(10);
    assertThat(sample(scrape, "quell_call_duration_seconds_count", "quell_outcome=\"SUCCEEDED\",quell_policy=\"inventory\""))
        .isEqualTo(10);
    assertThat(sample(scrape, "quell_call_duration_seconds_sum", "quell_outcome=\"SUCCEEDED\",quell_policy=\"inventory\""))
        .isEqualTo(1.0);
    assertThat(sample(scrape, "quell_attempt_duration_seconds_count", "quell_policy=\"inventory\",quell_verdict=\"TRANSIENT\""))
        .isEqualTo(10);
    // 10 retries spent 10 tokens, 10 successes deposited 1: 21 of 30 left, minus nothing refilled (the bucket was full)
    assertThat(sample(scrape, "quell_budget_tokens", "quell_budget=\"inventory\",quell_policy=\"inventory\""))
        .isEqualTo(inventory.budget().tokens());
    assertThat(sample(scrape, "quell_budget_utilization", "quell_budget=\"inventory\",quell_policy=\"inventory\""))
        .isEqualTo(inventory.budget().utilization());
    // a budget with no owning policy has the same label names, as Prometheus requires, with an empty policy
    assertThat(sample(scrape, "quell_budget_tokens", "quell_budget=\"" + shared.name() + "\",quell_policy=\"\"")).isEqualTo(30);
    // the load multiplier the docs compute: attempts / calls
    double attempts = sample(scrape, "quell_attempts_total", "kind=\"first\",quell_policy=\"inventory\"")
        + sample(scrape, "quell_attempts_total", "kind=\"retry\",quell_policy=\"inventory\"");
    assertThat(attempts / sample(scrape, "quell_calls_total", "quell_outcome=\"SUCCEEDED\",quell_policy=\"inventory\""))
        .isEqualTo(2.0);
  }

  @Test
  void exhaustedBudgetScrapesAsRejectionsAndUtilizationNearOne() {
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withListener(QuellMicrometer.listener(registry));
    int rejected = 0;
    for (int i = 0; i < 40; i++) {
      if (inventory.run(() -> {
        throw new IOException("down");
      }).stopReason() == dev.quell.StopReason.BUDGET_EXHAUSTED) {
        rejected++;
      }
    }
    String scrape = registry.scrape();
    assertThat(sample(scrape, "quell_rejections_total", "quell_outcome=\"BUDGET_EXHAUSTED\",quell_policy=\"inventory\""))
        .isEqualTo(rejected).isPositive();
    assertThat(sample(scrape, "quell_budget_utilization", "quell_budget=\"inventory\",quell_policy=\"inventory\""))
        .isGreaterThan(0.9);
  }

  /** Scrapes {@code registry} the way Prometheus does: over HTTP, from the app's /metrics on loopback. */
  private static String scrapeOverHttp(PrometheusMeterRegistry registry) throws Exception {
    HttpServer server = TelemetryDocsExamplesTest.InventoryApp.serveMetrics(registry,
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    try {
      HttpResponse<String> response = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      return response.body();
    } finally {
      server.stop(0);
    }
  }

  @Test
  void scrapeShowsBreakerLimiterHedgeAndTimingSeriesUnderTheDocumentedNames() throws Exception {
    Limiter bulkhead = Limiter.concurrency(8);
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withTimeSource(time).withAttempts(1)
        .withBreaker(CircuitBreaker.Config.DEFAULT.withMinimumCalls(2).withRamp(Duration.ZERO))
        .withLimiter(bulkhead)
        .withMeasuredTiming(MeasuredTiming.multipleOfP95(3))
        .withAttemptTimeout(Duration.ofSeconds(1))
        .withListener(QuellMicrometer.listener(registry));
    QuellMicrometer.bind(inventory, registry);
    for (int i = 0; i < 2; i++) {
      inventory.run(() -> {
        throw new IOException("down");
      });
    }
    assertThat(inventory.run(() -> "refused").stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);

    Resilience search = Resilience.DEFAULT.withName("search").withTimeSource(time).withBackoff(Backoff.NONE)
        .withHedge(Hedge.after(Duration.ofMillis(100)))
        .withListener(QuellMicrometer.listener(registry)::onEvent); // hedge events as event objects, see LiveMetersTest
    int[] started = new int[1];
    CompletableFuture<String> hedged = search.executeAsync(() -> {
      int attempt = ++started[0];
      CompletableFuture<String> f = new CompletableFuture<>();
      // the primary is slow, the hedge sent after 100 ms answers 50 ms later
      time.schedule(() -> f.complete("attempt " + attempt), Duration.ofMillis(attempt == 1 ? 1000 : 50).toNanos());
      return f;
    });
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(hedged).isCompletedWithValue("attempt 2");

    String scrape = scrapeOverHttp(registry);
    String breaker = "quell_breaker=\"inventory\",quell_policy=\"inventory\"";
    assertThat(sample(scrape, "quell_breaker_state", breaker + ",state=\"OPEN\"")).isEqualTo(1);
    assertThat(sample(scrape, "quell_breaker_state", breaker + ",state=\"CLOSED\"")).isEqualTo(0);
    assertThat(sample(scrape, "quell_breaker_state", breaker + ",state=\"HALF_OPEN\"")).isEqualTo(0);
    assertThat(sample(scrape, "quell_breaker_state", breaker + ",state=\"ISOLATED\"")).isEqualTo(0);
    assertThat(sample(scrape, "quell_breaker_transitions_total", breaker + ",state=\"OPEN\"")).isEqualTo(1);
    assertThat(sample(scrape, "quell_breaker_transitions_total", breaker + ",state=\"CLOSED\"")).isEqualTo(0);
    assertThat(sample(scrape, "quell_breaker_refusals_total", breaker)).isEqualTo(1);
    assertThat(sample(scrape, "quell_breaker_failure_rate", breaker)).isEqualTo(1);
    assertThat(sample(scrape, "quell_rejections_total",
        "quell_outcome=\"DEPENDENCY_UNAVAILABLE\",quell_policy=\"inventory\"")).isEqualTo(1);

    String limiter = "kind=\"concurrency\",quell_limiter=\"" + bulkhead.name() + "\",quell_policy=\"\"";
    assertThat(sample(scrape, "quell_limiter_limit", limiter)).isEqualTo(8);
    assertThat(sample(scrape, "quell_limiter_in_flight", limiter)).isEqualTo(0);
    assertThat(sample(scrape, "quell_limiter_available", limiter)).isEqualTo(8);
    assertThat(sample(scrape, "quell_limiter_queued", limiter)).isEqualTo(0);

    // failures are no samples: no p95 yet (NaN), and the configured attempt timeout as the ceiling
    assertThat(sample(scrape, "quell_attempt_p95_seconds", "quell_policy=\"inventory\"")).isNaN();
    assertThat(sample(scrape, "quell_attempt_ceiling_seconds", "quell_policy=\"inventory\"")).isEqualTo(1.0);

    assertThat(sample(scrape, "quell_hedges_total", "quell_hedge=\"started\",quell_policy=\"search\"")).isEqualTo(1);
    assertThat(sample(scrape, "quell_hedges_total", "quell_hedge=\"won\",quell_policy=\"search\"")).isEqualTo(1);
    assertThat(sample(scrape, "quell_hedges_total", "quell_hedge=\"discarded\",quell_policy=\"search\"")).isEqualTo(1);
    assertThat(sample(scrape, "quell_attempts_total", "kind=\"hedge\",quell_policy=\"search\"")).isEqualTo(1);
  }
}
