package dev.quell.micrometer.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Criticality;
import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.RetryBudget;
import dev.quell.internal.TelemetryNames;
import dev.quell.micrometer.QuellMicrometer;
import dev.quell.test.VirtualTime;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The gauges of budgets that were collected leave the registry, and so do the call meters of a policy
 * name whose budgets are all gone, so budgets that come and go (scope keys, rebuilt policies) cannot
 * grow it without bound. The weak tracking itself is tested once, in core's BudgetTrackerTest.
 */
class BudgetGaugeLifecycleTest {
  private final VirtualTime time = VirtualTime.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final RegistryBinding binding = RegistryBinding.of(registry);

  private int budgetGauges() {
    return registry.find(TelemetryNames.BUDGET_UTILIZATION).gauges().size()
        + registry.find(TelemetryNames.BUDGET_TOKENS).gauges().size();
  }

  /**
   * Runs the GC until {@code done} holds, at most 50 times. Weak references are cleared by a full GC but
   * queued afterwards by the JVM's reference handler thread: each round waits (generously) until that
   * thread has queued a reference of our own cleared by the same GC, so a busy machine cannot outrun it.
   */
  private static boolean gcUntil(BooleanSupplier done) {
    ReferenceQueue<Object> queue = new ReferenceQueue<>();
    for (int i = 0; i < 50 && !done.getAsBoolean(); i++) {
      WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
      System.gc();
      try {
        queue.remove(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return done.getAsBoolean();
      }
      sentinel.clear();
    }
    return done.getAsBoolean();
  }

  @Test
  void gaugesOfACollectedBudgetAreRemovedAtTheNextExpunge() {
    List<RetryBudget> budgets = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      RetryBudget b = RetryBudget.of(0.1, 3, time);
      budgets.add(b);
      QuellMicrometer.bindBudget(b, registry);
    }
    assertThat(budgetGauges()).isEqualTo(200);
    assertThat(binding.watchedBudgets()).isEqualTo(100);

    for (RetryBudget b : budgets.subList(0, 60)) {
      binding.simulateCollected(b); // what the GC does once nothing else holds the budget
    }
    assertThat(binding.expunge(registry)).isEqualTo(60);
    assertThat(budgetGauges()).isEqualTo(80);
    assertThat(binding.gaugeGroups()).isEqualTo(40);
    for (RetryBudget b : budgets.subList(60, 100)) {
      assertThat(registry.find(TelemetryNames.BUDGET_TOKENS).tag(TelemetryNames.TAG_BUDGET, b.name()).gauge()).isNotNull();
    }
    for (RetryBudget b : budgets.subList(0, 60)) {
      assertThat(registry.find(TelemetryNames.BUDGET_TOKENS).tag(TelemetryNames.TAG_BUDGET, b.name()).gauge()).isNull();
    }
  }

  @Test
  void aCallEndingExpungesWhatTheGcReported() {
    RetryBudget gone = RetryBudget.of(0.1, 3, time);
    QuellMicrometer.bindBudget(gone, registry);
    Resilience policy = Resilience.DEFAULT.withName("p").withTimeSource(time).withListener(QuellMicrometer.listener(registry));
    policy.run(() -> "ok");
    assertThat(budgetGauges()).isEqualTo(4);
    binding.simulateCollected(gone);
    policy.run(() -> "ok");
    assertThat(budgetGauges()).isEqualTo(2);
    assertThat(registry.find(TelemetryNames.BUDGET_TOKENS).tag(TelemetryNames.TAG_BUDGET, "p").gauge()).isNotNull();
  }

  @Test
  void budgetsWithTheSameNameShareGaugesThatShowTheMostSpent() {
    RetryBudget calm = RetryBudget.of(0.1, 3, time);
    Resilience first = Resilience.DEFAULT.withName("orders").withTimeSource(time)
        .withListener(QuellMicrometer.listener(registry));
    Resilience rebuilt = first.withAttempts(4); // a reload: same name, a budget of its own
    first.run(() -> "ok");
    rebuilt.run(() -> "ok");
    assertThat(binding.watchedBudgets()).isEqualTo(2);
    assertThat(budgetGauges()).isEqualTo(2);
    for (int i = 0; i < 5; i++) {
      rebuilt.budget().trySpend();
    }
    Gauge tokens = registry.find(TelemetryNames.BUDGET_TOKENS).tag(TelemetryNames.TAG_BUDGET, "orders").gauge();
    assertThat(tokens.value()).isEqualTo(25.0);
    binding.simulateCollected(rebuilt.budget());
    binding.expunge(registry);
    assertThat(tokens.value()).isEqualTo(30.0); // the one left
    binding.simulateCollected(first.budget());
    binding.expunge(registry);
    assertThat(budgetGauges()).isZero();
    assertThat(calm.tokens()).isEqualTo(30.0);
  }

