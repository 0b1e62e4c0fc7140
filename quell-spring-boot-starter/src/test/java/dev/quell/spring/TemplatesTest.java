package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import dev.quell.spring.internal.QuellPropertiesFailureAnalyzer;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Named templates, Resilience4j's {@code configs.NAME} and {@code base-config}: a policy inherits its
 * template's settings, setting by setting, over the defaults; a template may choose a kind the defaults
 * do not have; templates chain; a name that leads nowhere, or round in a circle, stops the start.
 */
@org.junit.jupiter.api.extension.ExtendWith(QuietContextFailures.class)
class TemplatesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class))
      .withPropertyValues(
          "quell.defaults.attempts=2",
          "quell.defaults.deadline=5s",
          "quell.defaults.backoff.base=200ms",
          "quell.configs.payments.attempts=4",
          "quell.configs.payments.breaker.failure-rate=0.3",
          "quell.configs.payments.breaker.window=20s",
          "quell.configs.payments.backoff.delay=1s",
          "quell.configs.payments.budget.kind=concurrent",
          "quell.configs.slow-payments.base-config=payments",
          "quell.configs.slow-payments.deadline=30s");

  private void run(Consumer<QuellPolicies> check, String... properties) {
    runner.withPropertyValues(properties).run(context -> {
      assertThat(context).hasNotFailed();
      check.accept(context.getBean(QuellPolicies.class));
    });
  }

  @Test
  void aPolicyInheritsItsTemplateSettingBySettingOverTheDefaults() {
    run(policies -> {
      Resilience p = policies.policy("card");
      assertThat(p.attempts()).isEqualTo(4); // the template's
      assertThat(p.deadline()).contains(Duration.ofSeconds(5)); // the defaults'
      assertThat(p.breaker().orElseThrow().config().failureRate()).isEqualTo(0.3);
      assertThat(p.breaker().orElseThrow().config().window()).isEqualTo(Duration.ofSeconds(10)); // its own wins
      assertThat(p.breaker().orElseThrow().name()).isEqualTo("card");
      // the template chose a constant backoff and a concurrent budget: the defaults' exponential base is left behind
      assertThat(p.backoff().toString()).isEqualTo("constant(1000 ms)");
      assertThat(p.budget().getClass().getSimpleName()).isEqualTo("ConcurrentAllowance");
      assertThat(policies.policy("plain").attempts()).isEqualTo(2); // a policy without a template: the defaults
    }, "quell.policies.card.base-config=payments", "quell.policies.card.breaker.window=10s",
        "quell.policies.plain.deadline=1s");
  }

  @Test
  void aPolicyThatChoosesAnotherKindThanItsTemplateGetsItsOwn() {
    run(policies -> {
      Resilience p = policies.policy("card");
      assertThat(p.backoff().toString()).startsWith("exponential(50 ms transient");
      assertThat(p.budget().getClass().getSimpleName()).isEqualTo("TokenBucket");
    }, "quell.policies.card.base-config=payments", "quell.policies.card.backoff.base=50ms",
        "quell.policies.card.budget.fraction=0.2");
  }

  @Test
  void templatesChain() {
    run(policies -> {
      Resilience p = policies.policy("refunds");
      assertThat(p.deadline()).contains(Duration.ofSeconds(30)); // slow-payments'
      assertThat(p.attempts()).isEqualTo(4); // payments', through slow-payments
    }, "quell.policies.refunds.base-config=slow-payments");
  }

  private void fails(Consumer<String> description, String... properties) {
    runner.withPropertyValues(properties).run(context -> {
      assertThat(context).hasFailed();
      FailureAnalysis analysis = new QuellPropertiesFailureAnalyzer().analyze(context.getStartupFailure());
      assertThat(analysis).as("the failure is Quell's own: %s", context.getStartupFailure()).isNotNull();
      description.accept(analysis.getDescription());
    });
  }

  @Test
  void aTemplateThatDoesNotExistOrGoesRoundInACircleStopsTheStart() {
    fails(d -> assertThat(d).contains("quell.policies.card.base-config was paymnets (from ")
        .contains("names no template under quell.configs (there are payments, slow-payments)"),
        "quell.policies.card.base-config=paymnets");
    fails(d -> assertThat(d).contains("quell.configs.payments.base-config was slow-payments (from ")
        .contains("goes round in a circle: slow-payments -> payments -> slow-payments"),
        "quell.configs.payments.base-config=slow-payments", "quell.policies.card.base-config=slow-payments");
    fails(d -> assertThat(d).contains("quell.defaults.base-config was payments"), "quell.defaults.base-config=payments");
    // a bad value in a template is reported under the template, even before a policy names it
    fails(d -> assertThat(d).contains("quell.configs.unused.attempts was 0 (from ").contains("must be at least 1"),
        "quell.configs.unused.attempts=0");
  }
}
