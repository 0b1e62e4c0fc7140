package dev.quell.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricExporter;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The OpenTelemetry examples of docs/telemetry.md, compiled and run against the SDK. */
@SuppressWarnings("try") // OpenTelemetry's idiom: a scope is opened only to be closed
class TelemetryDocsExamplesTest {

  static OpenTelemetrySdk openTelemetry(MetricExporter metrics, SpanExporter spans) {
    return OpenTelemetrySdk.builder()
        .setMeterProvider(SdkMeterProvider.builder()
            .registerMetricReader(PeriodicMetricReader.builder(metrics).setInterval(Duration.ofSeconds(30)).build())
            .build())
        .setTracerProvider(SdkTracerProvider.builder()
            .addSpanProcessor(BatchSpanProcessor.builder(spans).build())
            .build())
        .build();
  }

  static String checkout(OpenTelemetry openTelemetry, Resilience inventory) throws Exception {
    Tracer tracer = openTelemetry.getTracer("shop");
    Span span = tracer.spanBuilder("checkout").startSpan();
    try (Scope scope = span.makeCurrent()) {
      return inventory.execute(() -> "42 in stock"); // adds quell.attempt and quell.call events to "checkout"
    } finally {
      span.end();
    }
  }

  @Test
  void metricsAndSpanEventsReachTheExporters() throws Exception {
    InMemoryMetricExporter metricExporter = InMemoryMetricExporter.create();
    InMemorySpanExporter spanExporter = InMemorySpanExporter.create();
    try (OpenTelemetrySdk sdk = openTelemetry(metricExporter, spanExporter)) {
      OpenTelemetry openTelemetry = sdk;
      Resilience inventory = Resilience.DEFAULT
          .withName("inventory")
          .withListener(QuellOpenTelemetry.listener(openTelemetry));
      assertThat(checkout(openTelemetry, inventory)).isEqualTo("42 in stock");
      int[] calls = {0};
      checkoutFailingOnce(openTelemetry, inventory, calls);
      sdk.getSdkMeterProvider().forceFlush().join(10, TimeUnit.SECONDS);
      sdk.getSdkTracerProvider().forceFlush().join(10, TimeUnit.SECONDS);

      assertThat(metricExporter.getFinishedMetricItems()).anySatisfy(m -> {
        assertThat(m.getName()).isEqualTo("quell.calls");
        assertThat(m.getLongSumData().getPoints()).singleElement().satisfies(p -> assertThat(p.getValue()).isEqualTo(2));
      });
      assertThat(spanExporter.getFinishedSpanItems()).hasSize(2);
      assertThat(spanExporter.getFinishedSpanItems().get(0).getEvents()).extracting(EventData::getName)
          .containsExactly("quell.attempt", "quell.call");
      assertThat(spanExporter.getFinishedSpanItems().get(1).getEvents()).extracting(EventData::getName)
          .containsExactly("quell.attempt", "quell.retry", "quell.attempt", "quell.call");
    }
  }

  private static void checkoutFailingOnce(OpenTelemetry openTelemetry, Resilience inventory, int[] calls)
      throws Exception {
    Span span = openTelemetry.getTracer("shop").spanBuilder("checkout").startSpan();
    try (Scope scope = span.makeCurrent()) {
      inventory.withBackoff(dev.quell.Backoff.NONE).execute(() -> {
        if (calls[0]++ == 0) {
          throw new IOException("flaky");
        }
        return "ok";
      });
    } finally {
      span.end();
    }
  }

  /** Compiled only: how an app picks its OpenTelemetry instance. */
  static void wiring(OpenTelemetry openTelemetry) {
    Resilience inventory = Resilience.DEFAULT
        .withName("inventory")
        .withListener(QuellOpenTelemetry.listener(openTelemetry));
    QuellOpenTelemetry.bindBudget(inventory, openTelemetry); // report the budget before the first call
  }
}
