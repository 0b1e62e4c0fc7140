package dev.quell.micrometer;

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
import dev.quell.internal.TelemetryNames;
import dev.quell.test.VirtualTime;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The meters of what a policy holds live — circuit breaker, limiters, measured timing — and of its
 * hedges, with exact values on a virtual clock.
 */
class LiveMetersTest {
  private final VirtualTime time = VirtualTime.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ResilienceListener listener = QuellMicrometer.listener(registry);

  /**
   * The listener as a plain {@link ResilienceListener}: the core then hands it event objects, which it
   * passes to its observer methods through {@code CallObservers.dispatch}. Hedge events reach the
   * observer methods this way whether or not the core calls them directly.
   */
  private final ResilienceListener viaEvents = listener::onEvent;

  private double state(String breaker, CircuitBreaker.State state) {
    Gauge g = registry.find(TelemetryNames.BREAKER_STATE).tag(TelemetryNames.TAG_BREAKER, breaker)
        .tag(TelemetryNames.TAG_STATE, state.name()).gauge();
    assertThat(g).as("state gauge %s of %s", state, breaker).isNotNull();
    return g.value();
  }

  private double transitions(String breaker, CircuitBreaker.State state) {
    FunctionCounter c = registry.find(TelemetryNames.BREAKER_TRANSITIONS).tag(TelemetryNames.TAG_BREAKER, breaker)
        .tag(TelemetryNames.TAG_STATE, state.name()).functionCounter();
    assertThat(c).as("transitions to %s of %s", state, breaker).isNotNull();
    return c.count();
  }

  private double refusals(String breaker) {
    return registry.find(TelemetryNames.BREAKER_REFUSALS).tag(TelemetryNames.TAG_BREAKER, breaker).functionCounter()
        .count();
  }

  private double gauge(String name, String tag, String value) {
    Gauge g = registry.find(name).tag(tag, value).gauge();
    assertThat(g).as("%s{%s=%s}", name, tag, value).isNotNull();
    return g.value();
  }

  private double rejections(String policy, StopReason reason) {
    var c = registry.find(TelemetryNames.REJECTIONS).tag(TelemetryNames.TAG_POLICY, policy)
        .tag(TelemetryNames.TAG_OUTCOME, reason.name()).counter();
    return c == null ? 0 : c.count();
  }

  private double hedges(String policy, String what) {
    var c = registry.find(TelemetryNames.HEDGES).tag(TelemetryNames.TAG_POLICY, policy)
        .tag(TelemetryNames.TAG_HEDGE, what).counter();
    return c == null ? 0 : c.count();
  }

  private static final CircuitBreaker.Config TRIPS_AFTER_FOUR = CircuitBreaker.Config.DEFAULT
      .withMinimumCalls(4).withFailureRate(0.5).withWindow(Duration.ofSeconds(10))
      .withBreakDuration(Duration.ofSeconds(4)).withRamp(Duration.ZERO);

