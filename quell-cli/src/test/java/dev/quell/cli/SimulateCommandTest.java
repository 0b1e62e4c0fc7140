package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code quell simulate} end to end, through picocli as the launcher runs it. */
class SimulateCommandTest {
  @TempDir
  Path dir;

  private final QuellRunner quell = new QuellRunner();

  @Test
  void theReferenceScenarioWritesJsonAndAChart() throws Exception {
    Path png = dir.resolve("reference.png");
    assertThat(quell.run("simulate", "--json", "--chart", png.toString())).as(quell.err()).isZero();

    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image).isNotNull();
    assertThat(image.getWidth()).isEqualTo(1200);
    assertThat(image.getHeight()).isEqualTo(900);
    assertThat(quell.err()).contains("Chart: " + png.toAbsolutePath());

    JsonNode json = new ObjectMapper().readTree(quell.out());
    assertThat(json.get("scenario").asText()).isEqualTo("reference");
    JsonNode arms = json.get("arms");
    assertThat(arms).hasSize(2);
    JsonNode off = arms.get(0);
    JsonNode on = arms.get(1);
    assertThat(off.get("name").asText()).isEqualTo("budget off");
    assertThat(on.get("name").asText()).isEqualTo("budget on");
    for (JsonNode arm : arms) {
      assertThat(arm.get("phases")).hasSize(3);
      assertThat(arm.get("series")).hasSize(300);
      assertThat(arm.get("bands").get("loadMultiplier").get("median").isNumber()).isTrue();
      assertThat(arm.get("stopReasons").get("SUCCEEDED").asLong()).isPositive();
    }
    assertThat(on.get("worstSecond").asDouble()).isLessThan(off.get("worstSecond").asDouble());
    assertThat(off.get("diagnosis").asText()).isEqualTo("RETRY_STORM");
    assertThat(on.get("diagnosis").asText()).isEqualTo("HEALTHY");
  }

  @Test
  void theFirstRunTellsTheStoryAndPointsAtTheManyPodScenario() {
    Path png = dir.resolve("table.png");
    assertThat(quell.run("simulate", "--chart", png.toString())).as(quell.err()).isZero();
    String table = quell.out();
    assertThat(table).contains("budget off", "budget on", "load multiplier", "worst second", "availability",
        "during brownout ×8 (2:00–3:00)", "time to recover", "retry storm", "healthy", "Chart: ", "ms of CPU");
    // one line on what the budget cost this client and saved the dependency, one pointing at sixteen pods
    assertThat(table).containsPattern("the budget cost this client [0-9.]+ points of availability")
        .containsPattern("saved the dependency [0-9,]+ attempts")
        .contains("./quell simulate --scenario sixteen-pods");
    assertThat(png).exists();
  }

  @Test
  void withoutChartTheChartGoesUnderTheIgnoredOutputFolder() throws Exception {
    // run as the launcher would, in a directory of its own, so the default folder lands there
    ProcessBuilder pb = JavaProcess.quell(dir, "-Xmx256m", "simulate", "--scenario", "topology");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).as(out).isZero();
    Path chart = dir.resolve("quell-output").resolve("topology.png");
    assertThat(chart).exists();
    assertThat(out).contains("Chart: " + chart.toAbsolutePath());
    assertThat(Files.readString(Path.of("..", ".gitignore"))).contains("quell-output/");
  }

  @Test
  void csvGoesToAFileWithOneRowPerArmAndSecond() throws Exception {
    Path csv = dir.resolve("series.csv");
    assertThat(quell.run("simulate", "--csv", csv.toString(), "--no-chart")).as(quell.err()).isZero();
    var lines = Files.readAllLines(csv);
    assertThat(lines.get(0)).startsWith("arm,seed,second,offered,first_attempts,retries,retries_refused,succeeded,")
        .endsWith("budget_tokens,occupancy,queue,latency_p99_ms");
    assertThat(lines).hasSize(1 + 2 * 300);
    assertThat(lines.get(1)).startsWith("budget off,1,0,");
    assertThat(lines.get(301)).startsWith("budget on,1,0,");
  }

  @Test
  void severalSeedsGiveBandsAndEveryRun() throws Exception {
    assertThat(quell.run("simulate", "--scenario", "topology", "--seeds", "3", "--json", "--no-chart"))
        .as(quell.err()).isZero();
    JsonNode json = new ObjectMapper().readTree(quell.out());
    assertThat(json.get("seeds")).hasSize(3);
    for (JsonNode arm : json.get("arms")) {
      assertThat(arm.get("runs")).hasSize(3);
      JsonNode band = arm.get("bands").get("loadMultiplier");
      assertThat(band.get("min").asDouble()).isLessThanOrEqualTo(band.get("median").asDouble());
      assertThat(band.get("median").asDouble()).isLessThanOrEqualTo(band.get("max").asDouble());
    }
  }

  @Test
  void oneThreadAndManyGiveTheSameNumbers() throws Exception {
    assertThat(quell.run("simulate", "--scenario", "topology", "--seeds", "4", "--json", "--no-chart", "--threads",
        "1")).as(quell.err()).isZero();
    JsonNode one = new ObjectMapper().readTree(quell.out());
    assertThat(quell.err()).contains("on 1 thread");
    assertThat(quell.run("simulate", "--scenario", "topology", "--seeds", "4", "--json", "--no-chart", "--threads",
        "4")).as(quell.err()).isZero();
    JsonNode many = new ObjectMapper().readTree(quell.out());
    assertThat(quell.err()).contains("on 4 threads");
    ((com.fasterxml.jackson.databind.node.ObjectNode) one).remove("cpuSeconds");
    ((com.fasterxml.jackson.databind.node.ObjectNode) many).remove("cpuSeconds");
    assertThat(many).isEqualTo(one);
  }

  @Test
  void theTopologyScenarioChartsTheLeaf() throws Exception {
    Path png = dir.resolve("topology.png");
    assertThat(quell.run("simulate", "--scenario", "topology", "--chart", png.toString())).as(quell.err()).isZero();
    assertThat(quell.out()).contains("attempts per call at database");
    assertThat(ImageIO.read(png.toFile())).isNotNull();
  }

  @Test
  void inATopologyTheLineNamesTheNodeOfEachFigureAsTheChartDoes() {
    assertThat(quell.run("simulate", "--scenario", "topology", "--no-chart")).as(quell.err()).isZero();
    // the entry's worst second (frontend, 4.61×) and the drawn node's (database, 76.83×) are different figures
    assertThat(quell.out()).contains("saved frontend 17,950 attempts (59% of budgets off's), holding frontend's worst"
        + " second to 1.34× instead of 4.61× and database's (the deepest node, drawn in the chart) to 2.02× instead"
        + " of 76.83×.");
  }

  @Test
  void withSeveralSeedsTheLineUsesTheMediansTheTableShows() {
    assertThat(quell.run("simulate", "--seeds", "5", "--no-chart")).as(quell.err()).isZero();
    String out = quell.out();
    // the table's medians: availability 97.5% and 90.5% [90.5%–90.7%]; worst second 1.86× [...] and 1.11× [...]
    assertThat(out).contains("availability                                           97.5%             90.5%"
        + " [90.5%–90.7%]");
    assertThat(out).contains("In one line (medians of 5 seeds, as in the table): the budget cost this client 7.0"
        + " points of availability (97.5% → 90.5%;")
        .contains("holding its worst second to 1.11× instead of 1.86×.");
    // the diagnoses' explanations give one run's numbers, and say which
    assertThat(out).contains("budget off (seed 1): retry storm — ", "budget on (seed 1): healthy — ");
  }

  @Test
  void progressShowsOnATerminalOnly() {
    String tty = System.getProperty("quell.stderr.tty");
    String delay = System.getProperty("quell.progress.delayMillis");
    try {
      System.setProperty("quell.progress.delayMillis", "0");
      System.setProperty("quell.stderr.tty", "true");
      assertThat(quell.run("simulate", "--scenario", "topology", "--no-chart")).as(quell.err()).isZero();
      assertThat(quell.err()).contains("simulating:").contains("\r");
      assertThat(quell.out()).doesNotContain("simulating");

      System.setProperty("quell.stderr.tty", "false");
      assertThat(quell.run("simulate", "--scenario", "topology", "--no-chart")).as(quell.err()).isZero();
      assertThat(quell.err()).doesNotContain("simulating").doesNotContain("\r");
    } finally {
      restore("quell.stderr.tty", tty);
      restore("quell.progress.delayMillis", delay);
    }
  }

  private static void restore(String key, String value) {
    if (value == null) {
      System.clearProperty(key);
    } else {
      System.setProperty(key, value);
    }
  }

  @Test
  void aLargeRunGoesAheadWhenConfirmed() throws Exception {
    Path big = dir.resolve("big.yaml");
    Files.writeString(big, "duration: 24h\nload: {perSecond: 10000}\ndependency: {p50: 1ms, p99: 2ms}\n"
        + "policy: {attempts: 3}\n");
    assertThat(quell.run("simulate", "--scenario", big.toString(), "--no-chart")).isEqualTo(2);
    assertThat(quell.err()).contains("too big").contains("864,000,000 calls");
    // confirmed, it passes the check (a shorter file keeps the test quick; the flag is what is tested)
    Path fine = dir.resolve("fine.yaml");
    Files.writeString(fine, "duration: 10s\nload: {perSecond: 100}\ndependency: {p50: 1ms, p99: 2ms}\n"
        + "policy: {attempts: 3}\n");
    assertThat(quell.run("simulate", "--scenario", fine.toString(), "--no-chart", "--allow-large"))
        .as(quell.err()).isZero();
  }

  @Test
  void helpAndVersionDescribeTheCommand() {
    assertThat(quell.run("simulate", "--help")).isZero();
    assertThat(quell.out()).contains("--scenario", "--seeds", "--json", "--csv", "--chart", "--sweep", "--html",
        "--threads", "--allow-large");
    assertThat(quell.run("--version")).isZero();
    List<String> lines = quell.out().lines().toList();
    assertThat(lines.get(0)).isEqualTo("quell " + System.getProperty("quell.expected.version"));
    assertThat(lines.get(1)).startsWith("JDK " + System.getProperty("java.version"))
        .contains(System.getProperty("java.home"));
  }
}
