package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code quell simulate --scenario} with a benchmark file runs the adaptive-limit benchmark and prints its table. */
class BenchmarkCommandTest {
  @TempDir
  Path dir;

  private final QuellRunner quell = new QuellRunner();

  @Test
  void aBenchmarkFileRunsTheChosenVariantsAndContendersBesideTheBestFixedLimit() throws Exception {
    Path f = dir.resolve("bench.yaml");
    Files.writeString(f, "benchmark: adaptive-limits\nvariants: [knee-moves]\ncontenders: [quell]\nseeds: [1]\n");
    assertThat(quell.run("simulate", "--scenario", f.toString())).as(quell.err()).isZero();
    assertThat(quell.out()).contains("seed 1", "knee-moves", "best fixed", "quell adaptive")
        .doesNotContain("envoy gradient", "knee-open");
  }

  @Test
  void theBuiltInBenchmarkIsTheFileInDocs() throws Exception {
    Path docs = Path.of("..", "docs", "scenarios", "benchmarks", "adaptive-limits.yaml");
    try (var in = getClass().getResourceAsStream("/dev/quell/cli/scenarios/benchmarks/adaptive-limits.yaml")) {
      assertThat(in).isNotNull();
      assertThat(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8))
          .isEqualTo(Files.readString(docs));
    }
  }

  @Test
  void anUnknownVariantIsAOneLineErrorNamingTheVariants() throws Exception {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, "benchmark: adaptive-limits\nvariants: [knees]\n");
    assertThat(quell.run("simulate", "--scenario", f.toString())).isEqualTo(2);
    assertThat(quell.err()).contains("no benchmark variant 'knees'", "knee-moves").doesNotContain("Exception");
  }

  @Test
  void flagsThatDoNotApplyToABenchmarkAreRefused() throws Exception {
    Path f = dir.resolve("bench.yaml");
    Files.writeString(f, "benchmark: adaptive-limits\nvariants: [knee]\n");
    assertThat(quell.run("simulate", "--scenario", f.toString(), "--json")).isEqualTo(2);
    assertThat(quell.err()).contains("a benchmark prints its table only");
  }
}