  @Test
  void aBreakersStateTransitionsAndRefusalsAreExportedExactlyManualMovesIncluded() {
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withBreaker(TRIPS_AFTER_FOUR).withListener(listener);
    QuellMicrometer.bind(inventory, registry);
    CircuitBreaker breaker = inventory.breaker().orElseThrow();

    assertThat(state("inventory", CircuitBreaker.State.CLOSED)).isEqualTo(1);
    assertThat(state("inventory", CircuitBreaker.State.OPEN)).isZero();
    for (int i = 0; i < 4; i++) {
      inventory.run(() -> {
        throw new IOException("down");
      });
    }
    assertThat(gauge(TelemetryNames.BREAKER_FAILURE_RATE, TelemetryNames.TAG_BREAKER, "inventory")).isEqualTo(1.0);
    assertThat(state("inventory", CircuitBreaker.State.OPEN)).isEqualTo(1);
    assertThat(state("inventory", CircuitBreaker.State.CLOSED)).isZero();
    assertThat(transitions("inventory", CircuitBreaker.State.OPEN)).isEqualTo(1);

    for (int i = 0; i < 3; i++) {
      assertThat(inventory.run(() -> "ok").stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    }
    assertThat(refusals("inventory")).isEqualTo(3);
    assertThat(rejections("inventory", StopReason.DEPENDENCY_UNAVAILABLE)).isEqualTo(3);

    time.advance(Duration.ofSeconds(4)); // the whole break, whatever the jitter drew
    assertThat(inventory.run(() -> "ok").stopReason()).isEqualTo(StopReason.SUCCEEDED); // the probe
    assertThat(transitions("inventory", CircuitBreaker.State.HALF_OPEN)).isEqualTo(1);
    assertThat(transitions("inventory", CircuitBreaker.State.CLOSED)).isEqualTo(1);
    assertThat(state("inventory", CircuitBreaker.State.CLOSED)).isEqualTo(1);

    breaker.isolate(); // by hand: no call sees it, the meters do
    assertThat(state("inventory", CircuitBreaker.State.ISOLATED)).isEqualTo(1);
    assertThat(transitions("inventory", CircuitBreaker.State.ISOLATED)).isEqualTo(1);
    assertThat(inventory.run(() -> "ok").stopReason()).isEqualTo(StopReason.DEPENDENCY_UNAVAILABLE);
    breaker.reset();
    assertThat(state("inventory", CircuitBreaker.State.CLOSED)).isEqualTo(1);
    assertThat(state("inventory", CircuitBreaker.State.ISOLATED)).isZero();
    assertThat(transitions("inventory", CircuitBreaker.State.CLOSED)).isEqualTo(2);
    assertThat(refusals("inventory")).isEqualTo(4);
    assertThat(rejections("inventory", StopReason.DEPENDENCY_UNAVAILABLE)).isEqualTo(4);
    assertThat(gauge(TelemetryNames.BREAKER_FAILURE_RATE, TelemetryNames.TAG_BREAKER, "inventory")).isZero();

    // the policy owns its breaker (built from a Config, named after it): tagged with the policy
    assertThat(registry.find(TelemetryNames.BREAKER_REFUSALS).tag(TelemetryNames.TAG_POLICY, "inventory")
        .functionCounter()).isNotNull();
    // one gauge per state, one counter per target state, refusals, failure rate
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).gauges()).hasSize(4);
    assertThat(registry.find(TelemetryNames.BREAKER_TRANSITIONS).functionCounters()).hasSize(4);
  }

  @Test
  void aSharedBreakerIsTaggedWithoutAPolicyAndCountedOnceForAllItsPolicies() {
    CircuitBreaker shared = CircuitBreaker.of("payments-api", TRIPS_AFTER_FOUR, time);
    Resilience charge = Resilience.DEFAULT.withName("charge").withAttempts(1).withTimeSource(time)
        .withBreaker(shared).withListener(listener);
    Resilience refund = Resilience.DEFAULT.withName("refund").withAttempts(1).withTimeSource(time)
        .withBreaker(shared).withListener(listener);
    QuellMicrometer.bind(charge, registry);
    QuellMicrometer.bind(refund, registry);
    for (int i = 0; i < 2; i++) {
      charge.run(() -> {
        throw new IOException("down");
      });
      refund.run(() -> {
        throw new IOException("down");
      });
    }
    charge.run(() -> "refused");
    refund.run(() -> "refused");
    refund.run(() -> "refused");
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).gauges()).hasSize(4);
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).tag(TelemetryNames.TAG_POLICY, "").gauges()).hasSize(4);
    assertThat(transitions("payments-api", CircuitBreaker.State.OPEN)).isEqualTo(1);
    assertThat(refusals("payments-api")).isEqualTo(3);
    assertThat(rejections("charge", StopReason.DEPENDENCY_UNAVAILABLE)).isEqualTo(1);
    assertThat(rejections("refund", StopReason.DEPENDENCY_UNAVAILABLE)).isEqualTo(2);
  }

  @Test
  void anAdaptiveThrottlesRejectionProbabilityIsAGauge() {
    Limiter throttle = Limiter.throttle(1.1, Duration.ofSeconds(10), time);
    Resilience api = Resilience.DEFAULT.withName("api").withAttempts(1).withTimeSource(time).withLimiter(throttle)
        .withClassifier((result, failure) -> failure != null ? dev.quell.Verdict.THROTTLED : dev.quell.Verdict.OK);
    QuellMicrometer.bind(api, registry);
    assertThat(gauge(TelemetryNames.LIMITER_REJECTION_PROBABILITY, TelemetryNames.TAG_LIMITER, throttle.name()))
        .isZero();
    for (int i = 0; i < 40; i++) {
      // the dependency pushes back on every request
      api.executeAsync(() -> CompletableFuture.<String>failedFuture(new IOException("429")));
      time.runUntilIdle(Duration.ofMillis(200));
    }
    double p = gauge(TelemetryNames.LIMITER_REJECTION_PROBABILITY, TelemetryNames.TAG_LIMITER, throttle.name());
    assertThat(p).isGreaterThan(0.5).isEqualTo(throttle.rejectionProbability());
    assertThat(registry.find(TelemetryNames.LIMITER_REJECTION_PROBABILITY).tag(TelemetryNames.TAG_KIND, "throttle")
        .gauge()).isNotNull();
  }

  @Test
  void limiterGaugesShowLimitInFlightAvailableAndQueued() {
    Limiter bulkhead = Limiter.concurrency(2, Duration.ofSeconds(1));
    Limiter rate = Limiter.rate(10, 5, time);
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withLimiter(rate).withLimiter(bulkhead).withListener(listener);
    QuellMicrometer.bind(inventory, registry);

    assertThat(gauge(TelemetryNames.LIMITER_LIMIT, TelemetryNames.TAG_LIMITER, bulkhead.name())).isEqualTo(2);
    assertThat(gauge(TelemetryNames.LIMITER_LIMIT, TelemetryNames.TAG_LIMITER, rate.name())).isEqualTo(5);
    assertThat(gauge(TelemetryNames.LIMITER_AVAILABLE, TelemetryNames.TAG_LIMITER, rate.name())).isEqualTo(5);

    // three calls whose futures stay open: two hold the bulkhead, the third queues for it
    CompletableFuture<String> open = new CompletableFuture<>();
    CompletableFuture<String> a = inventory.executeAsync(() -> open);
    CompletableFuture<String> b = inventory.executeAsync(() -> open);
    CompletableFuture<String> c = inventory.executeAsync(() -> open);
    assertThat(gauge(TelemetryNames.LIMITER_IN_FLIGHT, TelemetryNames.TAG_LIMITER, bulkhead.name())).isEqualTo(2);
    assertThat(gauge(TelemetryNames.LIMITER_QUEUED, TelemetryNames.TAG_LIMITER, bulkhead.name())).isEqualTo(1);
    assertThat(gauge(TelemetryNames.LIMITER_AVAILABLE, TelemetryNames.TAG_LIMITER, bulkhead.name())).isZero();
    assertThat(gauge(TelemetryNames.LIMITER_AVAILABLE, TelemetryNames.TAG_LIMITER, rate.name())).isEqualTo(2);

    open.complete("ok");
    time.runUntilIdle(Duration.ofSeconds(5));
    assertThat(a).isCompletedWithValue("ok");
    assertThat(b).isCompletedWithValue("ok");
    assertThat(c).isCompletedWithValue("ok");
    assertThat(gauge(TelemetryNames.LIMITER_IN_FLIGHT, TelemetryNames.TAG_LIMITER, bulkhead.name())).isZero();
    assertThat(gauge(TelemetryNames.LIMITER_QUEUED, TelemetryNames.TAG_LIMITER, bulkhead.name())).isZero();
    assertThat(gauge(TelemetryNames.LIMITER_AVAILABLE, TelemetryNames.TAG_LIMITER, bulkhead.name())).isEqualTo(2);
    // shared limiters carry no policy, and their kind
    assertThat(registry.find(TelemetryNames.LIMITER_LIMIT).tag(TelemetryNames.TAG_LIMITER, rate.name())
        .tag(TelemetryNames.TAG_KIND, "rate").tag(TelemetryNames.TAG_POLICY, "").gauge()).isNotNull();
    assertThat(registry.find(TelemetryNames.LIMITER_LIMIT).tag(TelemetryNames.TAG_LIMITER, bulkhead.name())
        .tag(TelemetryNames.TAG_KIND, "concurrency").gauge()).isNotNull();
  }

  @Test
  void aRefusalByALimiterIsARejection() {
    Limiter rate = Limiter.rate(1, 2, time);
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withAttempts(1).withTimeSource(time)
        .withLimiter(rate).withListener(listener);
    int limited = 0;
    for (int i = 0; i < 5; i++) {
      if (inventory.run(() -> "ok").stopReason() == StopReason.LIMITED) {
        limited++;
      }
    }
    assertThat(limited).isPositive();
    assertThat(rejections("inventory", StopReason.LIMITED)).isEqualTo(limited);
    assertThat(registry.find(TelemetryNames.CALLS).tag(TelemetryNames.TAG_OUTCOME, "LIMITED").counter().count())
        .isEqualTo(limited);
  }

  /** Each attempt answers "attempt N" after the next of {@code latencies}, on the virtual clock. */
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
  void hedgesAreCountedByWhatHappened() {
    Resilience search = Resilience.DEFAULT.withName("search").withTimeSource(time).withBackoff(Backoff.NONE)
        .withBudget(RetryBudget.of(0.1, 1, time)).withHedge(Hedge.after(Duration.ofMillis(100)))
        .withListener(viaEvents);
    // the primary is slow, the hedge answers first: started, won, and the primary discarded
    CompletableFuture<String> won = search.executeAsync(answersAfter(Duration.ofSeconds(1), Duration.ofMillis(50)));
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(won).isCompletedWithValue("attempt 2");
    assertThat(hedges("search", "started")).isEqualTo(1);
    assertThat(hedges("search", "won")).isEqualTo(1);
    assertThat(hedges("search", "discarded")).isEqualTo(1);
    assertThat(hedges("search", "suppressed")).isZero();

    // the primary answers first: the hedge is discarded and nothing is won
    CompletableFuture<String> primary =
        search.executeAsync(answersAfter(Duration.ofMillis(150), Duration.ofSeconds(1)));
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(primary).isCompletedWithValue("attempt 1");
    assertThat(hedges("search", "started")).isEqualTo(2);
    assertThat(hedges("search", "won")).isEqualTo(1);
    assertThat(hedges("search", "discarded")).isEqualTo(2);

    // the budget is dry: the hedge is suppressed and the call goes on
    while (search.budget().trySpend()) {
      // empty it
    }
    CompletableFuture<String> alone = search.executeAsync(answersAfter(Duration.ofSeconds(1)));
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(alone).isCompletedWithValue("attempt 1");
    assertThat(hedges("search", "suppressed")).isEqualTo(1);
    assertThat(hedges("search", "started")).isEqualTo(2);
    // hedges also count as attempts of kind "hedge"
    assertThat(registry.find(TelemetryNames.ATTEMPTS).tag(TelemetryNames.TAG_KIND, "hedge").counter().count())
        .isEqualTo(2);
  }

  @Test
  void hedgesReachTheObserverMethodsAsTheCoreCallsThem() {
    // what the core's direct call does (CallObserver.hedged), without an event object
    CallObserver observer = (CallObserver) listener;
    RetryBudget budget = RetryBudget.NONE;
    observer.hedged("direct", budget, dev.quell.Criticality.CRITICAL, dev.quell.ResilienceEvent.Type.HEDGE_STARTED, 2);
    observer.hedged("direct", budget, dev.quell.Criticality.CRITICAL, dev.quell.ResilienceEvent.Type.HEDGE_WON, 2);
    observer.hedged("direct", budget, dev.quell.Criticality.CRITICAL, dev.quell.ResilienceEvent.Type.HEDGE_SUPPRESSED, 2);
    observer.hedged("direct", budget, dev.quell.Criticality.CRITICAL, dev.quell.ResilienceEvent.Type.RETRYING, 2);
    assertThat(hedges("direct", "started")).isEqualTo(1);
    assertThat(hedges("direct", "won")).isEqualTo(1);
    assertThat(hedges("direct", "suppressed")).isEqualTo(1);
    assertThat(registry.find(TelemetryNames.HEDGES).counters()).hasSize(3);
  }

  @Test
  void measuredTimingGaugesReadThePolicysOwnFigures() throws Exception {
    Resilience pricing = Resilience.DEFAULT.withName("pricing").withTimeSource(time)
        .withAttemptTimeout(Duration.ofSeconds(2))
        .withMeasuredTiming(MeasuredTiming.multipleOfP95(3).withMinSamples(20).withFloor(Duration.ofMillis(50)))
        .withListener(listener);
    QuellMicrometer.bind(pricing, registry);
    // before any sample: no p95, the configured ceiling
    assertThat(gauge(TelemetryNames.ATTEMPT_P95, TelemetryNames.TAG_POLICY, "pricing")).isNaN();
    assertThat(gauge(TelemetryNames.ATTEMPT_CEILING, TelemetryNames.TAG_POLICY, "pricing")).isEqualTo(2.0);
    assertThat(registry.find(TelemetryNames.HEDGE_DELAY).gauge()).as("no hedging, no hedge delay").isNull();

    for (int i = 0; i < 40; i++) {
      pricing.execute(() -> {
        time.sleep(Duration.ofMillis(40).toNanos());
        return "ok";
      });
    }
    var stats = pricing.timing().orElseThrow();
    double p95 = gauge(TelemetryNames.ATTEMPT_P95, TelemetryNames.TAG_POLICY, "pricing");
    assertThat(p95).isEqualTo(stats.p95().orElseThrow().toNanos() / 1e9);
    assertThat(p95).isBetween(0.038, 0.042); // the histogram's resolution around 40 ms
    assertThat(gauge(TelemetryNames.ATTEMPT_CEILING, TelemetryNames.TAG_POLICY, "pricing"))
        .isEqualTo(stats.attemptCeiling().orElseThrow().toNanos() / 1e9)
        .isLessThan(2.0); // measuring now: 3 × the p95
  }

  @Test
  void aPolicyThatMeasuresAndHedgesShowsItsHedgeDelay() {
    Resilience search = Resilience.DEFAULT.withName("search").withTimeSource(time)
        .withMeasuredTiming(MeasuredTiming.multipleOfP95(3))
        .withHedge(Hedge.after(Duration.ofMillis(120))).withListener(listener);
    QuellMicrometer.bind(search, registry);
    assertThat(gauge(TelemetryNames.HEDGE_DELAY, TelemetryNames.TAG_POLICY, "search")).isEqualTo(0.12);
    assertThat(registry.find(TelemetryNames.HEDGE_DELAY).gauge().getId().getBaseUnit()).isEqualTo("seconds");
  }

  @Test
  void aHedgeByExtraLoadFollowsTheMeasuredQuantile() throws Exception {
    Resilience search = Resilience.DEFAULT.withName("search").withTimeSource(time)
        .withHedge(Hedge.maxExtraLoad(0.05).withFloor(Duration.ofMillis(5))).withListener(listener);
    QuellMicrometer.bind(search, registry);
    for (int i = 0; i < 200; i++) {
      search.execute(() -> {
        time.sleep(Duration.ofMillis(30).toNanos());
        return "ok";
      });
    }
    var stats = search.timing().orElseThrow();
    assertThat(stats.hedgeDelay()).isPresent();
    assertThat(gauge(TelemetryNames.HEDGE_DELAY, TelemetryNames.TAG_POLICY, "search"))
        .isEqualTo(stats.hedgeDelay().orElseThrow().toNanos() / 1e9);
    assertThat(gauge(TelemetryNames.ATTEMPT_P95, TelemetryNames.TAG_POLICY, "search"))
        .isEqualTo(stats.p95().orElseThrow().toNanos() / 1e9);
    // no measured timing configured: the ceiling is the configured attempt timeout, or none
    assertThat(gauge(TelemetryNames.ATTEMPT_CEILING, TelemetryNames.TAG_POLICY, "search"))
        .isEqualTo(stats.attemptCeiling().map(d -> d.toNanos() / 1e9).orElse(Double.NaN));
  }

  @Test
  void aPolicySeenAtItsFirstCallGetsItsMetersOnce() {
    Resilience inventory = Resilience.DEFAULT.withName("inventory").withTimeSource(time)
        .withBreaker(TRIPS_AFTER_FOUR).withLimiter(Limiter.concurrency(4))
        .withHedge(Hedge.maxExtraLoad(0.05)).withListener(listener);
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).gauges()).isEmpty();
    CallObserver observer = (CallObserver) listener;
    for (int i = 0; i < 3; i++) {
      observer.policyCalled(inventory); // what the core does after each call's end
    }
    assertThat(registry.find(TelemetryNames.BREAKER_STATE).tag(TelemetryNames.TAG_POLICY, "inventory").gauges())
        .hasSize(4);
    assertThat(registry.find(TelemetryNames.LIMITER_LIMIT).gauges()).hasSize(1);
    assertThat(registry.find(TelemetryNames.HEDGE_DELAY).gauges()).hasSize(1);
    assertThat(registry.find(TelemetryNames.ATTEMPT_P95).gauges()).hasSize(1);
  }

  @Test
  void aPolicyThatHoldsNothingLiveGetsNoLiveMeters() {
    Resilience plain = Resilience.DEFAULT.withName("plain").withTimeSource(time).withListener(listener);
    ((CallObserver) listener).policyCalled(plain);
    QuellMicrometer.bind(plain, registry);
    assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getName()).startsWith("quell.budget."));
  }
}
