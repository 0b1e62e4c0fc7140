package dev.quell.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.sim.Dependency;
import dev.quell.sim.Incident;
import dev.quell.sim.Load;
import dev.quell.sim.Simulate;
import dev.quell.sim.SimulationReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import jdk.jfr.Recording;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23, {@code quell fit} from a JDK Flight Recorder recording: simulate a dependency whose
 * parameters are known under a policy that retries, with Quell's events recorded in-process as
 * {@code quell.jfc} would record them in production, fit the recording, and get the parameters back
 * within the tolerances the CSV round trip holds ({@link FitRoundTripTest}): the load within 1% (from
 * the call events, not the attempts, which retries inflate), the healthy p50 within 3% and p99 within
 * 10%, the error rate within 0.3 points, each incident's kind exactly, its start and end within 2 s
 * and its severity within 10% (brownout) or 5 points (failing).
 */
class JfrFitRoundTripTest {
  private static final Resilience RETRYING = Resilience.DEFAULT.withName("inventory").withAttempts(3)
      .withoutDeadline().withoutAttemptTimeout().withBudget(RetryBudget.AUTOMATIC);
  private static final Dependency KNOWN = Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
      .named("inventory")
      .errorRate(0.01)
      .incident(Incident.brownout(4).between(Duration.ofSeconds(60), Duration.ofSeconds(120)))
      .incident(Incident.failing(0.5).between(Duration.ofSeconds(180), Duration.ofSeconds(210)))
      .incident(Incident.outage().between(Duration.ofSeconds(240), Duration.ofSeconds(260)));

  @TempDir
  static Path dir;
  static Path jfr;
  static SimulationReport original;

  @BeforeAll
  static void recordTheKnownDependency() throws IOException {
    jfr = dir.resolve("inventory.jfr");
    try (Recording r = new Recording()) {
      r.enable("dev.quell.Attempt");
      r.enable("dev.quell.Call");
      r.start();
      original = Simulate.policy(RETRYING).against(KNOWN).under(Load.perSecond(200)).lasting(Duration.ofMinutes(5))
          .run(7);
      r.stop();
      r.dump(jfr);
    }
  }

  @Test
  void theFitRecoversTheKnownParametersFromTheEvents() {
    Telemetry.Recorded recorded = new JfrTelemetry(null).recorded(jfr);
    Fit.Model m = Fit.of(recorded, "inventory.jfr");

    assertThat(m.calls()).isEqualTo(original.calls());
    assertThat(m.requests()).as("retries and their attempts").isEqualTo(original.attempts())
        .isGreaterThan(m.calls());
    assertThat(m.perSecond()).isCloseTo(200, within(2.0));
    assertThat(m.seconds()).isBetween(300, 301);
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
  }

  @Test
  void theCommandFitsARecordingByItsName() throws Exception {
    Path yaml = dir.resolve("fitted.yaml");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    var cl = dev.quell.cli.Quell.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute("fit", jfr.toString(), "--out", yaml.toString());

    assertThat(code).as(err.toString()).isZero();
    assertThat(out.toString()).contains(" attempts) over 5:0", "from inventory.jfr", "3 incidents:",
        "brownout from 1:00 to 2:00", "How well the model fits");
    assertThat(Files.readString(yaml)).contains("name: inventory", "perSecond: 2", "- {outage: true, from: ");
  }

  @Test
  void docsJfrShowsTheRoundTripFromARecordingAsItRuns(@TempDir Path here) throws IOException {
    // the page's commands, the simulator recording itself in this process instead of under -XX:StartFlightRecording
    Path known = here.resolve("known.jfr");
    try (Recording r = new Recording(jdk.jfr.Configuration.create(Path.of("..", "quell-core", "src", "main",
        "resources", "dev", "quell", "quell.jfc")))) {
      r.start();
      StringWriter sink = new StringWriter();
      var cl = dev.quell.cli.Quell.commandLine();
      cl.setOut(new PrintWriter(sink, true));
      cl.setErr(new PrintWriter(sink, true));
      assertThat(cl.execute("simulate", "--scenario", "known-dependency", "--no-chart")).as(sink.toString()).isZero();
      r.stop();
      r.dump(known);
    } catch (java.text.ParseException e) {
      throw new AssertionError("quell.jfc is not a settings file Flight Recorder reads", e);
    }
    StringWriter out = new StringWriter();
    var cl = dev.quell.cli.Quell.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    assertThat(cl.execute("fit", known.toString(), "--out", here.resolve("fitted.yaml").toString())).as(out.toString())
        .isZero();
    String shown = out.toString().lines().takeWhile(l -> !l.isBlank()).collect(java.util.stream.Collectors.joining(
        "\n"));
    assertThat(shown).startsWith("Fitted 60,059 calls over 5:00 from known.jfr");
    for (String page : new String[] {"jfr.md"}) {
      String text = Files.readString(Path.of("..", "docs", page));
      assertThat(text.contains(shown)).as("docs/%s shows quell fit's report of the recording as it is now:%n%s", page,
          shown).isTrue();
    }
  }

  @Test
  void aRecordingItCannotUseIsOneLineNamingTheEventOrField() throws IOException {
    Path empty = dir.resolve("empty.jfr");
    try (Recording r = new Recording()) {
      r.enable("jdk.ThreadSleep");
      r.start();
      r.stop();
      r.dump(empty);
    }
    assertThatThrownBy(() -> new JfrTelemetry(null).recorded(empty)).isInstanceOf(ScenarioException.class)
        .hasMessage("empty.jfr has no dev.quell.Attempt events: record with Quell's settings file,"
            + " -XX:StartFlightRecording:settings=default.jfc,settings=quell.jfc (docs/jfr.md)");
    assertThatThrownBy(() -> new JfrTelemetry("payments").recorded(jfr))
        .hasMessage("inventory.jfr has no dev.quell.Attempt events of policy \"payments\"; its policies are"
            + " inventory");
    Path text = dir.resolve("calls.jfr");
    Files.writeString(text, "timestamp,latency,outcome\n");
    assertThatThrownBy(() -> new JfrTelemetry(null).recorded(text)).isInstanceOf(ScenarioException.class)
        .hasMessageStartingWith("calls.jfr is not a JDK Flight Recorder recording this JDK can read: ")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void aRecordingOfSeveralPoliciesIsFittedOnePolicyAtATime() throws IOException {
    Path two = dir.resolve("two.jfr");
    try (Recording r = new Recording()) {
      r.enable("dev.quell.Attempt");
      r.enable("dev.quell.Call");
      r.start();
      for (String name : new String[] {"inventory", "payments"}) {
        Simulate.policy(RETRYING.withName(name)).against(Dependency.latency(Duration.ofMillis(20),
            Duration.ofMillis(100))).under(Load.perSecond(20))
            .lasting(Duration.ofSeconds(20)).run(1);
      }
      r.stop();
      r.dump(two);
    }
    assertThatThrownBy(() -> new JfrTelemetry(null).recorded(two))
        .hasMessage("two.jfr holds the events of 2 policies (inventory, payments): fit one at a time with --policy"
            + " NAME");
    Telemetry.Recorded payments = new JfrTelemetry("payments").recorded(two);
    assertThat(payments.calls()).isBetween(380L, 420L);
  }
}
