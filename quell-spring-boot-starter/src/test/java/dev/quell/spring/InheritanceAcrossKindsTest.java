package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A policy that chooses another kind of backoff or budget than quell.defaults does: it gets its own
 * choice, and the defaults' settings for the other kind are not inherited — the merge never fails the
 * start (Resilience4j's "intervalFunction configured twice", resilience4j#2225, came from such a merge).
 */
class InheritanceAcrossKindsTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class));

  private Resilience policy(String... properties) {
    Resilience[] out = new Resilience[1];
    runner.withPropertyValues(properties).run(context -> {
      assertThat(context).hasNotFailed();
      out[0] = context.getBean(QuellPolicies.class).policy("p");
    });
    return out[0];
  }

  @Test
  void anExponentialPolicyUnderConstantDefaults() {
    Resilience p = policy("quell.defaults.backoff.delay=1s", "quell.policies.p.backoff.base=50ms");
    assertThat(p.backoff().toString()).startsWith("exponential(50 ms transient");
    assertThat(policy("quell.defaults.backoff.delay=1s", "quell.policies.q.attempts=2").backoff().toString())
        .isEqualTo("constant(1000 ms)"); // p, named but not configured, inherits the defaults whole
  }

  @Test
  void aConstantPolicyUnderExponentialDefaults() {
    Resilience p = policy("quell.defaults.backoff.base=200ms", "quell.defaults.backoff.factor=3",
        "quell.policies.p.backoff.delay=1s");
    assertThat(p.backoff().toString()).isEqualTo("constant(1000 ms)");
  }

  @Test
  void aPolicyThatNamesItsKindDropsTheOtherKindsSettings() {
    assertThat(policy("quell.defaults.backoff.base=200ms", "quell.policies.p.backoff.kind=none").backoff().toString())
        .isEqualTo("none");
    assertThat(policy("quell.defaults.backoff.kind=none", "quell.policies.p.backoff.base=50ms").backoff().toString())
        .startsWith("exponential(50 ms transient");
  }

  @Test
  void theDefaultsOfTheSameKindAreStillInherited() {
    Resilience p = policy("quell.defaults.backoff.factor=3", "quell.defaults.backoff.max=2s", "quell.policies.p.backoff.base=50ms");
    assertThat(p.backoff().toString()).isEqualTo("exponential(50 ms transient, 50 ms throttled, ×3.0, max 2000 ms, FULL jitter)");
  }

  @Test
  void aBudgetOfAnotherKindUnderTokenBucketDefaults() {
    Resilience p = policy("quell.defaults.budget.fraction=0.2", "quell.policies.p.budget.kind=concurrent");
    assertThat(p.budget().getClass().getSimpleName()).isEqualTo("ConcurrentAllowance");
  }

  @Test
  void aSharedBudgetUnderTokenBucketDefaults() {
    Resilience p = policy("quell.defaults.budget.fraction=0.2", "quell.policies.p.budget.shared=api");
    assertThat(p.budget().name()).isEqualTo("api");
  }

  @Test
  void anOwnBudgetUnderSharedDefaults() {
    Resilience p = policy("quell.defaults.budget.shared=api", "quell.policies.p.budget.fraction=0.3");
    assertThat(p.budget().name()).isNotEqualTo("api");
    assertThat(p.budget().getClass().getSimpleName()).isEqualTo("TokenBucket");
    // and a policy with nothing of its own still shares the defaults' budget
    assertThat(policy("quell.defaults.budget.shared=api", "quell.policies.q.attempts=2").budget().name()).isEqualTo("api");
  }

  @Test
  void aFeatureTurnedOffByDefaultIsOnForAPolicyThatConfiguresIt() {
    Resilience p = policy("quell.defaults.breaker.enabled=false", "quell.defaults.concurrency-limit.enabled=false",
        "quell.defaults.hedge.enabled=false", "quell.defaults.measured-timing.enabled=false",
        "quell.defaults.rate-limit.enabled=false", "quell.defaults.adaptive-limit.enabled=false",
        "quell.policies.p.breaker.window=20s", "quell.policies.p.concurrency-limit.limit=7",
        "quell.policies.p.hedge.delay=50ms", "quell.policies.p.measured-timing.multiple=3");
    assertThat(p.breakerConfig()).hasValueSatisfying(c -> assertThat(c.window()).hasSeconds(20));
    assertThat(p.limiters()).singleElement().satisfies(l -> assertThat(l.limit()).isEqualTo(7));
    assertThat(p.hedge()).isPresent();
    assertThat(p.timing()).isPresent();
  }

  @Test
  void aFeatureTurnedOffByDefaultStaysOffForPoliciesThatOnlyInheritItsSettings() {
    // the defaults' own settings do not turn their own "off" back on
    Resilience p = policy("quell.defaults.breaker.enabled=false", "quell.defaults.breaker.window=20s",
        "quell.defaults.concurrency-limit.enabled=false", "quell.defaults.concurrency-limit.limit=7",
        "quell.defaults.throttle.enabled=false", "quell.defaults.throttle.window=10s",
        "quell.policies.p.attempts=2");
    assertThat(p.breakerConfig()).isEmpty();
    assertThat(p.limiters()).isEmpty();
  }

  @Test
  void aPolicysOwnEnabledFalseAlwaysWins() {
    Resilience p = policy("quell.policies.p.breaker.enabled=false", "quell.policies.p.breaker.window=20s",
        "quell.defaults.concurrency-limit.limit=7", "quell.policies.p.concurrency-limit.enabled=false");
    assertThat(p.breakerConfig()).isEmpty();
    assertThat(p.limiters()).isEmpty();
  }

  @Test
  void aClashWithinAPolicysOwnPropertiesIsStillReported() {
    runner.withPropertyValues("quell.policies.p.backoff.kind=none", "quell.policies.p.backoff.base=50ms")
        .run(context -> assertThat(context).hasFailed()
            .getFailure().hasStackTraceContaining("quell.policies.p.backoff.base was 50ms"));
    runner.withPropertyValues("quell.policies.p.budget.fraction=0.2", "quell.policies.p.budget.percent=0.3")
        .run(context -> assertThat(context).hasFailed()
            .getFailure().hasStackTraceContaining("quell.policies.p.budget.percent was 0.3"));
  }

  @Test
  void aFixedHedgeUnderMeasuredDefaultsAndTheOtherWayRound() {
    assertThat(policy("quell.defaults.hedge.max-extra-load=0.05", "quell.defaults.hedge.floor=2ms",
        "quell.policies.p.hedge.delay=20ms").hedge()).hasValueSatisfying(h -> assertThat(h.toString()).contains("after 20 ms"));
    assertThat(policy("quell.defaults.hedge.delay=20ms", "quell.policies.p.hedge.max-extra-load=0.05").hedge())
        .hasValueSatisfying(h -> assertThat(h.toString()).contains("max extra load 0.05"));
  }
}
