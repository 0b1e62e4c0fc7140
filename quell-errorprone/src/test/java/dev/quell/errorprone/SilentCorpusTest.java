package dev.quell.errorprone;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The precision claim, held by a test: a corpus of correct code that looks like each misuse (guards
 * in fields and maps, once(), policies handed on, clients kept and called once per request, outcomes
 * read, copies kept, timing that fits, budgets shared with one set of parameters), under
 * {@code src/test/resources/corpus}, compiled with every Quell check on, as a user's build compiles
 * it, together with the real sources of Quell's HTTP, OkHttp and gRPC integrations. Not one finding.
 */
class SilentCorpusTest {
  private static final Path CORPUS = Path.of("src/test/resources/corpus");

  @Test
  void everyCheckStaysSilentOnLookAlikeCorrectCode() throws IOException {
    Map<String, String> sources = new LinkedHashMap<>(RealIntegrations.sources());
    int files = 0;
    try (Stream<Path> walk = Files.walk(CORPUS)) {
      for (Path p : walk.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
        sources.put(CORPUS.relativize(p).toString().replace('\\', '/'), Files.readString(p));
        files++;
      }
    }
    assertThat(files).as("the corpus is there").isGreaterThanOrEqualTo(5);

    PluginCompiler.Compiled compiled = PluginCompiler.compile(sources);

    assertThat(compiled.errors()).as("the corpus compiles").isEmpty();
    assertThat(compiled.findings()).isEmpty();
    assertThat(Registration.checks()).as("every check ran over it").hasSize(9);
  }
}
