package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Keeps the documentation honest: every Java block in the README and in docs/*.md must appear,
 * line for line, in a test source file somewhere in the project, where it is compiled (and run).
 */
class DocSnippetsTest {
  private static final Path ROOT = findRoot();

  static Stream<Path> documents() throws IOException {
    List<Path> docs = new ArrayList<>();
    docs.add(ROOT.resolve("README.md"));
    try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    return docs.stream();
  }

  @ParameterizedTest
  @MethodSource("documents")
  void everyJavaExampleIsCompiledByATest(Path document) throws IOException {
    String tests = normalized(testSources());
    for (String block : javaBlocks(Files.readString(document))) {
      assertThat(tests).as("this example in %s is not in any test source:%n%s", ROOT.relativize(document), block)
          .contains(normalized(block));
    }
  }

  static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    StringBuilder current = null;
    for (String line : markdown.split("\n", -1)) {
      if (current == null && line.trim().equals("```java")) {
        current = new StringBuilder();
      } else if (current != null && line.trim().equals("```")) {
        blocks.add(current.toString());
        current = null;
      } else if (current != null) {
        current.append(line).append('\n');
      }
    }
    return blocks;
  }

  /** Lines trimmed, blank lines dropped, joined by newlines: indentation may differ, content may not. */
  static String normalized(String text) {
    return text.lines().map(String::trim).filter(l -> !l.isEmpty()).collect(Collectors.joining("\n", "\n", "\n"));
  }

  private static String testSources() throws IOException {
    try (Stream<Path> files = Files.walk(ROOT)) {
      return files.filter(p -> p.toString().endsWith(".java"))
          .filter(p -> p.toString().contains("/src/test/java/"))
          .filter(p -> !p.toString().contains("/target/"))
          .map(DocSnippetsTest::read)
          .collect(Collectors.joining("\n"));
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path findRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("mvnw"))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException("cannot find the repository root from " + Path.of("").toAbsolutePath());
    }
    return dir;
  }
}
