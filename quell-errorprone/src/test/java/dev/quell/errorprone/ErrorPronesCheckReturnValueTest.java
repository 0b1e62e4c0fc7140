package dev.quell.errorprone;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quell's immutable values mark their {@code with…}/{@code without…} methods {@code @CheckReturnValue},
 * so Error Prone's own {@code CheckReturnValue} check reports a dropped copy too, without Quell's
 * checks. Compiled against quell-core's sources in this repository (the annotations are in them),
 * with nothing but that check on: a dropped copy is reported; an ignored {@code execute} result and
 * the settings lambdas of {@code with(s -> ...)} are not; quell-core itself drops no copy.
 */
class ErrorPronesCheckReturnValueTest {
  private static final Path CORE = Path.of("..", "quell-core", "src", "main", "java");

  @Test
  void errorPronesOwnCheckReportsADroppedCopyAndNothingElse(@TempDir Path work) throws IOException {
    Path user = work.resolve("Usage.java");
    Files.writeString(user, """
        import dev.quell.Backoff;
        import dev.quell.CircuitBreaker;
        import dev.quell.Hedge;
        import dev.quell.Limiter;
        import dev.quell.MeasuredTiming;
        import dev.quell.Resilience;
        import java.time.Duration;
        class Usage {
          static final Resilience POLICY = Resilience.DEFAULT.withName("usage").with(s -> s.attempts(2));
          static final CircuitBreaker.Config TRIPS = CircuitBreaker.Config.DEFAULT.with(s -> s.failureRate(0.2));
          String use(Hedge hedge, MeasuredTiming timing, Limiter.AdaptiveConfig adaptive) throws Exception {
            POLICY.withAttempts(5);
            TRIPS.withMinimumCalls(10);
            hedge.withMaxHedges(2);
            timing.withMinSamples(10);
            adaptive.withMaxLimit(10);
            Backoff.exponential().withMax(Duration.ofSeconds(5));
            POLICY.execute(() -> "ignored on purpose");
            return POLICY.once().execute(() -> "x");
          }
        }
        """);
    List<Long> expected = List.of(12L, 13L, 14L, 15L, 16L, 17L);

    List<Path> sources = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(CORE)) {
      walk.filter(p -> p.toString().endsWith(".java") && !p.endsWith("module-info.java")).sorted().forEach(sources::add);
    }
    sources.add(user);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    String classpath = System.getProperty("java.class.path");
    List<String> options = List.of("-d", work.resolve("classes").toString(), "-classpath", classpath,
        "-processorpath", classpath, "-proc:none", "-XDcompilePolicy=simple", "--should-stop=ifError=FLOW",
        "-Xplugin:ErrorProne -XepDisableAllChecks -Xep:CheckReturnValue:ERROR");
    Files.createDirectories(work.resolve("classes"));
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
      javac.getTask(null, files, diagnostics, options, null, files.getJavaFileObjectsFromPaths(sources)).call();
    }
    List<String> inCore = new ArrayList<>();
    List<Long> inUsage = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      if (d.getKind() != Diagnostic.Kind.ERROR) {
        continue;
      }
      if (d.getSource() != null && d.getSource().getName().endsWith("Usage.java")) {
        assertThat(d.getMessage(Locale.ROOT)).startsWith("[CheckReturnValue]");
        inUsage.add(d.getLineNumber());
      } else {
        inCore.add(d.getSource() + ":" + d.getLineNumber() + " " + d.getMessage(Locale.ROOT));
      }
    }
    assertThat(inCore).as("quell-core compiles, and drops no copy of its own").isEmpty();
    assertThat(inUsage).containsExactlyElementsOf(expected);
  }
}
