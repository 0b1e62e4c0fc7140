package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker;
import dev.quell.Classifier;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/** Policies built from quell.* properties, in a real (small) application context. */
class PoliciesFromPropertiesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class));

  @Test
  void everyPolicyInheritsTheDefaultsWithoutNamingThem() {
    runner.withPropertyValues(
            "quell.defaults.attempts=5",
            "quell.defaults.attempt-timeout=400ms",
            "quell.policies.inventory.deadline=2s",
            "quell.policies.payments.attempts=2")
        .run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          Resilience inventory = policies.policy("inventory");
          assertThat(inventory.attempts()).isEqualTo(5);
          assertThat(inventory.deadline()).contains(Duration.ofSeconds(2));
          assertThat(inventory.attemptTimeout()).contains(Duration.ofMillis(400));
          Resilience payments = policies.policy("payments");
          assertThat(payments.attempts()).isEqualTo(2);
          assertThat(payments.deadline()).contains(Duration.ofSeconds(30)); // the preset's
          assertThat(payments.attemptTimeout()).contains(Duration.ofMillis(400));
          assertThat(policies.names()).containsExactly("inventory", "payments");
        });
  }

  @Test
  void aNameNobodyConfiguredIsMadeOfTheDefaults() {
    runner.withPropertyValues("quell.defaults.attempts=4")
        .run(context -> {
          Resilience p = context.getBean(QuellPolicies.class).policy("reports");
          assertThat(p.attempts()).isEqualTo(4);
          assertThat(p.name()).isEqualTo("reports");
          assertThat(context.getBean(QuellPolicies.class).policy("reports")).isSameAs(p);
        });
  }

  @Test
  void namesBindRelaxedFromPropertiesAndEnvironmentVariables() {
    runner.withPropertyValues("quell.policies.inventory.attemptTimeout=700ms", "quell.policies.inventory.backoff.kind=NONE")
        .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(new SystemEnvironmentPropertySource(
            "systemEnvironment", Map.of("QUELL_POLICIES_INVENTORY_ATTEMPTS", "6", "QUELL_DEFAULTS_DEADLINE", "3s"))))
        .run(context -> {
          Resilience inventory = context.getBean(QuellPolicies.class).policy("inventory");
          assertThat(inventory.attempts()).isEqualTo(6);
          assertThat(inventory.attemptTimeout()).contains(Duration.ofMillis(700));
          assertThat(inventory.deadline()).contains(Duration.ofSeconds(3));
        });
  }

  @Test
  void eachConfiguredPolicyIsABeanQualifiedByItsName() {
    runner.withPropertyValues("quell.policies.inventory.attempts=4", "quell.policies.payments.attempts=2")
        .withUserConfiguration(Consumers.class)
        .run(context -> {
          Consumers.Shop shop = context.getBean(Consumers.Shop.class);
          assertThat(shop.inventory.attempts()).isEqualTo(4);
          assertThat(shop.payments.attempts()).isEqualTo(2);
          assertThat(shop.inventory).isSameAs(context.getBean(QuellPolicies.class).policy("inventory"));
          assertThat(context.getBean("inventory")).isInstanceOf(String.class); // a bean of the user's, untouched
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class Consumers {
    @Bean
    String inventory() {
      return "a bean of the application's own that happens to share the name";
    }

    @Bean
    Shop shop(@Qualifier("inventory") Resilience inventory, @Qualifier("payments") Resilience payments) {
      return new Shop(inventory, payments);
    }

    record Shop(Resilience inventory, Resilience payments) {}
  }

  @Test
  void sharedBudgetsAreOneBucketForEveryPolicyThatNamesThem() {
    runner.withPropertyValues(
            "quell.budgets.payments-api.fraction=0.2",
            "quell.budgets.payments-api.minimum-per-second=1",
            "quell.policies.payments-read.budget.shared=payments-api",
            "quell.policies.payments-write.budget.shared=payments-api",
            "quell.policies.payments-write.attempts=2")
        .run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          RetryBudget read = policies.policy("payments-read").budget();
          assertThat(read).isSameAs(policies.policy("payments-write").budget());
          assertThat(read.name()).isEqualTo("payments-api");
          assertThat(read.capacity()).isEqualTo(10.0); // ten seconds of a floor of 1
          assertThat(policies.sharedBudgets()).containsEntry("payments-api", read);
        });
  }

  @Test
  void budgetKindsComeFromTheKindOrFromTheParametersGiven() {
    runner.withPropertyValues(
            "quell.policies.a.budget.kind=none",
            "quell.policies.b.budget.fraction=0.5",
            "quell.policies.b.budget.minimum-per-second=0",
            "quell.policies.c.budget.token-ratio=0.2",
            "quell.policies.d.budget.max-tokens=5",
            "quell.policies.d.budget.period=1m",
            "quell.policies.e.budget.kind=concurrent",
            "quell.policies.f.attempts=3")
        .run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          assertThat(policies.policy("a").budget()).isSameAs(RetryBudget.NONE);
          assertThat(policies.policy("b").budget().capacity()).isEqualTo(1.0); // no floor: never less than one token
          assertThat(policies.policy("c").budget().capacity()).isEqualTo(100.0);
          assertThat(policies.policy("d").budget().capacity()).isEqualTo(5.0);
          assertThat(policies.policy("e").budget().name()).isEqualTo("e"); // named after its policy, whatever the kind
          assertThat(dev.quell.spring.internal.QuellEndpoint.kind(policies.policy("e").budget())).isEqualTo("concurrent");
          RetryBudget automatic = policies.policy("f").budget();
          assertThat(automatic.name()).isEqualTo("f"); // the gauges carry the policy's name
          assertThat(automatic.capacity()).isEqualTo(30.0);
        });
  }

  @Test
  void breakerLimitersHedgeAndTimingComeFromTheirSettings() {
    runner.withPropertyValues(
            "quell.policies.inventory.breaker.failure-rate=0.25",
            "quell.policies.inventory.breaker.minimum-calls=5",
            "quell.policies.inventory.rate-limit.per-second=50",
            "quell.policies.inventory.rate-limit.burst=10",
            "quell.policies.inventory.concurrency-limit.limit=8",
            "quell.policies.inventory.adaptive-limit.max-limit=40",
            "quell.policies.inventory.hedge.delay=40ms",
            "quell.policies.inventory.measured-timing.multiple=3",
            "quell.policies.plain.attempts=2")
        .run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          Resilience inventory = policies.policy("inventory");
          CircuitBreaker breaker = inventory.breaker().orElseThrow();
          assertThat(breaker.name()).isEqualTo("inventory");
          assertThat(breaker.config().failureRate()).isEqualTo(0.25);
          assertThat(breaker.config().minimumCalls()).isEqualTo(5);
          assertThat(inventory.limiters()).extracting(Limiter::name)
              .containsExactly("inventory.rate-limit", "inventory.concurrency-limit", "inventory");
          assertThat(inventory.limiters().get(0).limit()).isEqualTo(10);
          assertThat(inventory.limiters().get(1).limit()).isEqualTo(8);
          assertThat(inventory.hedge().orElseThrow().delay()).contains(Duration.ofMillis(40));
          assertThat(inventory.measuredTiming().orElseThrow().multiple()).isEqualTo(3.0);
          Resilience plain = policies.policy("plain");
          assertThat(plain.breaker()).isEmpty();
          assertThat(plain.limiters()).isEmpty();
          assertThat(plain.hedge()).isEmpty();
        });
  }

  @Test
  void aPolicyTurnsOffWhatTheDefaultsTurnedOn() {
    runner.withPropertyValues(
            "quell.defaults.breaker.consecutive-failures=5",
            "quell.defaults.rate-limit.per-second=100",
            "quell.policies.quiet.breaker.enabled=false",
            "quell.policies.quiet.rate-limit.enabled=false",
            "quell.policies.loud.attempts=2")
        .run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          assertThat(policies.policy("quiet").breaker()).isEmpty();
          assertThat(policies.policy("quiet").limiters()).isEmpty();
          assertThat(policies.policy("loud").breaker().orElseThrow().config().consecutiveFailures()).isEqualTo(5);
          assertThat(policies.policy("loud").limiters()).hasSize(1);
        });
  }

  @Test
  void presetsAndExceptionListsDecideClassification() {
    runner.withPropertyValues(
            "quell.policies.web.preset=http",
            "quell.policies.once.preset=none",
            "quell.policies.picky.transient-exceptions=java.lang.IllegalStateException",
            "quell.policies.picky.permanent-exceptions=java.io.FileNotFoundException")
        .run(context -> {
          QuellPolicies policies = context.getBean(QuellPolicies.class);
          assertThat(policies.policy("web").classifier()).isEqualTo(Classifier.HTTP);
          assertThat(policies.policy("once").attempts()).isEqualTo(1);
          assertThat(policies.policy("once").budget()).isSameAs(RetryBudget.NONE);
          Classifier picky = policies.policy("picky").classifier();
          assertThat(picky.classify(null, new IllegalStateException())).isEqualTo(Verdict.TRANSIENT);
          assertThat(picky.classify(null, new java.io.FileNotFoundException())).isEqualTo(Verdict.PERMANENT);
          assertThat(picky.classify(null, new IOException())).isEqualTo(Verdict.TRANSIENT); // the preset's rule
        });
  }

  @Test
  void aConfiguredPolicyRunsCalls() {
    runner.withPropertyValues("quell.policies.inventory.attempts=3", "quell.policies.inventory.backoff.kind=none")
        .run(context -> {
          Resilience inventory = context.getBean(QuellPolicies.class).policy("inventory");
          int[] calls = {0};
          var outcome = inventory.run(() -> {
            if (++calls[0] < 3) {
              throw new IOException("connection reset");
            }
            return "42 in stock";
          });
          assertThat(outcome.stopReason()).isEqualTo(StopReason.SUCCEEDED);
          assertThat(outcome.attempts()).isEqualTo(3);
        });
  }
}
