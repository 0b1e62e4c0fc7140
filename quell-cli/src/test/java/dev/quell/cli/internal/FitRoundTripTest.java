package dev.quell.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.sim.Dependency;
import dev.quell.sim.Incident;
import dev.quell.sim.Load;
import dev.quell.sim.Simulate;
import dev.quell.sim.SimulationReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23, {@code quell fit}'s round trip: simulate a dependency whose parameters are known, write
 * its calls as an access log would (the simulator's {@code CallLog}, as CSV), fit them, and get the
 * parameters back within stated tolerances — the load within 1%, the healthy p50 within 3% and p99
 * within 10%, the error rate within 0.3 points, each incident's kind exactly, its start and end within
 * 2 s and its severity within 10% (brownout) or 5 points (failing) — and a scenario that the
 * simulator runs to the original's availability within a point.
 */
class FitRoundTripTest {
  /** Every call answered as it comes (one attempt, no deadline): what a call took is what the dependency took. */
  private static final Resilience ONE_ATTEMPT = Resilience.DEFAULT.withName("one").withAttempts(1).withoutDeadline()
      .withoutAttemptTimeout().withBudget(RetryBudget.NONE);
  private static final Dependency KNOWN = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
      .named("inventory")
      .errorRate(0.01)
      .incident(Incident.brownout(4).between(Duration.ofSeconds(60), Duration.ofSeconds(120)))
      .incident(Incident.failing(0.5).between(Duration.ofSeconds(180), Duration.ofSeconds(210)))
      .incident(Incident.outage().between(Duration.ofSeconds(240), Duration.ofSeconds(260)));

  @TempDir
  static Path dir;
  static Path csv;
  static SimulationReport original;

  @BeforeAll
  static void recordTheKnownDependency() throws IOException {
    StringBuilder out = new StringBuilder("timestamp,latency_ms,outcome\n");
    Instant base = Instant.parse("2026-12-01T10:00:00Z");
    original = Simulate.policy(ONE_ATTEMPT).against(KNOWN).under(Load.perSecond(200))
        .lasting(Duration.ofMinutes(5))
        .run(7, (started, elapsed, reason) -> out.append(base.plusNanos(started)).append(',')
            .append(String.format(Locale.ROOT, "%.3f", elapsed / 1e6)).append(',')
            .append(reason == StopReason.SUCCEEDED ? "ok" : "error").append('\n'));
    csv = dir.resolve("inventory.csv");
    Files.writeString(csv, out);
  }

  @Test
  void theFitRecoversTheKnownParameters() {
    Fit.Model m = Fit.of(new CsvTelemetry().read(csv), "inventory.csv");

    assertThat(m.perSecond()).isCloseTo(200, within(2.0));
    assertThat(m.seconds()).isEqualTo(300);
    assertThat(m.p50Millis()).isCloseTo(20, within(0.6));
    assertThat(m.p99Millis()).isCloseTo(100, within(10.0));
    assertThat(m.errorRate()).isCloseTo(0.01, within(0.003));
    assertThat(m.incidents()).extracting(Fit.Incident::kind).containsExactly("brownout", "failing", "outage");
    Fit.Incident brownout = m.incidents().get(0);
    assertThat(brownout.from()).isCloseTo(60, within(2));
    assertThat(brownout.to()).isCloseTo(120, within(2));
    assertThat(brownout.severity()).isCloseTo(4, within(0.4));
    Fit.Incident failing = m.incidents().get(1);
    assertThat(failing.from()).isCloseTo(180, within(2));
    assertThat(failing.to()).isCloseTo(210, within(2));
    assertThat(failing.severity()).isCloseTo(0.5, within(0.05));
    Fit.Incident outage = m.incidents().get(2);
    assertThat(outage.from()).isCloseTo(240, within(2));
    assertThat(outage.to()).isCloseTo(260, within(2));
    // and it says how well the lognormal fits: here it is the simulator's own lognormal, so closely
    assertThat(m.quality()).hasSize(6);
    assertThat(m.fitted(1.2816)).isCloseTo(m.measuredP90(), within(m.measuredP90() * 0.05));
  }

  @Test
  void theFittedScenarioRunsAsTheOriginalDid() {
    Fit.Model m = Fit.of(new CsvTelemetry().read(csv), "inventory.csv");
    ScenarioFile file = ScenarioFile.parse(m.yaml("inventory"), "inventory", "fitted");
    SimulationReport again = Simulate.policy(ONE_ATTEMPT)
        .against(file.scenario().arms().get(0).simulation().target())
        .under(file.scenario().arms().get(0).simulation().load())
        .lasting(file.scenario().arms().get(0).simulation().duration())
        .run(7);
    assertThat(again.availability()).isCloseTo(original.availability(), within(0.01));
    assertThat(again.latency().p50().toNanos() / 1e6).isCloseTo(original.latency().p50().toNanos() / 1e6,
        within(original.latency().p50().toNanos() / 1e6 * 0.05));
  }

  @Test
  void theCommandWritesAScenarioTheSimulatorAccepts() throws Exception {
    Path yaml = dir.resolve("fitted.yaml");
    java.io.StringWriter out = new java.io.StringWriter();
    java.io.StringWriter err = new java.io.StringWriter();
    var cl = dev.quell.cli.Quell.commandLine();
    cl.setOut(new java.io.PrintWriter(out, true));
    cl.setErr(new java.io.PrintWriter(err, true));
    int code = cl.execute("fit", csv.toString(), "--out", yaml.toString());

    assertThat(code).as(err.toString()).isZero();
    assertThat(out.toString()).contains("calls over 5:00 from inventory.csv", "3 incidents:",
        "brownout from 1:00 to 2:00", "How well the model fits", "p99.9", "Scenario: " + yaml.toAbsolutePath());
    assertThat(Files.readString(yaml)).contains("name: inventory", "p50: ", "incidents:", "- {outage: true, from: ");
    cl.setOut(new java.io.PrintWriter(new java.io.StringWriter(), true));
    assertThat(cl.execute("simulate", "--scenario", yaml.toString(), "--no-chart")).isZero();
  }

  /** Runs {@code quell args}, returning standard output; fails on a non-zero exit code. */
  private static String quell(String... args) {
    java.io.StringWriter out = new java.io.StringWriter();
    java.io.StringWriter err = new java.io.StringWriter();
    var cl = dev.quell.cli.Quell.commandLine();
    cl.setOut(new java.io.PrintWriter(out, true));
    cl.setErr(new java.io.PrintWriter(err, true));
    assertThat(cl.execute(args)).as(err.toString()).isZero();
    return out.toString();
  }

  @Test
  void docsSimulationShowsTheRoundTripAsItRuns(@TempDir Path here) throws IOException {
    // the page's two commands, with the page's file names
    Path calls = here.resolve("calls.csv");
    Path fitted = here.resolve("fitted.yaml");
    quell("simulate", "--scenario", "known-dependency", "--calls", calls.toString(), "--no-chart");
    String report = quell("fit", calls.toString(), "--out", fitted.toString());

    String page = Files.readString(Path.of("..", "docs", "simulation.md"));
    String shown = report.replace("--scenario " + fitted, "--scenario fitted.yaml")
        .replace(fitted.toAbsolutePath().toString(), "/home/you/quell/fitted.yaml");
    // messages of their own: the page is too long to print
    assertThat(page.contains(shown)).as("docs/simulation.md shows quell fit's report as it is now:%n%s", shown)
        .isTrue();
    String yaml = Files.readString(fitted);
    assertThat(page.contains(yaml)).as("docs/simulation.md shows the fitted scenario as it is now:%n%s", yaml)
        .isTrue();
  }

  @Test
  void inputItCannotUseIsOneLineNamingTheLineAndField() throws IOException {
    Path bad = dir.resolve("bad.csv");
    Files.writeString(bad, "timestamp,latency_ms,outcome\n1764583200.0,12.5,ok\n1764583200.1,fast,ok\n");
    assertThatThrownBy(() -> new CsvTelemetry().read(bad)).isInstanceOf(ScenarioException.class)
        .hasMessage("bad.csv line 3: latency must be milliseconds from 0 to a day, as a number, was \"fast\"");
    Files.writeString(bad, "timestamp,latency,outcome\n2026-12-01T10:00:00Z,12ms,maybe\n");
    assertThatThrownBy(() -> new CsvTelemetry().read(bad))
        .hasMessage("bad.csv line 2: outcome must be ok, success, error, failure, timeout, true, false or an HTTP"
            + " status, was \"maybe\"");
    Files.writeString(bad, "when,latency,outcome\n");
    assertThatThrownBy(() -> new CsvTelemetry().read(bad)).hasMessageStartingWith("bad.csv line 1: the header must"
        + " name the columns timestamp, latency (or latency_ms) and outcome (or status); it has when, latency,"
        + " outcome");
    Files.writeString(bad, "timestamp,latency,outcome\nyesterday,12ms,ok\n");
    assertThatThrownBy(() -> new CsvTelemetry().read(bad)).hasMessageStartingWith("bad.csv line 2: timestamp must be");
    Files.writeString(bad, "timestamp,latency,outcome\n2026-12-01T10:00:00Z,12ms,200\n2026-12-01T10:00:01Z,9ms,503\n");
    assertThat(new CsvTelemetry().read(bad)).extracting(Telemetry.Sample::succeeded).containsExactly(true, false);
    assertThatThrownBy(() -> Fit.of(new CsvTelemetry().read(bad), "bad.csv"))
        .hasMessage("bad.csv has 2 calls; fitting needs at least 100");
  }

  @Test
  void theCommandRefusesWhatItCannotUseInOneLineWithExitCodeTwo() throws IOException {
    Path bad = dir.resolve("access.csv");
    Files.writeString(bad, "timestamp,latency_ms,outcome\n1764583200.0,12.5,ok\n1764583200.1,fast,ok\n");
    for (String[] args : new String[][] {
        {"fit", bad.toString()},
        {"fit", bad.toString(), "--format", "jfr"},
        {"fit", dir.resolve("missing.csv").toString()},
        {"fit", bad.toString(), "--out", "report.txt"}}) {
      java.io.StringWriter out = new java.io.StringWriter();
      java.io.StringWriter err = new java.io.StringWriter();
      var cl = dev.quell.cli.Quell.commandLine();
      cl.setOut(new java.io.PrintWriter(out, true));
      cl.setErr(new java.io.PrintWriter(err, true));
      assertThat(cl.execute(args)).as(err.toString()).isEqualTo(2);
      assertThat(err.toString().strip().lines().count()).as(err.toString()).isEqualTo(1);
      assertThat(err.toString()).startsWith("quell fit: ").doesNotContain("Exception");
      assertThat(out.toString()).isEmpty();
    }
    java.io.StringWriter err = new java.io.StringWriter();
    var cl = dev.quell.cli.Quell.commandLine();
    cl.setErr(new java.io.PrintWriter(err, true));
    cl.execute("fit", bad.toString());
    assertThat(err.toString().strip())
        .isEqualTo("quell fit: access.csv line 3: latency must be milliseconds from 0 to a day, as a number, was \"fast\"");
  }
}
