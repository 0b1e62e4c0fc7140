package dev.quell.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.VirtualTime;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.DoublePointData;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@SuppressWarnings("try") // OpenTelemetry's idiom: a scope is opened only to be closed
class QuellOpenTelemetryTest {
  private final VirtualTime time = VirtualTime.create();
  private final InMemoryMetricReader reader = InMemoryMetricReader.create();
  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
      .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build())
      .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
      .build();

  @AfterEach
  void close() {
    otel.close();
  }

  private Resilience inventory() {
    return Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withBackoff(Backoff.constant(Duration.ofMillis(100)))
        .withListener(QuellOpenTelemetry.listener(otel));
  }

  private static Optional<MetricData> metric(Collection<MetricData> all, String name) {
    return all.stream().filter(m -> m.getName().equals(name)).findFirst();
  }

  private static long count(Collection<MetricData> all, String name, String... attributes) {
    return metric(all, name).map(m -> m.getLongSumData().getPoints().stream()
        .filter(p -> matches(p.getAttributes(), attributes)).mapToLong(LongPointData::getValue).sum()).orElse(0L);
  }

  private static HistogramPointData histogram(Collection<MetricData> all, String name, String... attributes) {
    return metric(all, name).orElseThrow().getHistogramData().getPoints().stream()
        .filter(p -> matches(p.getAttributes(), attributes)).findFirst().orElseThrow();
  }

  private static List<DoublePointData> gauge(Collection<MetricData> all, String name) {
    return metric(all, name).map(m -> List.copyOf(m.getDoubleGaugeData().getPoints())).orElse(List.of());
  }

  private static boolean matches(Attributes actual, String... expected) {
    for (int i = 0; i < expected.length; i += 2) {
      if (!expected[i + 1].equals(actual.get(AttributeKey.stringKey(expected[i])))) {
        return false;
      }
    }
    return true;
  }

  private static String failOnce(dev.quell.Attempt attempt) throws IOException {
    if (attempt.number() == 1) {
      throw new IOException("flaky");
    }
    return "ok";
  }

  @Test
  void tenCallsThatEachFailOnceCountTenCallsTenFirstAttemptsAndTenRetries() throws Exception {
    Resilience policy = inventory();
    for (int i = 0; i < 10; i++) {
      policy.execute(attempt -> {
        time.sleep(Duration.ofMillis(5));
        return failOnce(attempt);
      });
    }
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(count(m, "quell.calls", "quell.policy", "inventory", "quell.outcome", "SUCCEEDED")).isEqualTo(10);
    assertThat(count(m, "quell.calls")).isEqualTo(10);
    assertThat(count(m, "quell.attempts", "quell.policy", "inventory", "kind", "first")).isEqualTo(10);
    assertThat(count(m, "quell.attempts", "kind", "retry")).isEqualTo(10);
    assertThat(count(m, "quell.attempts", "kind", "hedge")).isZero();
    assertThat(metric(m, "quell.rejections")).isEmpty();

    HistogramPointData calls = histogram(m, "quell.call.duration", "quell.outcome", "SUCCEEDED");
    assertThat(calls.getCount()).isEqualTo(10);
    assertThat(calls.getSum()).isCloseTo(1.1, within(1e-9)); // 10 × (5 + 100 + 5) ms, in seconds
    assertThat(calls.getBoundaries()).contains(0.1, 0.25, 10.0);
    HistogramPointData ok = histogram(m, "quell.attempt.duration", "quell.verdict", "OK");
    assertThat(ok.getCount()).isEqualTo(10);
    assertThat(ok.getSum()).isCloseTo(0.05, within(1e-9));
    assertThat(histogram(m, "quell.attempt.duration", "quell.verdict", "TRANSIENT").getCount()).isEqualTo(10);
    assertThat(metric(m, "quell.call.duration").orElseThrow().getUnit()).isEqualTo("s");
    assertThat(metric(m, "quell.calls").orElseThrow().getInstrumentationScopeInfo().getName()).isEqualTo("dev.quell");

    List<DoublePointData> tokens = gauge(m, "quell.budget.tokens");
    assertThat(tokens).singleElement().satisfies(p -> {
      assertThat(p.getAttributes().get(AttributeKey.stringKey("quell.budget"))).isEqualTo("inventory");
      assertThat(p.getAttributes().get(AttributeKey.stringKey("quell.policy"))).isEqualTo("inventory");
      assertThat(p.getValue()).isEqualTo(policy.budget().tokens());
    });
  }

  @Test
  void budgetExhaustionCountsRejectionsAndDrivesUtilizationNearOne() {
    Resilience policy = inventory();
    long rejected = 0;
    for (int i = 0; i < 40; i++) {
      Outcome<String> o = policy.run(() -> {
        throw new IOException("down");
      });
      if (o.stopReason() == StopReason.BUDGET_EXHAUSTED) {
        rejected++;
      }
    }
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(rejected).isGreaterThan(10);
    assertThat(count(m, "quell.rejections", "quell.policy", "inventory", "quell.outcome", "BUDGET_EXHAUSTED"))
        .isEqualTo(rejected);
    assertThat(count(m, "quell.calls", "quell.outcome", "BUDGET_EXHAUSTED")).isEqualTo(rejected);
    assertThat(count(m, "quell.attempts", "kind", "first")).isEqualTo(40);
    assertThat(gauge(m, "quell.budget.utilization")).singleElement()
        .satisfies(p -> assertThat(p.getValue()).isGreaterThan(0.9).isLessThanOrEqualTo(1.0));
  }

  @Test
  void aSynchronousCallAddsAttemptRetryAndCallEventsToTheCurrentSpan() throws Exception {
    Resilience policy = inventory();
    Span parent = otel.getTracer("test").spanBuilder("checkout").startSpan();
    try (Scope ignored = parent.makeCurrent()) {
      policy.execute(QuellOpenTelemetryTest::failOnce);
    } finally {
      parent.end();
    }
    SpanData span = spans.getFinishedSpanItems().get(0);
    assertThat(span.getName()).isEqualTo("checkout");
    assertThat(span.getEvents()).extracting(EventData::getName)
        .containsExactly("quell.attempt", "quell.retry", "quell.attempt", "quell.call");
    EventData firstAttempt = span.getEvents().get(0);
    assertThat(firstAttempt.getAttributes().get(AttributeKey.stringKey("quell.verdict"))).isEqualTo("TRANSIENT");
    assertThat(firstAttempt.getAttributes().get(AttributeKey.stringKey("exception.type"))).isEqualTo("java.io.IOException");
    assertThat(firstAttempt.getAttributes().get(AttributeKey.longKey("quell.attempt"))).isEqualTo(1L);
    EventData retry = span.getEvents().get(1);
    assertThat(retry.getAttributes().get(AttributeKey.longKey("quell.attempt"))).isEqualTo(2L);
    assertThat(retry.getAttributes().get(AttributeKey.doubleKey("quell.retry.delay"))).isEqualTo(0.1);
    EventData end = span.getEvents().get(3);
    assertThat(end.getAttributes().get(AttributeKey.stringKey("quell.outcome"))).isEqualTo("SUCCEEDED");
    assertThat(end.getAttributes().get(AttributeKey.longKey("quell.attempts"))).isEqualTo(2L);
    assertThat(spans.getFinishedSpanItems()).hasSize(1); // no span of Quell's own
  }

  @Test
  void aRefusedRetryAddsARejectedEvent() {
    Resilience policy = Resilience.DEFAULT.withName("tight").withTimeSource(time)
        .withBudget(RetryBudget.of(0.1, 0, time)) // one token, only successes refill it
        .withListener(QuellOpenTelemetry.listener(otel));
    Span parent = otel.getTracer("test").spanBuilder("batch").startSpan();
    try (Scope ignored = parent.makeCurrent()) {
      Outcome<String> o = policy.run(() -> {
        throw new IOException("down");
      });
      assertThat(o.stopReason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
    } finally {
      parent.end();
    }
    List<EventData> events = spans.getFinishedSpanItems().get(0).getEvents();
    assertThat(events.stream().map(EventData::getName).collect(Collectors.toList())).containsExactly(
        "quell.attempt", "quell.retry", "quell.attempt", "quell.rejected", "quell.call");
    Attributes rejected = events.get(3).getAttributes();
    assertThat(rejected.get(AttributeKey.stringKey("quell.outcome"))).isEqualTo("BUDGET_EXHAUSTED");
    assertThat(rejected.get(AttributeKey.doubleKey("quell.budget.utilization"))).isEqualTo(1.0);
  }

  @Test
  void withoutARecordingSpanNoEventsAreMadeAndMetricsStillCount() throws Exception {
    Resilience policy = inventory();
    policy.execute(QuellOpenTelemetryTest::failOnce);
    assertThat(spans.getFinishedSpanItems()).isEmpty();
    assertThat(count(reader.collectAllMetrics(), "quell.calls")).isEqualTo(1);
  }

  @Test
  void theFastPathOnTheRealClockIsCountedToo() throws Exception {
    Resilience policy = Resilience.DEFAULT.withName("fast").withListener(QuellOpenTelemetry.listener(otel));
    for (int i = 0; i < 3; i++) {
      policy.execute(() -> "ok");
    }
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(count(m, "quell.calls", "quell.policy", "fast", "quell.outcome", "SUCCEEDED")).isEqualTo(3);
    assertThat(count(m, "quell.attempts", "quell.policy", "fast", "kind", "first")).isEqualTo(3);
  }

  @Test
  void explicitlyBoundBudgetsAreReportedBeforeAnyCall() {
    RetryBudget shared = RetryBudget.of(0.1, 3, time);
    QuellOpenTelemetry.bindBudget(shared, otel);
    QuellOpenTelemetry.bindBudget(shared, otel);
    Resilience policy = inventory();
    QuellOpenTelemetry.bindBudget(policy, otel);
    QuellOpenTelemetry.bindBudget(RetryBudget.NONE, otel);
    QuellOpenTelemetry.bindBudget(RetryBudget.AUTOMATIC, otel);
    List<DoublePointData> tokens = gauge(reader.collectAllMetrics(), "quell.budget.tokens");
    assertThat(tokens).extracting(p -> p.getAttributes().get(AttributeKey.stringKey("quell.budget")) + "/"
        + p.getAttributes().get(AttributeKey.stringKey("quell.policy")))
        .containsExactlyInAnyOrder(shared.name() + "/", "inventory/inventory");
    assertThat(QuellOpenTelemetry.listener(otel)).isSameAs(QuellOpenTelemetry.listener(otel));
  }
}
