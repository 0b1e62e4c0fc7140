package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.annotation.Configuration;

/**
 * Regression: a refresh that changed a guard's own settings threw its state away — {@code budget.fraction}
 * 0.1 → 0.2 turned a spent bucket (2.3 tokens) into a full one (30), {@code breaker.break-duration} 60 s →
 * 90 s turned an OPEN breaker CLOSED: the settings an operator changes during an outage, and a burst at the
 * failing dependency as the result. (An adaptive throttle that is refusing is kept as it is.) A real Spring Cloud refresh of a real configuration file; the new guard
 * takes the old one's state over.
 */
@SpringBootTest(classes = RefreshCarriesStateTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.NONE,
    args = "--spring.config.import=optional:file:./target/refresh-carry-test/quell.properties")
class RefreshCarriesStateTest {
  static final Path FILE = Path.of("target/refresh-carry-test/quell.properties");
  static final Map<String, String> PROPERTIES = new TreeMap<>(Map.ofEntries(
      Map.entry("quell.defaults.backoff.kind", "none"),
      Map.entry("quell.policies.bucket.attempts", "2"),
      Map.entry("quell.policies.bucket.budget.fraction", "0.1"),
      Map.entry("quell.policies.bucket.budget.minimum-per-second", "3"),
      Map.entry("quell.policies.gate.attempts", "1"),
      Map.entry("quell.policies.gate.breaker.consecutive-failures", "1"),
      Map.entry("quell.policies.gate.breaker.break-duration", "60s"),
      Map.entry("quell.policies.gate.breaker.max-break-duration", "10m"),
      Map.entry("quell.policies.gate.breaker.ramp", "0s"),
      Map.entry("quell.policies.held.breaker.window", "30s"),
      Map.entry("quell.policies.held.breaker.ramp", "0s"),
      Map.entry("quell.policies.flow.attempts", "1"),
      Map.entry("quell.policies.flow.adaptive-limit.mode", "loss"), // each loss moves it (the knee mode waits for a window)
      Map.entry("quell.policies.flow.adaptive-limit.initial-limit", "20"),
      Map.entry("quell.policies.flow.adaptive-limit.min-limit", "5"),
      Map.entry("quell.policies.flow.adaptive-limit.max-limit", "200"),
      Map.entry("quell.policies.shed.attempts", "1"),
      Map.entry("quell.policies.shed.throttle.k", "1"),
      Map.entry("quell.policies.shed.throttle.window", "1h")));

  static {
    write();
  }

  static void write() {
    try {
      Files.createDirectories(FILE.getParent());
      StringBuilder out = new StringBuilder();
      PROPERTIES.forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
      Files.writeString(FILE, out);
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

  void refresh(String property, String value) {
    PROPERTIES.put(property, value);
    write();
    assertThat(refresher.refresh()).contains(property);
  }

  static Outcome<Object> fail(Resilience policy) {
    return policy.run(() -> {
      throw new IOException("down");
    });
  }

  @Test
  void aBucketWhoseFractionChangesKeepsWhatWasSpent() {
    RetryBudget before = policies.policy("bucket").budget();
    assertThat(before.capacity()).isEqualTo(30.0);
    for (int i = 0; i < 28; i++) {
      assertThat(before.trySpend()).isTrue();
    }
    assertThat(before.tokens()).isLessThan(10.0); // 2 tokens, and what the floor (3 a second) has added since

    refresh("quell.policies.bucket.budget.fraction", "0.2");

    RetryBudget after = policies.policy("bucket").budget();
    assertThat(after).isNotSameAs(before);
    assertThat(after.name()).isEqualTo("bucket");
    assertThat(after.capacity()).isEqualTo(30.0);
    // both refill at the same 3 a second from here: read together, they hold the same, within one deposit (0.2)
    double old = before.tokens();
    double carried = after.tokens();
    assertThat(carried).isCloseTo(old, within(0.2 + 1e-3)).isLessThan(30.0);
  }

  @Test
  void anOpenBreakerWhoseBreakChangesStaysOpenForTheRestOfItsBreakThenTakesTheNewSettings() {
    CircuitBreaker before = policies.policy("gate").breaker().orElseThrow();
    assertThat(fail(policies.policy("gate")).attempts()).isEqualTo(1);
    assertThat(before.state()).isEqualTo(CircuitBreaker.State.OPEN);
    Duration remaining = before.retryAfter().orElseThrow();

    refresh("quell.policies.gate.breaker.break-duration", "90s");

    Resilience gate = policies.policy("gate");
    assertThat(gate.breaker()).containsSame(before);
    assertThat(before.state()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(before.retryAfter().orElseThrow()).isLessThanOrEqualTo(remaining);
    Outcome<Object> refused = gate.run(() -> "never called");
    assertThat(refused.stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);

    // the break over and the breaker closed (reset stands in for the probe that would close it), the new settings apply
    before.reset();
    CircuitBreaker after = policies.policy("gate").breaker().orElseThrow();
    assertThat(after).isNotSameAs(before);
    assertThat(after.name()).isEqualTo("gate");
    assertThat(after.config().breakDuration()).isEqualTo(Duration.ofSeconds(90));
    assertThat(policies.policy("gate").run(() -> "answer").value()).isEqualTo("answer");
  }

  @Test
  void anIsolatedBreakerStaysIsolatedWhateverItsNewSettings() {
    CircuitBreaker before = policies.policy("held").breaker().orElseThrow();
    before.isolate();

    refresh("quell.policies.held.breaker.window", "60s");

    assertThat(policies.policy("held").breaker()).containsSame(before);
    assertThat(before.state()).isEqualTo(CircuitBreaker.State.ISOLATED);
    assertThat(policies.policy("held").run(() -> "never called").stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    before.reset();
    assertThat(policies.policy("held").breaker().orElseThrow().config().window()).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void anAdaptiveThrottleThatIsRefusingStaysAsItIsWhenItsSettingsChange() {
    Limiter before = policies.policy("shed").limiters().get(0);
    for (int i = 0; i < 20; i++) {
      fail(policies.policy("shed")); // nothing accepted: it refuses first attempts with probability r / (r + 1)
    }
    double refusing = before.rejectionProbability();
    assertThat(refusing).isGreaterThan(0.9);

    refresh("quell.policies.shed.throttle.k", "1.5");

    // a new throttle would refuse nothing; the old one goes on, with its window, until it refuses nothing
    // (ThrottleFromPropertiesTest lets its window pass on a virtual clock and sees the new settings take over)
    Limiter after = policies.policy("shed").limiters().get(0);
    assertThat(after).isSameAs(before);
    assertThat(after.toString()).contains("[shed.throttle, K=1.0");
    assertThat(after.rejectionProbability()).isGreaterThan(0.9);
  }

  @Test
  void anAdaptiveLimitWhoseSettingsChangeGoesOnFromItsCurrentLimit() {
    Limiter before = policies.policy("flow").limiters().get(0);
    for (int i = 0; i < 5; i++) {
      fail(policies.policy("flow")); // each failed attempt is a loss: the limit shrinks by 0.9
    }
    int shrunk = before.limit();
    assertThat(shrunk).isEqualTo(11); // 20 × 0.9^5 = 11.8

    refresh("quell.policies.flow.adaptive-limit.max-limit", "150");

    Limiter after = policies.policy("flow").limiters().get(0);
    assertThat(after).isNotSameAs(before);
    assertThat(after.name()).isEqualTo("flow");
    assertThat(after.limit()).isEqualTo(shrunk);
  }
}
