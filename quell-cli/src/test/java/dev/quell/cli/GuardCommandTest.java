package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quell simulate} with breakers, limiters, hedges and measured timing, through picocli as the
 * launcher runs it: the built-in outage scenario as the docs show it, and a small file that uses every
 * new key.
 */
class GuardCommandTest {
  /** Every key of issues 8 and 9 at once, in half a minute: an outage at 0:10, a heavy tail all along. */
  private static final String EVERY_KEY = String.join("\n",
      "name: every-key",
      "duration: 30s",
      "load: {perSecond: 200}",
      "dependency:",
      "  p50: 10ms",
      "  p99: 40ms",
      "  tail: {share: 0.05, p50: 200ms, p99: 500ms}",
      "  capacity: 50",
      "  incidents: [{outage: true, from: 10s, to: 20s}]",
      "arms:",
      "  - name: guarded",
      "    policy:",
      "      attempts: 3",
      "      breaker: {minimumCalls: 10, window: 5s, breakDuration: 1s, maxBreakDuration: 4s, ramp: 2s}",
      "      limiters: [{rate: 150, burst: 20}, {concurrency: 20, maxWait: 10ms}]",
      "      hedge: {after: 30ms}",
      "      measuredTiming: {multipleOfP95: 3, floor: 20ms, window: 10s, minSamples: 20}",
      "  - name: adaptive",
      "    policy:",
      "      attempts: 2",
      "      limiter: {adaptive: {mode: loss, minLimit: 5, initialLimit: 10, maxLimit: 50, backoffRatio: 0.8}}",
      "      hedge: {maxExtraLoad: 0.05, floor: 5ms, maxHedges: 1}",
      "  - name: plain",
      "    policy: {attempts: 3, breaker: none, hedge: none, limiter: none, measuredTiming: none}",
      "");

  @TempDir
  Path dir;

  private final QuellRunner quell = new QuellRunner();

  private Path everyKey() throws Exception {
    Path f = dir.resolve("every-key.yaml");
    Files.writeString(f, EVERY_KEY);
    return f;
  }

  @Test
  void theOutageScenarioShowsTheLoadDuringTheOutageTheRefusalsAndTheTimeToRecover() throws Exception {
    Path png = dir.resolve("outage.png");
    assertThat(quell.run("simulate", "--scenario", "outage", "--chart", png.toString())).as(quell.err()).isZero();
    String out = quell.out();
    assertThat(out).contains("budget only", "breaker only", "both", "  during outage (1:00–2:00)",
        "attempts refused by the breaker", "calls that never reached dependency", "stopped: dependency unavailable",
        "time to recover", "call latency p50 / p99 / p99.9");
    assertThat(out).containsPattern("The breaker \\(both against budget only\\) changed what the dependency saw"
        + " during outage from 1\\.0[0-9]× to 0\\.[0-9]+× the offered calls, and the time to recover from [0-9]+ s to"
        + " [0-9]+ s\\.");
    assertThat(out).doesNotContain("hedges sent");
    assertThat(ImageIO.read(png.toFile()).getWidth()).isEqualTo(1200);
  }

  @Test
  void everyNewKeyRunsAndTheJsonAndCsvCountWhatEachGuardDid() throws Exception {
    Path csv = dir.resolve("every.csv");
    assertThat(quell.run("simulate", "--scenario", everyKey().toString(), "--json", "--no-chart", "--csv",
        csv.toString())).as(quell.err()).isZero();
    JsonNode arms = new ObjectMapper().readTree(quell.out()).get("arms");
    JsonNode guarded = arms.get(0);
    JsonNode adaptive = arms.get(1);
    JsonNode plain = arms.get(2);
    assertThat(guarded.get("entry").get("breaker").asText()).contains("minimumCalls=10", "ramp=PT2S");
    assertThat(guarded.get("entry").get("limiters").asText()).isEqualTo("rate, burst 20, concurrency 20");
    assertThat(guarded.get("entry").get("hedge").asText()).startsWith("Hedge[after 30 ms");
    assertThat(guarded.get("refusedByBreaker").asLong()).isPositive();
    assertThat(guarded.get("limited").asLong()).isPositive();
    assertThat(guarded.get("hedges").asLong()).isPositive();
    assertThat(guarded.get("stopReasons").get("DEPENDENCY_UNAVAILABLE").asLong())
        .isEqualTo(guarded.get("refusedByBreaker").asLong());
    assertThat(guarded.get("stopReasons").get("LIMITED").asLong()).isEqualTo(guarded.get("limited").asLong());
    assertThat(adaptive.get("entry").get("limiters").asText()).matches("adaptive, [0-9]+ at the end");
    assertThat(adaptive.get("entry").get("hedge").asText()).startsWith("Hedge[at p95");
    assertThat(plain.get("entry").get("breaker").asText()).isEqualTo("none");
    assertThat(plain.get("entry").get("limiters").asText()).isEqualTo("none");
    assertThat(plain.get("hedges").asLong()).isZero();
    // the series: the refusals of a second add up to the totals
    long breakerRefusals = 0;
    for (JsonNode second : guarded.get("series")) {
      breakerRefusals += second.get("refusedByBreaker").asLong();
    }
    assertThat(breakerRefusals).isEqualTo(guarded.get("refusedByBreaker").asLong());
    List<String> lines = Files.readAllLines(csv);
    assertThat(lines.get(0)).contains(",hedges,refused_by_breaker,limited,");
    assertThat(lines).hasSize(1 + 3 * 30);
  }

  @Test
  void aSeedGivesTheSameNumbersOnOneThreadOrMany() throws Exception {
    Path file = everyKey();
    assertThat(quell.run("simulate", "--scenario", file.toString(), "--seeds", "2", "--json", "--no-chart",
        "--threads", "1")).as(quell.err()).isZero();
    ObjectNode one = (ObjectNode) new ObjectMapper().readTree(quell.out());
    assertThat(quell.run("simulate", "--scenario", file.toString(), "--seeds", "2", "--json", "--no-chart",
        "--threads", "2")).as(quell.err()).isZero();
    ObjectNode many = (ObjectNode) new ObjectMapper().readTree(quell.out());
    one.remove("cpuSeconds");
    many.remove("cpuSeconds");
    assertThat(many).isEqualTo(one);
    // and the two seeds differ
    JsonNode runs = one.get("arms").get(0).get("runs");
    assertThat(runs.get(0).get("attempts")).isNotEqualTo(runs.get(1).get("attempts"));
  }

  @Test
  void breakerAndHedgeSettingsCanBeSweptAndAnArmWithoutOneRunsOnce() throws Exception {
    Path file = everyKey();
    assertThat(quell.run("simulate", "--scenario", file.toString(), "--sweep", "breaker.breakDuration=1s,3s",
        "--json", "--no-chart")).as(quell.err()).isZero();
    JsonNode arms = new ObjectMapper().readTree(quell.out()).get("arms");
    assertThat(arms.get(0).get("changedBySweep").asBoolean()).isTrue();
    assertThat(arms.get(0).get("points")).hasSize(2);
    assertThat(arms.get(1).get("changedBySweep").asBoolean()).isFalse();
    assertThat(arms.get(2).get("points")).hasSize(1);

    // a hedge key lands in every hedging policy: one that hedges at the live p95 cannot also take after:
    assertThat(quell.run("simulate", "--scenario", file.toString(), "--sweep", "hedge.after=10ms,50ms", "--json",
        "--no-chart")).isEqualTo(2);
    assertThat(quell.err()).contains("--sweep hedge.after=10ms", "arms[1].policy.hedge", "exactly one of after:");
  }
}
