package dev.quell.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.util.Collection;
import org.junit.jupiter.api.Test;

/** What the core's direct observer calls give the listener: a policy's breaker and limiters from its first call. */
class CoreSeamTest {

  @Test
  void aPolicysFirstCallGivesItsBreakerAndLimiterTheirInstruments() {
    InMemoryMetricReader reader = InMemoryMetricReader.create();
    try (OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
        .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build()) {
      Resilience inventory = Resilience.DEFAULT.withName("inventory").withBreaker(CircuitBreaker.Config.DEFAULT)
          .withLimiter(Limiter.concurrency(4)).withListener(QuellOpenTelemetry.listener(otel));
      inventory.run(() -> "ok");
      Collection<MetricData> m = reader.collectAllMetrics();
      MetricData state = m.stream().filter(d -> d.getName().equals("quell.breaker.state")).findFirst().orElseThrow();
      assertThat(state.getLongGaugeData().getPoints()).hasSize(4).anySatisfy(p -> {
        assertThat(p.getAttributes().get(AttributeKey.stringKey("state"))).isEqualTo("CLOSED");
        assertThat(p.getValue()).isEqualTo(1);
      });
      assertThat(m.stream().filter(d -> d.getName().equals("quell.limiter.limit")).findFirst().orElseThrow()
          .getLongGaugeData().getPoints()).singleElement().satisfies(p -> assertThat(p.getValue()).isEqualTo(4));
    }
  }
}