  @Test
  void budgetsThatComeAndGoDoNotGrowTheRegistryWithoutBound() {
    var listener = QuellMicrometer.listener(registry);
    int maxGauges = 0;
    for (int round = 0; round < 20; round++) {
      for (int key = 0; key < 50; key++) {
        // like a scope key: a policy and budget per key, used once and dropped
        RetryBudget perKey = RetryBudget.of(0.1, 3, time);
        Resilience.DEFAULT.withName("scoped").withBudget(perKey).withTimeSource(time).withListener(listener)
            .run(() -> "ok");
        QuellMicrometer.bindBudget(perKey, registry);
      }
      maxGauges = Math.max(maxGauges, budgetGauges());
      assertThat(gcUntil(() -> {
        binding.expunge(registry);
        return binding.watchedBudgets() == 0;
      })).as("the GC cleared every dropped budget").isTrue();
      assertThat(budgetGauges()).isZero();
    }
    assertThat(maxGauges).isLessThanOrEqualTo(2 * 50);
    assertThat(registry.getMeters().size()).isLessThan(20); // calls, attempts and timers of one policy name
  }

  @Test
  void aScopeKeyedByAnUnboundedValueKeepsTheRegistryBounded() {
    // each key gets a policy "users:<key>" with its own budget; the scope forgets the least recently used
    PolicyScope<Integer> byUser = PolicyScope.of(Resilience.DEFAULT.withName("users").withTimeSource(time)
        .withListener(QuellMicrometer.listener(registry)), 10);
    MicrometerListener listener = RegistryBinding.listener(registry);
    int peakMeters = 0;
    for (int user = 0; user < 500; user++) {
      byUser.run(user, () -> "ok");
      if (user % 100 == 99) {
        peakMeters = Math.max(peakMeters, registry.getMeters().size());
        assertThat(gcUntil(() -> {
          binding.expunge(registry);
          return binding.watchedBudgets() <= 10;
        })).as("the budgets of forgotten keys were collected").isTrue();
        // calls, attempts and durations of at most the 10 keys held, plus their budget gauges
        assertThat(listener.policyNames()).isLessThanOrEqualTo(10);
        assertThat(budgetGauges()).isLessThanOrEqualTo(2 * 10);
      }
    }
    assertThat(registry.find(TelemetryNames.CALLS).tag(TelemetryNames.TAG_POLICY, "users:499").counter().count()).isEqualTo(1);
    assertThat(registry.find(TelemetryNames.BUDGET_TOKENS).tag(TelemetryNames.TAG_BUDGET, "users:499")
        .tag(TelemetryNames.TAG_POLICY, "users:499").gauge()).isNotNull();
    assertThat(registry.getMeters().size()).isLessThanOrEqualTo(10 * 5 + 2 * 10);
  }

  @Test
  void policyNamesPastTheBoundShareTheOverflowName() {
    MicrometerListener listener = RegistryBinding.listener(registry);
    for (int i = 0; i < MicrometerListener.MAX_POLICY_NAMES + 100; i++) {
      String name = "p" + i;
      listener.attemptStarted(name, RetryBudget.NONE, Criticality.CRITICAL, 1, false);
      listener.attemptEnded(name, RetryBudget.NONE, Criticality.CRITICAL, 1, false, Verdict.OK, null, 1);
      listener.callEnded(name, RetryBudget.NONE, Criticality.CRITICAL, StopReason.SUCCEEDED, 1, Verdict.OK, 1);
    }
    assertThat(listener.policyNames()).isEqualTo(MicrometerListener.MAX_POLICY_NAMES + 1);
    assertThat(registry.find(TelemetryNames.CALLS).tag(TelemetryNames.TAG_POLICY, MicrometerListener.OVERFLOW_POLICY)
        .counter().count()).isEqualTo(100);
  }
}
