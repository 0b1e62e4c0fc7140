package dev.quell.errorprone;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One deliberately wrong sample per check, kept outside the build under
 * {@code src/test/resources/samples}, compiled as a user's build would compile it: each line marked
 * {@code // expect: QuellSomething} must get that diagnostic, and no other line any of Quell's.
 */
class SamplesTest {
  private static final Path SAMPLES = Path.of("src/test/resources/samples");
  private static final Pattern EXPECT = Pattern.compile("// expect: (Quell\\w+)");

  static Stream<Path> samples() throws IOException {
    try (Stream<Path> files = Files.list(SAMPLES)) {
      return files.filter(p -> p.toString().endsWith(".java")).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("samples")
  void eachMarkedLineGetsItsDiagnosticAndNoOtherLineDoes(Path sample) throws IOException {
    String text = Files.readString(sample);
    List<String> expected = new ArrayList<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      Matcher m = EXPECT.matcher(lines[i]);
      if (m.find()) {
        expected.add((i + 1) + " " + m.group(1));
      }
    }
    assertThat(expected).as("a sample marks at least one line").isNotEmpty();

    List<String> actual = new ArrayList<>();
    for (PluginCompiler.Finding f : PluginCompiler.quellFindings(Map.of(sample.getFileName().toString(), text))) {
      actual.add(f.line() + " " + f.check());
    }
    assertThat(new TreeSet<>(actual)).containsExactlyInAnyOrderElementsOf(new TreeSet<>(expected));
  }

  @org.junit.jupiter.api.Test
  void everyCheckHasASample() throws IOException {
    StringBuilder all = new StringBuilder();
    for (Path p : samples().toList()) {
      all.append(Files.readString(p));
    }
    for (Class<?> check : Registration.checks()) {
      assertThat(all.toString()).as("a sample for %s", check.getSimpleName())
          .contains("// expect: " + check.getSimpleName());
    }
  }
}
