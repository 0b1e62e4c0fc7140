package dev.quell.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.test.VirtualTime;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Duration;
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
}
