package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PolicyScopeTest {
  private final VirtualTime time = VirtualTime.create();
  private final Resilience template = Resilience.DEFAULT.withName("catalog").withTimeSource(time)
      .withBackoff(Backoff.NONE);

  @Test
  void eachKeyGetsItsOwnNamedAutomaticBudget() throws Exception {
    PolicyScope<String> byHost = PolicyScope.of(template);
    assertThat(byHost.policy("a.example")).isSameAs(byHost.policy("a.example"));
    RetryBudget a = byHost.policy("a.example").budget();
    RetryBudget b = byHost.policy("b.example").budget();
    assertThat(a).isNotSameAs(b);
    assertThat(a.name()).isEqualTo("catalog:a.example");
    assertThat(byHost.policy("a.example").name()).isEqualTo("catalog:a.example");
    assertThat(byHost.budgets()).containsOnlyKeys("a.example", "b.example");
  }

  @Test
  void aStormAgainstOneKeyDoesNotRefuseRetriesToAnother() throws Exception {
    PolicyScope<String> byHost = PolicyScope.of(template);
    for (int i = 0; i < 40; i++) {
      byHost.run("sick.example", () -> {
        throw new IOException("down");
      });
    }
    assertThat(byHost.budgets().get("sick.example").tokens()).isLessThan(1.0);
    int[] attempts = {0};
    String v = byHost.execute("healthy.example", () -> {
      if (attempts[0]++ == 0) {
        throw new IOException("blip");
      }
      return "ok";
    });
    assertThat(v).isEqualTo("ok");
    assertThat(byHost.run("sick.example", () -> {
      throw new IOException("down");
    }).stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
  }

  @Test
  void asyncCallsUseTheKeysPolicy() {
    PolicyScope<String> byTenant = PolicyScope.of(template);
    CompletableFuture<String> f = byTenant.executeAsync("acme", () -> CompletableFuture.completedFuture("ok"));
    assertThat(f).isCompletedWithValue("ok");
    assertThat(byTenant.size()).isEqualTo(1);
  }

  @Test
  void anExplicitBudgetIsSharedByEveryKey() {
    RetryBudget shared = RetryBudget.of(0.1, 3, time);
    PolicyScope<Integer> scope = PolicyScope.of(template.withBudget(shared));
    assertThat(scope.policy(1).budget()).isSameAs(shared).isSameAs(scope.policy(2).budget());
  }

  @Test
  void aMillionDistinctKeysKeepTheScopeBoundedAndLetEvictedBudgetsGo() {
    PolicyScope<Integer> scope = PolicyScope.of(template);
    WeakReference<RetryBudget> first = new WeakReference<>(scope.policy(0).budget());
    for (int key = 1; key < 1_000_000; key++) {
      scope.policy(key);
    }
    assertThat(scope.size()).isEqualTo(PolicyScope.DEFAULT_MAX_KEYS);
    assertThat(scope.budgets()).hasSize(1024).containsKey(999_999).doesNotContainKey(0);
    for (int i = 0; i < 20 && first.get() != null; i++) {
      System.gc();
    }
    assertThat(first.get()).as("an evicted key's budget is garbage").isNull();
  }

  @Test
  void leastRecentlyUsedKeysAreEvictedFirst() {
    PolicyScope<String> scope = PolicyScope.of(template, 2);
    scope.policy("a");
    scope.policy("b");
    scope.policy("a"); // a is now the most recently used
    scope.policy("c");
    assertThat(scope.budgets()).containsOnlyKeys("a", "c");
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> PolicyScope.of(template, 0)).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessage("scope maxKeys was 0: must be at least 1");
  }
}
