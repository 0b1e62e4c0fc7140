package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.spring.internal.QuellPropertiesFailureAnalyzer;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/** Bad quell.* values stop the application with the property, the value, where it came from and what is allowed. */
@ExtendWith(OutputCaptureExtension.class)
@org.junit.jupiter.api.extension.ExtendWith(QuietContextFailures.class)
class StartupFailureTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class));

  private void fails(Consumer<String> description, String... properties) {
    runner.withPropertyValues(properties).run(context -> {
      assertThat(context).hasFailed();
      FailureAnalysis analysis = new QuellPropertiesFailureAnalyzer().analyze(context.getStartupFailure());
      assertThat(analysis).as("the failure is Quell's own: %s", context.getStartupFailure()).isNotNull();
      description.accept(analysis.getDescription());
      assertThat(analysis.getAction()).contains("docs/spring-boot.md");
    });
  }

  @Test
  void attemptsBelowOneNamesThePropertyTheValueAndTheRule() {
    fails(d -> assertThat(d).contains("quell.policies.inventory.attempts was 0 (from ")
            .contains(": must be at least 1 (attempts counts the first attempt too)"),
        "quell.policies.inventory.attempts=0");
  }

  @Test
  void aBadDefaultIsReportedOnceUnderItsOwnPath() {
    fails(d -> {
      assertThat(d).contains("quell.defaults.budget.fraction was 1.5")
          .contains("must be in (0, 1]; to turn the budget off set budget.kind to none");
      assertThat(d.split("budget.fraction was", -1)).hasSize(2);
    }, "quell.defaults.budget.fraction=1.5", "quell.policies.a.attempts=2", "quell.policies.b.attempts=3");
  }

  @Test
  void everyProblemIsListedAtOnce() {
    fails(d -> assertThat(d)
            .contains("quell.policies.inventory.breaker.failure-rate was 50 (from ")
            .contains("must be in (0, 1]")
            .contains("quell.policies.inventory.deadline was -1s (from ")
            .contains("must be a positive duration, or 0 for none")
            .contains("quell.policies.payments.rate-limit.burst was 0 (from ")
            .contains("quell.budgets.shared-api.max-tokens was 0 (from ")
            .contains("must be in [1, 1000000]"),
        "quell.policies.inventory.breaker.failure-rate=50",
        "quell.policies.inventory.deadline=-1s",
        "quell.policies.payments.rate-limit.per-second=10",
        "quell.policies.payments.rate-limit.burst=0",
        "quell.budgets.shared-api.kind=feedback",
        "quell.budgets.shared-api.max-tokens=0");
  }

  @Test
  void parametersOfAnotherBudgetKindAreRefused() {
    fails(d -> assertThat(d).contains("quell.policies.inventory.budget.fraction was 0.2 (from ")
            .contains("does not apply to budget kind none"),
        "quell.policies.inventory.budget.kind=none", "quell.policies.inventory.budget.fraction=0.2");
  }

  @Test
  void aHedgeNeedsRoomForAnotherAttempt() {
    fails(d -> assertThat(d).contains("quell.policies.search.hedge was").contains("needs attempts of 2 or more"),
        "quell.policies.search.attempts=1", "quell.policies.search.hedge.delay=20ms");
  }

  @Test
  void anAdaptiveLimitOutOfOrderNamesBothEnds() {
    fails(d -> assertThat(d).contains("quell.policies.inventory.adaptive-limit.min-limit was 50 (from ")
            .contains("must not be above maxLimit (40)"),
        "quell.policies.inventory.adaptive-limit.min-limit=50", "quell.policies.inventory.adaptive-limit.max-limit=40");
  }

  @Test
  void settingsThatNeedEachOtherSaySo() {
    fails(d -> assertThat(d)
            .contains("quell.policies.inventory.rate-limit.per-second: must be set for a rate limit")
            .contains("quell.policies.inventory.breaker.slow-call-rate was 0.5 (from ")
            .contains("needs breaker.slow-call-duration and breaker.slow-call-rate together")
            .contains("quell.policies.inventory.hedge.max-extra-load was 0.05 (from ")
            .contains("cannot be given with hedge.delay"),
        "quell.policies.inventory.rate-limit.burst=5",
        "quell.policies.inventory.breaker.slow-call-rate=0.5",
        "quell.policies.inventory.hedge.delay=10ms",
        "quell.policies.inventory.hedge.max-extra-load=0.05");
  }

  @Test
  void aMisspeltPropertyIsNamedInsteadOfIgnored() {
    fails(d -> assertThat(d)
            .contains("quell.policies.inventory.atempts was 5 (from ")
            .contains(": there is no such property")
            .contains("quell.defaults.breaker.failure-ratio was 0.5 (from ")
            .contains("quell.policies.inventory.deadline was -1s (from "), // listed with the other problems
        "quell.policies.inventory.atempts=5",
        "quell.defaults.breaker.failure-ratio=0.5",
        "quell.policies.inventory.deadline=-1s");
  }

  @Test
  void relaxedNamesAndListsAreNotMistakenForUnknownOnes() {
    runner.withPropertyValues(
            "quell.policies.inventory.attemptTimeout=700ms",
            "quell.policies.inventory.ATTEMPTS=4",
            "quell.policies.inventory.transient-exceptions[0]=java.io.IOException",
            "quell.policies.inventory.transient-exceptions[1]=java.util.concurrent.TimeoutException",
            "quell.budgets.shared-api.fraction=0.2",
            "quell.http.client.max-hosts=10")
        .run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void environmentVariablesThatLookLikeQuellPropertiesAreLeftAlone() {
    runner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
            new SystemEnvironmentPropertySource("systemEnvironment", Map.of("QUELL_HOME", "/opt/quell", "QUELL_POLICIES_INVENTORY_ATTEMPTS", "4"))))
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(QuellPolicies.class).policy("inventory").attempts()).isEqualTo(4);
        });
  }

  @Test
  void aValueOfTheWrongTypeIsSpringBootsOwnBindingFailure() {
    runner.withPropertyValues("quell.policies.inventory.attempts=lots").run(context -> {
      assertThat(context).hasFailed();
      assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("lots");
      assertThat(context.getStartupFailure()).hasStackTraceContaining("quell.policies.inventory.attempts");
    });
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class Minimal {}

  @Test
  void theApplicationPrintsTheProblemsWithTheirFileAndLineInsteadOfAStackTrace(CapturedOutput output) {
    SpringApplication application = new SpringApplication(Minimal.class);
    application.setWebApplicationType(WebApplicationType.NONE);
    assertThatThrownBy(() -> application.run("--spring.config.location=classpath:bad-quell.yml"))
        .hasStackTraceContaining("quell.policies.inventory.attempts was 0");
    assertThat(output).contains("APPLICATION FAILED TO START")
        .contains("Quell cannot build its policies from the quell.* properties:")
        .contains("quell.policies.inventory.attempts was 0 (from class path resource [bad-quell.yml] - 6:17): must be at least 1")
        .contains("quell.policies.inventory.budget.fraction was 1.5 (from class path resource [bad-quell.yml] - 8:19): must be in (0, 1]")
        .contains("Change the properties named above.");
  }
}
