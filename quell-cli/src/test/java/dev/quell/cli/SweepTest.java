package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SPEC §9: a sweep runs each value of one numeric key and prices the trade-off as a curve and a table. */
class SweepTest {
  /** The reference brownout, shorter and at a lower rate, so each value runs quickly. */
  private static final String SHORT = String.join("\n",
      "name: short",
      "duration: 150s",
      "load: {perSecond: 300}",
      "dependency:",
      "  p50: 20ms",
      "  p99: 100ms",
      "  capacity: 400",
      "  incidents: [{brownout: 8, from: 60s, to: 120s}]",
      "arms:",
      "  - {name: budget off, policy: {attempts: 3, attemptTimeout: 160ms, backoff: 50ms, deadline: 1s, budget: none}}",
      "  - {name: budget on, policy: {attempts: 3, attemptTimeout: 160ms, backoff: 50ms, deadline: 1s}}",
      "");

  @TempDir
  Path dir;

  private final QuellRunner quell = new QuellRunner();

  private Path scenario() throws Exception {
    Path f = dir.resolve("short.yaml");
    Files.writeString(f, SHORT);
    return f;
  }

  private JsonNode sweepJson(String... args) throws Exception {
    assertThat(quell.run(args)).as(quell.err()).isZero();
    return new ObjectMapper().readTree(quell.out());
  }

  @Test
  void theBudgetFractionTradesAvailabilityForTheDependencysWorstSecond() throws Exception {
    Path png = dir.resolve("trade-off.png");
    assertThat(quell.run("simulate", "--sweep", "budget.fraction=0.05,0.1,0.2,0.5", "--chart", png.toString()))
        .as(quell.err()).isZero();
    String table = quell.out();
    assertThat(table).contains("Sweep of budget.fraction over reference", "dependency's worst second",
        "budget off does not use budget.fraction: it ran once");
    assertThat(table.lines().filter(l -> l.contains("budget on"))).hasSize(4);
    assertThat(table.lines().filter(l -> l.contains("budget off") && l.contains("retry storm"))).hasSize(1);
    assertThat(ImageIO.read(png.toFile()).getWidth()).isEqualTo(1100);

    JsonNode json = sweepJson("simulate", "--sweep", "budget.fraction=0.05,0.1,0.2,0.5", "--json", "--no-chart");
    JsonNode on = json.get("arms").get(1);
    assertThat(on.get("changedBySweep").asBoolean()).isTrue();
    assertThat(json.get("arms").get(0).get("points")).hasSize(1);
    JsonNode points = on.get("points");
    assertThat(points).hasSize(4);
    // a larger fraction funds more retries: more availability for this client, a worse second for the dependency
    for (int i = 1; i < points.size(); i++) {
      assertThat(points.get(i).get("dependencyWorstSecond").asDouble())
          .isGreaterThan(points.get(i - 1).get("dependencyWorstSecond").asDouble());
      assertThat(points.get(i).get("availability").asDouble())
          .isGreaterThan(points.get(i - 1).get("availability").asDouble());
    }
    // the automatic budget written out: fraction 0.1 is the automatic budget itself
    JsonNode automatic = sweepJson("simulate", "--json", "--no-chart");
    assertThat(points.get(1).get("availability").asDouble())
        .isEqualTo(automatic.get("arms").get(1).get("availability").asDouble());
  }

  @Test
  void aKeyOutsideTheArmsChangesEveryArm() throws Exception {
    JsonNode json = sweepJson("simulate", "--scenario", scenario().toString(), "--sweep", "load.perSecond=100,300",
        "--json", "--no-chart");
    for (JsonNode arm : json.get("arms")) {
      assertThat(arm.get("changedBySweep").asBoolean()).isTrue();
      assertThat(arm.get("points")).hasSize(2);
      assertThat(arm.get("points").get(0).get("value").asText()).isEqualTo("100");
    }
  }

  @Test
  void anIndexedKeyChangesOneArm() throws Exception {
    JsonNode json = sweepJson("simulate", "--scenario", scenario().toString(), "--sweep",
        "arms[1].policy.attempts=2,4", "--json", "--no-chart");
    assertThat(json.get("arms").get(0).get("changedBySweep").asBoolean()).isFalse();
    assertThat(json.get("arms").get(1).get("points")).hasSize(2);
  }

  @Test
  void anArmIsChangedByTheSweepEvenWhenItsFirstValueIsTheOneTheFileHas() throws Exception {
    // the file gives arms[1] 3 attempts: the first value changes nothing, the second does
    JsonNode json = sweepJson("simulate", "--scenario", scenario().toString(), "--sweep",
        "arms[1].policy.attempts=3,4", "--json", "--no-chart");
    assertThat(json.get("arms").get(1).get("changedBySweep").asBoolean()).isTrue();
    assertThat(json.get("arms").get(1).get("points")).hasSize(2);
    assertThat(json.get("arms").get(0).get("points")).hasSize(1);
  }

  @Test
  void theOverloadModelsBoundCanBeSwept() throws Exception {
    JsonNode json = sweepJson("simulate", "--scenario", scenario().toString(), "--sweep",
        "dependency.overload.boundedQueue=0,50", "--json", "--no-chart");
    assertThat(json.get("arms").get(0).get("points")).hasSize(2);
  }

  @Test
  void durationsCanBeSweptAndTheCsvHasARowPerValueAndArm() throws Exception {
    Path csv = dir.resolve("sweep.csv");
    assertThat(quell.run("simulate", "--scenario", scenario().toString(), "--sweep", "attemptTimeout=100ms,300ms",
        "--csv", csv.toString(), "--no-chart")).as(quell.err()).isZero();
    List<String> lines = Files.readAllLines(csv);
    assertThat(lines.get(0)).startsWith("value,arm,availability,");
    assertThat(lines).hasSize(1 + 2 * 2);
    assertThat(lines.get(1)).startsWith("100ms,budget off,");
  }
}
