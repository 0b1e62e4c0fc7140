package dev.quell.errorprone;

import com.google.errorprone.BugCheckerRefactoringTestHelper;
import com.google.errorprone.CompilationTestHelper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The real sources of quell-http, quell-okhttp and quell-grpc, read from their modules in this
 * repository, to be compiled beside a test's own sources: the checks then meet {@code ResilientHttpClient},
 * {@code QuellOkHttp}, {@code QuellInterceptor} and gRPC's {@code ResilienceInterceptor} exactly as they
 * are on main, with OkHttp's and gRPC's real types. (They cannot be test dependencies of this module: see its pom.) The checks also run over these
 * sources, so a finding in them fails the test — Quell's own integrations must pass its own checks.
 */
final class RealIntegrations {
  private static final List<Path> ROOTS = List.of(
      Path.of("..", "quell-http", "src", "main", "java"), Path.of("..", "quell-okhttp", "src", "main", "java"),
      Path.of("..", "quell-grpc", "src", "main", "java"));

  private static final Map<String, String> SOURCES = read();

  private RealIntegrations() {}

  /** {@code helper} with every main source of quell-http, quell-okhttp and quell-grpc added. */
  static CompilationTestHelper with(CompilationTestHelper helper) {
    SOURCES.forEach(helper::addSourceLines);
    return helper;
  }

  /** {@code helper} with every main source of the integrations as an input the fix must leave unchanged. */
  @SuppressWarnings("MissingTestCall") // the caller adds its own input and runs the test
  static BugCheckerRefactoringTestHelper with(BugCheckerRefactoringTestHelper helper) {
    BugCheckerRefactoringTestHelper h = helper;
    for (Map.Entry<String, String> source : SOURCES.entrySet()) {
      h = h.addInputLines(source.getKey(), source.getValue()).expectUnchanged();
    }
    return h;
  }

  /** The sources, by path under their source root. */
  static Map<String, String> sources() {
    return SOURCES;
  }

  private static Map<String, String> read() {
    Map<String, String> sources = new LinkedHashMap<>();
    for (Path root : ROOTS) {
      if (!Files.isDirectory(root)) {
        throw new IllegalStateException("no sources at " + root.toAbsolutePath() + ": run the tests from quell-errorprone");
      }
      try (Stream<Path> files = Files.walk(root)) {
        for (Path file : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
          sources.put(root.relativize(file).toString().replace('\\', '/'), Files.readString(file));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (!sources.containsKey("dev/quell/http/ResilientHttpClient.java")
        || !sources.containsKey("dev/quell/okhttp/QuellOkHttp.java")
        || !sources.containsKey("dev/quell/grpc/ResilienceInterceptor.java")) {
      throw new IllegalStateException("the integrations' sources moved: " + sources.keySet());
    }
    return sources;
  }
}
