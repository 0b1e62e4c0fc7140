package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code quell simulate} end to end, through picocli as the launcher runs it. */
class SimulateCommandTest {
  @TempDir
  Path dir;

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int quell(String... args) {
    CommandLine cl = Quell.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  @Test
  void theReferenceScenarioWritesJsonAndAChart() throws Exception {
    Path png = dir.resolve("charts/reference.png");
    assertThat(quell("simulate", "--json", "--chart", png.toString())).as(err.toString()).isZero();

    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image).isNotNull();
    assertThat(image.getWidth()).isEqualTo(1200);
    assertThat(image.getHeight()).isEqualTo(900);
    assertThat(err.toString()).contains("Chart: " + png.toAbsolutePath());

    JsonNode json = new ObjectMapper().readTree(out.toString());
    assertThat(json.get("scenario").asText()).isEqualTo("reference");
    JsonNode arms = json.get("arms");
    assertThat(arms).hasSize(2);
    JsonNode off = arms.get(0);
    JsonNode on = arms.get(1);
    assertThat(off.get("name").asText()).isEqualTo("budget off");
    assertThat(on.get("name").asText()).isEqualTo("budget on");
    for (JsonNode arm : arms) {
      assertThat(arm.has("loadMultiplier")).isTrue();
      assertThat(arm.has("worstSecond")).isTrue();
      assertThat(arm.has("worstSecondAt")).isTrue();
      assertThat(arm.has("availability")).isTrue();
      assertThat(arm.get("phases")).hasSize(3);
      assertThat(arm.get("series")).hasSize(300);
      assertThat(arm.get("bands").get("loadMultiplier").get("median").isNumber()).isTrue();
      assertThat(arm.get("stopReasons").get("SUCCEEDED").asLong()).isPositive();
    }
    assertThat(on.get("loadMultiplier").asDouble()).isLessThan(off.get("loadMultiplier").asDouble());
    assertThat(on.get("worstSecond").asDouble()).isLessThan(off.get("worstSecond").asDouble());
    assertThat(off.get("diagnosis").asText()).isEqualTo("RETRY_STORM");
    assertThat(on.get("diagnosis").asText()).isEqualTo("HEALTHY");
  }

  @Test
  void theTableComparesTheArmsSideBySideAndNamesTheChart() {
    Path png = dir.resolve("table.png");
    assertThat(quell("simulate", "--chart", png.toString())).as(err.toString()).isZero();
    String table = out.toString();
    assertThat(table).contains("budget off", "budget on", "load multiplier", "worst second", "availability",
        "during brownout ×8 (2:00–3:00)", "time to recover", "retry storm", "healthy", "Chart: ", "ms of CPU");
    assertThat(png).exists();
  }

  @Test
  void csvGoesToAFileWithOneRowPerArmAndSecond() throws Exception {
    Path csv = dir.resolve("series.csv");
    assertThat(quell("simulate", "--csv", csv.toString(), "--no-chart")).as(err.toString()).isZero();
    var lines = Files.readAllLines(csv);
    assertThat(lines.get(0)).startsWith("arm,seed,second,offered,first_attempts,retries,retries_refused,succeeded,")
        .endsWith("budget_tokens,occupancy,queue");
    assertThat(lines).hasSize(1 + 2 * 300);
    assertThat(lines.get(1)).startsWith("budget off,1,0,");
    assertThat(lines.get(301)).startsWith("budget on,1,0,");
  }

  @Test
  void severalSeedsGiveBandsAndEveryRun() throws Exception {
    assertThat(quell("simulate", "--scenario", "../docs/scenarios/topology.yaml", "--seeds", "3", "--json",
        "--no-chart")).as(err.toString()).isZero();
    JsonNode json = new ObjectMapper().readTree(out.toString());
    assertThat(json.get("seeds")).hasSize(3);
    for (JsonNode arm : json.get("arms")) {
      assertThat(arm.get("runs")).hasSize(3);
      JsonNode band = arm.get("bands").get("loadMultiplier");
      assertThat(band.get("min").asDouble()).isLessThanOrEqualTo(band.get("median").asDouble());
      assertThat(band.get("median").asDouble()).isLessThanOrEqualTo(band.get("max").asDouble());
    }
  }

  @Test
  void theTopologyScenarioChartsTheLeaf() throws Exception {
    Path png = dir.resolve("topology.png");
    assertThat(quell("simulate", "--scenario", "topology", "--chart", png.toString())).as(err.toString()).isZero();
    assertThat(out.toString()).contains("attempts per call at database");
    assertThat(ImageIO.read(png.toFile())).isNotNull();
  }

  @Test
  void mistakesAreNamedAndExitWithTwo() throws Exception {
    assertThat(quell("simulate", "--scenario", "nonsense")).isEqualTo(2);
    assertThat(err.toString()).contains("reference, fleet, topology or a YAML file");

    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "load: {perSecond: 10}\ndependency: {p50: 20ms, p99: 100ms, capacty: 400}\npolicy: {attempts: 3}\n");
    err.getBuffer().setLength(0);
    assertThat(quell("simulate", "--scenario", bad.toString(), "--no-chart")).isEqualTo(2);
    assertThat(err.toString()).contains("unknown key 'capacty'").contains("capacity");

    err.getBuffer().setLength(0);
    assertThat(quell("simulate", "--seeds", "many")).isEqualTo(2);
    assertThat(err.toString()).contains("--seeds");

    assertThat(quell("simulate", "--bogus")).isEqualTo(2);
  }

  @Test
  void helpDescribesTheOptions() {
    assertThat(quell("simulate", "--help")).isZero();
    assertThat(out.toString()).contains("--scenario", "--seeds", "--json", "--csv", "--chart");
  }
}
