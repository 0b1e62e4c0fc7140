package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.spring.internal.QuellEndpoint;
import dev.quell.spring.internal.QuellHealthIndicator;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.RestClient;

/**
 * Regression: a policy that tuned its budget (or set a limiter) through properties showed up as
 * {@code budget-7}, {@code adaptive-3}, {@code rate-1} with an empty {@code quell.policy} tag — in meters,
 * health and the endpoint — and the {@code policy:host} budget series never appeared. Every budget,
 * breaker and limiter built from properties carries its policy's name (and host where per host), the same
 * in every context started from the same properties.
 */
class PolicyNamesTest {
  private final Downstream dependency = Downstream.start();

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class, QuellHttpAutoConfiguration.class,
          QuellActuatorAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withPropertyValues(
          "management.health.quell.enabled=true",
          "quell.health.budget-threshold=0.01",
          "quell.defaults.backoff.kind=none",
          "quell.policies.hosty.budget.minimum-per-second=0",
          "quell.policies.hosty.breaker.failure-rate=0.5",
          "quell.policies.hosty.adaptive-limit.enabled=true",
          "quell.policies.hosty.throttle.window=10s",
          "quell.policies.hosty.rate-limit.per-second=1000",
          "quell.policies.hosty.rate-limit.burst=100",
          "quell.policies.hosty.concurrency-limit.limit=50",
          "quell.policies.fed.budget.kind=feedback",
          "quell.policies.fed.attempts=2",
          "quell.policies.topped.budget.kind=replenishing",
          "quell.policies.topped.budget.max-tokens=5",
          "quell.policies.topped.budget.period=1m",
          "quell.policies.capped.budget.kind=concurrent",
          "quell.budgets.payments.fraction=0.2",
          "quell.policies.payer.budget.shared=payments");

  @AfterEach
  void stop() {
    dependency.close();
  }

  /** The tag values of {@code meter} series, as "name|policy" (and kind for limiters). */
  static Set<String> series(MeterRegistry meters, String meter, String nameTag) {
    Set<String> out = new TreeSet<>();
    for (Meter m : meters.find(meter).meters()) {
      String kind = m.getId().getTag("kind");
      out.add(m.getId().getTag(nameTag) + "|" + m.getId().getTag("quell.policy") + (kind == null ? "" : "|" + kind));
    }
    return out;
  }

  @Test
  void everyGuardBuiltFromPropertiesCarriesItsPolicysNameAndHost() {
    runner.run(context -> {
      MeterRegistry meters = context.getBean(MeterRegistry.class);
      QuellPolicies policies = context.getBean(QuellPolicies.class);
      Resilience hosty = policies.policy("hosty");
      assertThat(hosty.budget().name()).isEqualTo("hosty");
      assertThat(hosty.breaker().orElseThrow().name()).isEqualTo("hosty");
      assertThat(hosty.limiters()).extracting(Limiter::name)
          .containsExactlyInAnyOrder("hosty.rate-limit", "hosty.concurrency-limit", "hosty", "hosty.throttle");
      assertThat(policies.policy("fed").budget().name()).isEqualTo("fed");
      assertThat(policies.policy("topped").budget().name()).isEqualTo("topped");
      assertThat(policies.policy("capped").budget().name()).isEqualTo("capped");
      assertThat(policies.policy("payer").budget().name()).isEqualTo("payments");

      // a call through the RestClient makes the per-host copy, with its own budget, breaker and adaptive limit
      RestClient rest = RestClient.builder().requestInterceptor(context.getBean(QuellRestClientInterceptor.class)).build();
      String body = rest.get().uri(dependency.url() + "/stock").attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "hosty")
          .retrieve().body(String.class);
      assertThat(body).isEqualTo("ok");
      String host = "hosty:" + dependency.host();

      assertThat(series(meters, "quell.budget.tokens", "quell.budget")).contains(
          "hosty|hosty", host + "|" + host, "fed|fed", "topped|topped", "capped|capped", "payments|");
      assertThat(series(meters, "quell.breaker.failure.rate", "quell.breaker")).contains("hosty|hosty", host + "|" + host);
      assertThat(series(meters, "quell.limiter.limit", "quell.limiter")).contains(
          "hosty|hosty|adaptive", host + "|" + host + "|adaptive", "hosty.throttle|hosty|throttle", host + ".throttle|" + host + "|throttle",
          "hosty.rate-limit|hosty|rate", "hosty.concurrency-limit|hosty|concurrency");
      assertThat(series(meters, "quell.calls", "quell.policy")).contains(host + "|" + host);
      List<String> anonymous = new ArrayList<>();
      for (Meter m : meters.getMeters()) {
        m.getId().getTags().forEach(t -> {
          if (t.getValue().matches("(budget|feedback|allowance|concurrent|rate|concurrency|adaptive|throttle)-\\d+")) {
            anonymous.add(m.getId().getName() + " " + t);
          }
          if (t.getKey().equals("quell.policy") && t.getValue().isEmpty() && !m.getId().getName().startsWith("quell.budget")) {
            anonymous.add(m.getId().getName() + " " + m.getId().getTags());
          }
        });
      }
      assertThat(anonymous).as("series with an anonymous name or an empty policy tag").isEmpty();

      // the endpoint and health say the same names
      Map<String, Object> endpoint = new QuellEndpoint(policies.registry()).policy("hosty");
      assertThat(endpoint).extractingByKey("budget").asString().contains("name=hosty,");
      assertThat(endpoint).extractingByKey("limiters").asString()
          .contains("name=hosty.rate-limit, kind=rate", "name=hosty.concurrency-limit, kind=concurrency", "name=hosty, kind=adaptive",
              "name=hosty.throttle, kind=throttle");
      assertThat(endpoint).extractingByKey("hosts").asString().contains("name=" + host);
      // the hosty bucket holds one token (no floor): after a failed first attempt the retry spends it
      Health health = context.getBean(QuellHealthIndicator.class).health();
      assertThat(health.getDetails()).extractingByKey("budgetsNearExhaustion").asString().doesNotContain("budget-");
      dependency.script("/down", Downstream.Answer.status(503));
      try {
        rest.get().uri(dependency.url() + "/down").attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "hosty")
            .retrieve().toBodilessEntity();
      } catch (RuntimeException expected) {
        // 503 after the attempts
      }
      assertThat(context.getBean(QuellHealthIndicator.class).health().getDetails())
          .extractingByKey("budgetsNearExhaustion").asString().contains(host + "=");
    });
  }

  @Test
  void theNamesAreTheSameInEveryContextStartedFromTheSameProperties() {
    List<Set<String>> runs = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      runner.run(context -> {
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        Set<String> all = new TreeSet<>();
        all.addAll(series(meters, "quell.budget.tokens", "quell.budget"));
        all.addAll(series(meters, "quell.limiter.limit", "quell.limiter"));
        all.addAll(series(meters, "quell.breaker.failure.rate", "quell.breaker"));
        runs.add(all);
      });
    }
    assertThat(runs.get(0)).isNotEmpty().isEqualTo(runs.get(1));
  }
}
