package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.annotation.Configuration;

/**
 * A real refresh, as Spring Cloud does it (and as {@code /actuator/refresh}, Spring Cloud Config and
 * Kubernetes config watchers trigger it): the configuration file changes, {@link ContextRefresher}
 * reloads it and publishes the changed keys, and the policies are rebuilt around the same live state.
 */
@SpringBootTest(classes = RefreshKeepsStateTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.NONE,
    args = "--spring.config.import=optional:file:./target/refresh-test/quell.properties")
@ExtendWith(OutputCaptureExtension.class)
class RefreshKeepsStateTest {
  static final Path FILE = Path.of("target/refresh-test/quell.properties");

  static {
    write(2, 0.1);
  }

  static void write(int attempts, double strictFraction) {
    try {
      Files.createDirectories(FILE.getParent());
      Files.writeString(FILE, String.join("\n",
          "quell.policies.ledger.attempts=" + attempts,
          "quell.policies.ledger.backoff.kind=none",
          "quell.policies.ledger.breaker.consecutive-failures=1000",
          "quell.policies.ledger.adaptive-limit.enabled=true",
          "quell.policies.strict.attempts=" + attempts,
          "quell.policies.strict.backoff.kind=none",
          "quell.policies.strict.budget.fraction=" + strictFraction,
          "quell.policies.strict.budget.minimum-per-second=0",
          ""));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {}

  @Autowired
  QuellPolicies policies;

  @Autowired
  ContextRefresher refresher;

  @Autowired
  @Qualifier("ledger")
  Resilience injectedLedger;

  static Outcome<Object> fail(Resilience policy) {
    return policy.run(() -> {
      throw new IOException("ledger is down");
    });
  }

  @Test
  void aRefreshRebuildsThePoliciesAroundTheSameBudgetBreakerAndAdaptiveLimit(CapturedOutput output) {
    Resilience ledger = policies.policy("ledger");
    Resilience strict = policies.policy("strict");
    RetryBudget budget = ledger.budget();
    CircuitBreaker breaker = ledger.breaker().orElseThrow();
    Limiter adaptive = ledger.limiters().get(0);
    assertThat(fail(ledger).attempts()).isEqualTo(2);
    long windowBefore = breaker.metrics().calls();
    assertThat(windowBefore).isEqualTo(2);

    // spend the strict budget's only token (no floor refills it)
    assertThat(fail(strict).attempts()).isEqualTo(2);
    RetryBudget strictBudget = strict.budget();
    assertThat(strictBudget.tokens()).isZero();

    write(4, 0.1);
    Set<String> changed = refresher.refresh();
    assertThat(changed).contains("quell.policies.ledger.attempts", "quell.policies.strict.attempts");

    Resilience rebuilt = policies.policy("ledger");
    assertThat(rebuilt).isNotSameAs(ledger);
    assertThat(rebuilt.attempts()).isEqualTo(4);
    assertThat(rebuilt.budget()).isSameAs(budget);
    assertThat(rebuilt.breaker()).containsSame(breaker);
    assertThat(rebuilt.breaker().orElseThrow().metrics().calls()).isEqualTo(windowBefore);
    assertThat(rebuilt.limiters()).containsExactly(adaptive);

    // the new strict policy sees the same, spent bucket: its retry is refused
    Resilience strictRebuilt = policies.policy("strict");
    assertThat(strictRebuilt.attempts()).isEqualTo(4);
    assertThat(strictRebuilt.budget()).isSameAs(strictBudget);
    Outcome<Object> refused = fail(strictRebuilt);
    assertThat(refused.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    assertThat(refused.attempts()).isEqualTo(1);

    // the bean injected before the refresh keeps its settings but shares the live state
    assertThat(injectedLedger.attempts()).isEqualTo(2);
    assertThat(injectedLedger.budget()).isSameAs(budget);

    // changing a budget's own settings gives a new bucket, which takes over the spent share: still empty
    write(4, 0.5);
    refresher.refresh();
    Resilience fresh = policies.policy("strict");
    assertThat(fresh.budget()).isNotSameAs(strictBudget);
    assertThat(fresh.budget().tokens()).isZero();
    assertThat(fail(fresh).attempts()).isEqualTo(1); // no retry funded
    assertThat(policies.policy("ledger").budget()).isSameAs(budget);

    // new properties with problems are refused whole: the policies in force stay
    write(0, 0.5);
    refresher.refresh();
    assertThat(policies.policy("ledger").attempts()).isEqualTo(4);
    assertThat(output).contains("quell.refresh.rejected")
        .contains("quell.policies.ledger.attempts was 0");
  }
}
