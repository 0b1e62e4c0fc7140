package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import dev.quell.spring.internal.QuellPropertiesFailureAnalyzer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Extreme and hostile values: each one either builds a policy that holds it or stops the start with a
 * message naming the property and the value — never a policy silently built from something else, never
 * a stack trace from deep inside.
 */
@org.junit.jupiter.api.extension.ExtendWith(QuietContextFailures.class)
class HostilePropertiesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class));

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(delimiter = '|', value = {
      "quell.policies.p.attempts | -2147483648",
      "quell.policies.p.attempts | 0",
      "quell.policies.p.deadline | -1ns",
      "quell.policies.p.attempt-timeout | -5s",
      "quell.policies.p.backoff.factor | NaN",
      "quell.policies.p.backoff.factor | 0.5",
      "quell.policies.p.backoff.base | -1ms",
      "quell.policies.p.budget.fraction | NaN",
      "quell.policies.p.budget.fraction | Infinity",
      "quell.policies.p.budget.fraction | 0",
      "quell.policies.p.budget.minimum-per-second | -1",
      "quell.policies.p.breaker.failure-rate | NaN",
      "quell.policies.p.breaker.probes | 0",
      "quell.policies.p.rate-limit.per-second | Infinity",
      "quell.policies.p.rate-limit.per-second | 0",
      "quell.policies.p.concurrency-limit.limit | 0",
      "quell.policies.p.hedge.max-extra-load | 1",
      "quell.policies.p.adaptive-limit.max-limit | 2000000",
      "quell.policies.p.throttle.k | 0.5",
      "quell.policies.p.throttle.k | NaN",
      "quell.policies.p.throttle.window | 500ms",
      "quell.policies.p.throttle.window | 2h",
      "quell.defaults.throttle.k | 11",
      "quell.configs.t.throttle.window | 0s",
      "quell.http.client.max-hosts | 0",
      "quell.health.budget-threshold | 2",
      "quell.draining.grace | -1s"})
  void aValueOutOfRangeStopsTheStartNamingPropertyAndValue(String property, String value) {
    runner.withPropertyValues(property + "=" + value).run(context -> {
      assertThat(context).as("%s=%s", property, value).hasFailed();
      FailureAnalysis analysis = new QuellPropertiesFailureAnalyzer().analyze(context.getStartupFailure());
      assertThat(analysis).as("Quell's own report for %s=%s: %s", property, value, context.getStartupFailure()).isNotNull();
      assertThat(analysis.getDescription()).contains(property + " was " + value);
    });
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(delimiter = '|', value = {
      "quell.policies.p.attempts | 1000",
      "quell.policies.p.deadline | 3650d",
      "quell.policies.p.deadline | 0",
      "quell.policies.p.attempt-timeout | 0",
      "quell.policies.p.backoff.max | 3650d",
      "quell.policies.p.throttle.k | 10",
      "quell.policies.p.throttle.window | 1h"})
  void anExtremeButValidValueIsHeld(String property, String value) {
    runner.withPropertyValues(property + "=" + value).run(context -> {
      assertThat(context).as("%s=%s", property, value).hasNotFailed();
      assertThat(context.getBean(QuellPolicies.class).policy("p")).isNotNull();
    });
  }

  @Test
  void aHugeDeadlineIsKeptAsWritten() {
    runner.withPropertyValues("quell.policies.p.deadline=3650d").run(context -> {
      Resilience p = context.getBean(QuellPolicies.class).policy("p");
      assertThat(p.deadline()).contains(Duration.ofDays(3650));
    });
  }

  @Test
  void policyNamesMayBeAnyText() {
    runner.withPropertyValues("quell.policies[库存].attempts=2", "quell.policies[payments.eu].attempts=4").run(context -> {
      assertThat(context).hasNotFailed();
      QuellPolicies policies = context.getBean(QuellPolicies.class);
      assertThat(policies.policy("库存").attempts()).isEqualTo(2);
      assertThat(policies.policy("payments.eu").attempts()).isEqualTo(4);
      assertThat(policies.names()).contains("库存", "payments.eu");
    });
  }
}
