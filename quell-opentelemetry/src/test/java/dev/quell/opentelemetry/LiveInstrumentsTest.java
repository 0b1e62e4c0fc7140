package dev.quell.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.CircuitBreaker;
import dev.quell.Hedge;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.internal.CallObserver;
import dev.quell.opentelemetry.internal.OtelBinding;
import dev.quell.test.VirtualTime;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The instruments of what a policy holds live — circuit breaker, limiters, measured timing — and of its
 * hedges, with exact values on a virtual clock, through the SDK's in-memory reader.
 */
@SuppressWarnings("try") // OpenTelemetry's idiom: a scope is opened only to be closed
class LiveInstrumentsTest {
  private final VirtualTime time = VirtualTime.create();
  private final InMemoryMetricReader reader = InMemoryMetricReader.create();
  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
      .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build())
      .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
      .build();
  private final ResilienceListener listener = QuellOpenTelemetry.listener(otel);
  /** The listener as a plain listener: hedge events reach it as event objects (see the Micrometer LiveMetersTest). */
  private final ResilienceListener viaEvents = listener::onEvent;

  private static final CircuitBreaker.Config TRIPS_AFTER_FOUR = CircuitBreaker.Config.DEFAULT
      .withMinimumCalls(4).withFailureRate(0.5).withWindow(Duration.ofSeconds(10))
      .withBreakDuration(Duration.ofSeconds(4)).withRamp(Duration.ZERO);

  @AfterEach
  void close() {
    otel.close();
  }

  private static boolean matches(Attributes actual, String... expected) {
    for (int i = 0; i < expected.length; i += 2) {
      if (!expected[i + 1].equals(actual.get(AttributeKey.stringKey(expected[i])))) {
        return false;
      }
    }
    return true;
  }

  private static List<PointData> points(Collection<MetricData> all, String name, String... attributes) {
    Optional<MetricData> metric = all.stream().filter(m -> m.getName().equals(name)).findFirst();
    return metric.map(m -> m.getData().getPoints().stream().filter(p -> matches(p.getAttributes(), attributes))
        .map(p -> (PointData) p).collect(Collectors.toList())).orElse(List.of());
  }

  /** The one value of {@code name} with {@code attributes}: long and double points alike. */
  private static OptionalDouble value(Collection<MetricData> all, String name, String... attributes) {
    List<PointData> p = points(all, name, attributes);
    assertThat(p).as("%s %s", name, List.of(attributes)).hasSizeLessThanOrEqualTo(1);
    if (p.isEmpty()) {
      return OptionalDouble.empty();
    }
    PointData point = p.get(0);
    return OptionalDouble.of(point instanceof io.opentelemetry.sdk.metrics.data.LongPointData
        ? ((io.opentelemetry.sdk.metrics.data.LongPointData) point).getValue()
        : ((io.opentelemetry.sdk.metrics.data.DoublePointData) point).getValue());
  }

  private static double the(Collection<MetricData> all, String name, String... attributes) {
    OptionalDouble v = value(all, name, attributes);
    assertThat(v).as("%s %s", name, List.of(attributes)).isPresent();
    return v.getAsDouble();
  }

  @Test
  void aBreakersStateTransitionsAndRefusalsAreReportedExactlyManualMovesIncluded() {
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withBreaker(TRIPS_AFTER_FOUR).withListener(listener);
    QuellOpenTelemetry.bind(inventory, otel);
    CircuitBreaker breaker = inventory.breaker().orElseThrow();
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(the(m, "quell.breaker.state", "quell.breaker", "inventory", "state", "CLOSED")).isEqualTo(1);
    assertThat(the(m, "quell.breaker.state", "quell.breaker", "inventory", "state", "OPEN")).isZero();
    assertThat(the(m, "quell.breaker.transitions", "state", "OPEN")).isZero();

    for (int i = 0; i < 4; i++) {
      inventory.run(() -> {
        throw new IOException("down");
      });
    }
    for (int i = 0; i < 3; i++) {
      assertThat(inventory.run(() -> "ok").stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    }
    m = reader.collectAllMetrics();
    assertThat(the(m, "quell.breaker.state", "quell.breaker", "inventory", "quell.policy", "inventory", "state", "OPEN"))
        .isEqualTo(1);
    assertThat(the(m, "quell.breaker.state", "state", "CLOSED")).isZero();
    assertThat(the(m, "quell.breaker.transitions", "state", "OPEN")).isEqualTo(1);
    assertThat(the(m, "quell.breaker.refusals", "quell.breaker", "inventory")).isEqualTo(3);
    assertThat(the(m, "quell.breaker.failure.rate", "quell.breaker", "inventory")).isEqualTo(1.0);
    assertThat(the(m, "quell.rejections", "quell.policy", "inventory", "quell.outcome", "DEPENDENCY_UNAVAILABLE"))
        .isEqualTo(3);

    time.advance(Duration.ofSeconds(4));
    assertThat(inventory.run(() -> "ok").stopReason()).isEqualTo(StopReason.SUCCEEDED);
    breaker.isolate();
    m = reader.collectAllMetrics();
    assertThat(the(m, "quell.breaker.state", "state", "ISOLATED")).isEqualTo(1);
    assertThat(the(m, "quell.breaker.transitions", "state", "HALF_OPEN")).isEqualTo(1);
    assertThat(the(m, "quell.breaker.transitions", "state", "CLOSED")).isEqualTo(1);
    assertThat(the(m, "quell.breaker.transitions", "state", "ISOLATED")).isEqualTo(1);
    breaker.reset();
    m = reader.collectAllMetrics();
    assertThat(the(m, "quell.breaker.state", "state", "CLOSED")).isEqualTo(1);
    assertThat(the(m, "quell.breaker.transitions", "state", "CLOSED")).isEqualTo(2);
    assertThat(points(m, "quell.breaker.state")).hasSize(4);
  }

  @Test
  void limiterGaugesAndLimitedRejections() {
    Limiter bulkhead = Limiter.concurrency(2, Duration.ofSeconds(1));
    Limiter rate = Limiter.rate(10, 3, time);
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withLimiter(rate).withLimiter(bulkhead).withListener(listener);
    QuellOpenTelemetry.bind(inventory, otel);
    CompletableFuture<String> open = new CompletableFuture<>();
    for (int i = 0; i < 3; i++) {
      inventory.executeAsync(() -> open);
    }
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(the(m, "quell.limiter.limit", "quell.limiter", bulkhead.name(), "kind", "concurrency", "quell.policy", ""))
        .isEqualTo(2);
    assertThat(the(m, "quell.limiter.in_flight", "quell.limiter", bulkhead.name())).isEqualTo(2);
    assertThat(the(m, "quell.limiter.queued", "quell.limiter", bulkhead.name())).isEqualTo(1);
    assertThat(the(m, "quell.limiter.available", "quell.limiter", bulkhead.name())).isZero();
    assertThat(the(m, "quell.limiter.limit", "quell.limiter", rate.name(), "kind", "rate")).isEqualTo(3);
    assertThat(the(m, "quell.limiter.available", "quell.limiter", rate.name())).isZero();

    // the bucket is empty: the next call is refused by the rate limiter
    assertThat(inventory.run(() -> "ok").stopReason()).isEqualTo(StopReason.LIMITED);
    open.complete("ok");
    time.runUntilIdle(Duration.ofSeconds(5));
    m = reader.collectAllMetrics();
    assertThat(the(m, "quell.rejections", "quell.policy", "inventory", "quell.outcome", "LIMITED")).isEqualTo(1);
    assertThat(the(m, "quell.limiter.in_flight", "quell.limiter", bulkhead.name())).isZero();
    assertThat(the(m, "quell.limiter.queued", "quell.limiter", bulkhead.name())).isZero();
  }

  private Supplier<CompletionStage<String>> answersAfter(Duration... latencies) {
    int[] n = new int[1];
    return () -> {
      int i = n[0]++;
      CompletableFuture<String> f = new CompletableFuture<>();
      time.schedule(() -> f.complete("attempt " + (i + 1)), latencies[i].toNanos());
      return f;
    };
  }

  @Test
  void hedgesAreCountedByWhatHappenedAndMarkedOnTheSpan() {
    Resilience search = Resilience.DEFAULT.withName("search").withTimeSource(time).withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.of(0.1, 1, time)).withHedge(Hedge.after(Duration.ofMillis(100)))
        .withListener(viaEvents);
    Span span = otel.getTracer("test").spanBuilder("search").startSpan();
    try (Scope scope = span.makeCurrent()) {
      CompletableFuture<String> won = search.executeAsync(answersAfter(Duration.ofSeconds(1), Duration.ofMillis(50)));
      time.runUntilIdle(Duration.ofMinutes(1)); // the timers run here, on this thread, inside the span
      assertThat(won).isCompletedWithValue("attempt 2");
      while (search.budget().trySpend()) {
        // dry: the next hedge is suppressed
      }
      CompletableFuture<String> alone = search.executeAsync(answersAfter(Duration.ofSeconds(1)));
      time.runUntilIdle(Duration.ofMinutes(1));
      assertThat(alone).isCompletedWithValue("attempt 1");
    } finally {
      span.end();
    }
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(the(m, "quell.hedges", "quell.policy", "search", "quell.hedge", "started")).isEqualTo(1);
    assertThat(the(m, "quell.hedges", "quell.policy", "search", "quell.hedge", "won")).isEqualTo(1);
    assertThat(the(m, "quell.hedges", "quell.policy", "search", "quell.hedge", "discarded")).isEqualTo(1);
    assertThat(the(m, "quell.hedges", "quell.policy", "search", "quell.hedge", "suppressed")).isEqualTo(1);
    List<String> hedgeEvents = spans.getFinishedSpanItems().get(0).getEvents().stream()
        .filter(e -> e.getName().equals("quell.hedge"))
        .map(e -> e.getAttributes().get(AttributeKey.stringKey("quell.hedge")))
        .collect(Collectors.toList());
    assertThat(hedgeEvents).containsExactly("started", "won", "discarded", "suppressed");
  }

  @Test
  void aBreakerTransitionIsMarkedOnTheSpan() {
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withBreaker(TRIPS_AFTER_FOUR).withListener(viaEvents);
    Span span = otel.getTracer("test").spanBuilder("load").startSpan();
    try (Scope scope = span.makeCurrent()) {
      for (int i = 0; i < 4; i++) {
        inventory.run(() -> {
          throw new IOException("down");
        });
      }
    } finally {
      span.end();
    }
    List<EventData> moves = spans.getFinishedSpanItems().get(0).getEvents().stream()
        .filter(e -> e.getName().equals("quell.breaker")).collect(Collectors.toList());
    assertThat(moves).singleElement().satisfies(e -> {
      assertThat(e.getAttributes().get(AttributeKey.stringKey("state"))).isEqualTo("OPEN");
      assertThat(e.getAttributes().get(AttributeKey.stringKey("quell.policy"))).isEqualTo("inventory");
      assertThat(e.getAttributes().get(AttributeKey.longKey("quell.attempt"))).isEqualTo(1L);
    });
  }

  @Test
  void measuredTimingGaugesReadThePolicysOwnFigures() throws Exception {
    Resilience pricing = Resilience.DEFAULT.withName("pricing").withTimeSource(time)
        .withAttemptTimeout(Duration.ofSeconds(2))
        .withMeasuredTiming(MeasuredTiming.multipleOfP95(3).withMinSamples(20))
        .withHedge(Hedge.after(Duration.ofMillis(250)))
        .withListener(listener);
    QuellOpenTelemetry.bind(pricing, otel);
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(value(m, "quell.attempt.p95")).as("no samples, no p95").isEmpty();
    assertThat(the(m, "quell.attempt.ceiling", "quell.policy", "pricing")).isEqualTo(2.0);
    assertThat(the(m, "quell.hedge.delay", "quell.policy", "pricing")).isEqualTo(0.25);
    for (int i = 0; i < 40; i++) {
      pricing.execute(() -> {
        time.sleep(Duration.ofMillis(40).toNanos());
        return "ok";
      });
    }
    var stats = pricing.timing().orElseThrow();
    m = reader.collectAllMetrics();
    assertThat(the(m, "quell.attempt.p95", "quell.policy", "pricing")).isEqualTo(stats.p95().orElseThrow().toNanos() / 1e9)
        .isBetween(0.038, 0.042);
    assertThat(the(m, "quell.attempt.ceiling", "quell.policy", "pricing"))
        .isEqualTo(stats.attemptCeiling().orElseThrow().toNanos() / 1e9).isLessThan(2.0);
    assertThat(m.stream().filter(d -> d.getName().equals("quell.attempt.p95")).findFirst().orElseThrow().getUnit())
        .isEqualTo("s");
  }

  @Test
  void aPolicySeenAtItsFirstCallIsReportedAndACollectedOneIsNot() {
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withBreaker(TRIPS_AFTER_FOUR).withLimiter(Limiter.concurrency(4)).withListener(listener);
    assertThat(points(reader.collectAllMetrics(), "quell.breaker.state")).isEmpty();
    ((CallObserver) listener).policyCalled(inventory); // what the core does after each call's end
    ((CallObserver) listener).policyCalled(inventory);
    Collection<MetricData> m = reader.collectAllMetrics();
    assertThat(points(m, "quell.breaker.state", "quell.policy", "inventory")).hasSize(4);
    assertThat(points(m, "quell.limiter.limit")).hasSize(1);

    OtelBinding binding = OtelBinding.of(otel);
    binding.breakers().simulateCollected(inventory.breaker().orElseThrow());
    binding.limiters().simulateCollected(inventory.limiters().get(0));
    m = reader.collectAllMetrics(); // the collection itself forgets what the GC reported
    assertThat(points(m, "quell.breaker.state")).isEmpty();
    assertThat(points(m, "quell.breaker.transitions")).isEmpty();
    assertThat(points(m, "quell.limiter.limit")).isEmpty();
    assertThat(binding.breakers().watched()).isZero();
  }

  @Test
  void breakersOfOneNameReportCountersThatNeverGoBackwards() {
    CircuitBreaker old = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT, time);
    CircuitBreaker rebuilt = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT, time);
    QuellOpenTelemetry.bindBreaker(old, otel);
    QuellOpenTelemetry.bindBreaker(rebuilt, otel);
    old.isolate();
    rebuilt.isolate();
    assertThat(the(reader.collectAllMetrics(), "quell.breaker.transitions", "state", "ISOLATED")).isEqualTo(2);
    OtelBinding.of(otel).breakers().simulateCollected(old);
    assertThat(the(reader.collectAllMetrics(), "quell.breaker.transitions", "state", "ISOLATED")).isEqualTo(2);
    rebuilt.reset();
    rebuilt.isolate();
    assertThat(the(reader.collectAllMetrics(), "quell.breaker.transitions", "state", "ISOLATED")).isEqualTo(3);
  }
}
