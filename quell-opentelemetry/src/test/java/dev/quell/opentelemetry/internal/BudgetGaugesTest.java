package dev.quell.opentelemetry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.internal.BudgetTracker;
import dev.quell.opentelemetry.QuellOpenTelemetry;
import dev.quell.test.VirtualTime;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Collected budgets stop being reported, and a policy name whose budgets are gone loses its attribute
 * sets, so series cannot grow without bound. The weak tracking itself is tested once, in core's
 * BudgetTrackerTest.
 */
class BudgetGaugesTest {
  private final VirtualTime time = VirtualTime.create();
  private final InMemoryMetricReader reader = InMemoryMetricReader.create();
  private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
      .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build();
  private final OtelBinding binding = OtelBinding.of(otel);
  private final BudgetTracker<Attributes> watch = binding.budgets();

  @AfterEach
  void close() {
    otel.close();
  }

  private int reportedBudgets() {
    return reader.collectAllMetrics().stream().filter(m -> m.getName().equals("quell.budget.utilization"))
        .mapToInt(m -> m.getDoubleGaugeData().getPoints().size()).sum();
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
  void collectedBudgetsStopBeingReported() {
    List<RetryBudget> budgets = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      RetryBudget b = RetryBudget.of(0.1, 3, time);
      budgets.add(b);
      QuellOpenTelemetry.bindBudget(b, otel);
    }
    assertThat(reportedBudgets()).isEqualTo(100);
    for (RetryBudget b : budgets.subList(0, 70)) {
      watch.simulateCollected(b);
    }
    assertThat(reportedBudgets()).isEqualTo(30); // the gauge callback expunges what the GC reported
    assertThat(watch.watchedBudgets()).isEqualTo(30);
    assertThat(watch.groups()).hasSize(30);
  }

  @Test
  void budgetsThatComeAndGoDoNotGrowTheReportedSeries() {
    var listener = QuellOpenTelemetry.listener(otel);
    for (int round = 0; round < 20; round++) {
      for (int key = 0; key < 50; key++) {
        Resilience.DEFAULT.withName("scoped").withBudget(RetryBudget.of(0.1, 3, time)).withTimeSource(time)
            .withListener(listener).run(() -> "ok");
      }
      assertThat(watch.watchedBudgets()).isLessThanOrEqualTo(50 * (round + 1));
      assertThat(gcUntil(() -> {
        binding.expunge();
        return watch.watchedBudgets() == 0;
      })).isTrue();
      assertThat(watch.groups()).isEmpty();
    }
    List<MetricData> none = reader.collectAllMetrics().stream()
        .filter(m -> m.getName().startsWith("quell.budget")).toList();
    assertThat(none).allSatisfy(m -> assertThat(m.getDoubleGaugeData().getPoints()).isEmpty());
  }

  @Test
  void aScopeKeyedByAnUnboundedValueKeepsTheReportedBudgetsBounded() {
    OtelListener listener = OtelBinding.listener(otel);
    PolicyScope<Integer> byUser = PolicyScope.of(Resilience.DEFAULT.withName("users").withTimeSource(time)
        .withListener(listener), 10);
    for (int user = 0; user < 300; user++) {
      byUser.run(user, () -> "ok");
      if (user % 100 == 99) {
        assertThat(gcUntil(() -> {
          binding.expunge();
          return watch.watchedBudgets() <= 10;
        })).isTrue();
        assertThat(reportedBudgets()).isLessThanOrEqualTo(10);
        assertThat(listener.policyNames()).isLessThanOrEqualTo(10);
      }
    }
  }
}
