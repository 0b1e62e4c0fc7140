package dev.quell.errorprone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.quell.CircuitBreaker;
import dev.quell.Hedge;
import dev.quell.Limiter;
import dev.quell.MeasuredTiming;
import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.RetryBudget;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;

/**
 * Each configuration QuellInvalidConfiguration reports is also built here, at run time, by the real
 * library: it must throw, and the diagnostic must carry every problem the library names, word for word.
 * If the library's rules or messages change, this test says which case drifted.
 */
class SameWordsAsTheLibraryTest {
  private record Case(String source, Callable<?> build) {}

  @SuppressWarnings("NullAway") // a null the library must refuse is the point of several cases
  private static final List<Case> CASES = List.of(
      new Case("CircuitBreaker.Config.DEFAULT.withFailureRate(50)", () -> CircuitBreaker.Config.DEFAULT.withFailureRate(50)),
      new Case("CircuitBreaker.Config.DEFAULT.withMinimumCalls(0)", () -> CircuitBreaker.Config.DEFAULT.withMinimumCalls(0)),
      new Case("CircuitBreaker.Config.DEFAULT.withWindow(Duration.ofNanos(500_000))",
          () -> CircuitBreaker.Config.DEFAULT.withWindow(Duration.ofNanos(500_000))),
      new Case("CircuitBreaker.Config.DEFAULT.withWindow(null)", () -> CircuitBreaker.Config.DEFAULT.withWindow(null)),
      new Case("CircuitBreaker.Config.DEFAULT.withConsecutiveFailures(-1)",
          () -> CircuitBreaker.Config.DEFAULT.withConsecutiveFailures(-1)),
      new Case("CircuitBreaker.Config.DEFAULT.withSlowCalls(Duration.ZERO, 2)",
          () -> CircuitBreaker.Config.DEFAULT.withSlowCalls(Duration.ZERO, 2)),
      new Case("CircuitBreaker.Config.DEFAULT.withProbes(0)", () -> CircuitBreaker.Config.DEFAULT.withProbes(0)),
      new Case("CircuitBreaker.Config.DEFAULT.withProbeSuccesses(0)", () -> CircuitBreaker.Config.DEFAULT.withProbeSuccesses(0)),
      new Case("CircuitBreaker.Config.DEFAULT.withBreakDuration(Duration.ZERO)",
          () -> CircuitBreaker.Config.DEFAULT.withBreakDuration(Duration.ZERO)),
      new Case("CircuitBreaker.of(\"b\", CircuitBreaker.Config.DEFAULT.withMaxBreakDuration(Duration.ofSeconds(1)))",
          () -> CircuitBreaker.of("b", CircuitBreaker.Config.DEFAULT.withMaxBreakDuration(Duration.ofSeconds(1)))),
      new Case("CircuitBreaker.Config.DEFAULT.withRamp(Duration.ofMillis(-1))",
          () -> CircuitBreaker.Config.DEFAULT.withRamp(Duration.ofMillis(-1))),
      new Case("CircuitBreaker.Config.DEFAULT.with(s -> s.failureRate(0).probes(2000))",
          () -> CircuitBreaker.Config.DEFAULT.with(s -> s.failureRate(0).probes(2000))),
      new Case("Limiter.rate(0, 0)", () -> Limiter.rate(0, 0)),
      new Case("Limiter.rate(2e9, 1)", () -> Limiter.rate(2e9, 1)),
      new Case("Limiter.rate(1e-9, 10)", () -> Limiter.rate(1e-9, 10)),
      new Case("Limiter.rate(100, 10, Duration.ofSeconds(-1))", () -> Limiter.rate(100, 10, Duration.ofSeconds(-1))),
      new Case("Limiter.rate(100, 10, (dev.quell.TimeSource) null)", () -> Limiter.rate(100, 10, (dev.quell.TimeSource) null)),
      new Case("Limiter.concurrency(0, Duration.ofMillis(-1))", () -> Limiter.concurrency(0, Duration.ofMillis(-1))),
      new Case("Limiter.concurrency(Integer.MAX_VALUE)", () -> Limiter.concurrency(Integer.MAX_VALUE)),
      new Case("Limiter.adaptive(null)", () -> Limiter.adaptive(null)),
      new Case("Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT.withMaxLimit(3))",
          () -> Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT.withMaxLimit(3))),
      new Case("Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT.withInitialLimit(3000))",
          () -> Limiter.adaptive(Limiter.AdaptiveConfig.DEFAULT.withInitialLimit(3000))),
      new Case("Limiter.adaptive(Limiter.AdaptiveConfig.loss().withInitialLimit(300))",
          () -> Limiter.adaptive(Limiter.AdaptiveConfig.loss().withInitialLimit(300))),
      new Case("Limiter.AdaptiveConfig.DEFAULT.withMinLimit(0)", () -> Limiter.AdaptiveConfig.DEFAULT.withMinLimit(0)),
      new Case("Limiter.AdaptiveConfig.DEFAULT.withBackoffRatio(0.4)", () -> Limiter.AdaptiveConfig.DEFAULT.withBackoffRatio(0.4)),
      new Case("Limiter.AdaptiveConfig.DEFAULT.withTolerance(101)", () -> Limiter.AdaptiveConfig.DEFAULT.withTolerance(101)),
      new Case("Limiter.AdaptiveConfig.DEFAULT.withSmoothing(Double.NaN)",
          () -> Limiter.AdaptiveConfig.DEFAULT.withSmoothing(Double.NaN)),
      new Case("Limiter.AdaptiveConfig.DEFAULT.withLongWindow(2_000_000)",
          () -> Limiter.AdaptiveConfig.DEFAULT.withLongWindow(2_000_000)),
      new Case("Limiter.AdaptiveConfig.DEFAULT.withMode(null)", () -> Limiter.AdaptiveConfig.DEFAULT.withMode(null)),
      new Case("Hedge.after(Duration.ofMillis(-10))", () -> Hedge.after(Duration.ofMillis(-10))),
      new Case("Hedge.maxExtraLoad(0)", () -> Hedge.maxExtraLoad(0)),
      new Case("Hedge.after(Duration.ZERO).withMaxHedges(0)", () -> Hedge.after(Duration.ZERO).withMaxHedges(0)),
      new Case("Hedge.maxExtraLoad(0.05).withFloor(Duration.ofSeconds(-1))",
          () -> Hedge.maxExtraLoad(0.05).withFloor(Duration.ofSeconds(-1))),
      new Case("MeasuredTiming.multipleOfP95(0.5)", () -> MeasuredTiming.multipleOfP95(0.5)),
      new Case("MeasuredTiming.multipleOfP95(3).withFloor(Duration.ZERO)", () -> MeasuredTiming.multipleOfP95(3).withFloor(Duration.ZERO)),
      new Case("MeasuredTiming.multipleOfP95(3).withWindow(Duration.ofHours(2))",
          () -> MeasuredTiming.multipleOfP95(3).withWindow(Duration.ofHours(2))),
      new Case("MeasuredTiming.multipleOfP95(3).withMinSamples(0)", () -> MeasuredTiming.multipleOfP95(3).withMinSamples(0)),
      new Case("RetryBudget.concurrent(0, 2_000_000)", () -> RetryBudget.concurrent(0, 2_000_000)),
      new Case("Resilience.DEFAULT.with(s -> s.deadline(null))", () -> Resilience.DEFAULT.with(s -> s.deadline(null))),
      new Case("Resilience.DEFAULT.withAttemptTimeout(null)", () -> Resilience.DEFAULT.withAttemptTimeout(null)),
      new Case("Resilience.NONE.withHedge(Hedge.after(Duration.ofMillis(20)))",
          () -> Resilience.NONE.withHedge(Hedge.after(Duration.ofMillis(20)))),
      new Case("Resilience.DEFAULT.withHedge(Hedge.maxExtraLoad(0.05).withMaxHedges(2).withRetries(true)).withAttempts(1)",
          () -> Resilience.DEFAULT.withHedge(Hedge.maxExtraLoad(0.05).withMaxHedges(2).withRetries(true)).withAttempts(1)));

  @Test
  void everyDiagnosticCarriesEveryProblemTheLibraryNames() {
    StringBuilder source = new StringBuilder("""
        import dev.quell.*;
        import java.time.Duration;
        class Cases {
        """);
    int firstLine = 4;
    for (int i = 0; i < CASES.size(); i++) {
      source.append("  static final Object C").append(i).append(" = ").append(CASES.get(i).source()).append(";\n");
    }
    source.append("}\n");

    List<PluginCompiler.Finding> findings = PluginCompiler.quellFindings(Map.of("Cases.java", source.toString()));

    for (int i = 0; i < CASES.size(); i++) {
      Case c = CASES.get(i);
      Throwable thrown = catchThrowable(c.build()::call);
      assertThat(thrown).as("the library refuses %s", c.source()).isInstanceOf(ResilienceConfigurationException.class);
      long line = firstLine + i;
      List<PluginCompiler.Finding> here = findings.stream().filter(f -> f.line() == line).toList();
      assertThat(here).as("one diagnostic for %s", c.source()).singleElement()
          .satisfies(f -> assertThat(f.check()).isEqualTo("QuellInvalidConfiguration"));
      for (String problem : ((ResilienceConfigurationException) thrown).problems()) {
        assertThat(here.get(0).message()).as("%s names what the library names", c.source()).contains(problem);
      }
    }
  }
}
