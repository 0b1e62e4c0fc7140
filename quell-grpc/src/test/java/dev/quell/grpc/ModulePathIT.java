package dev.quell.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * quell-grpc as a module: its packaged jar names itself {@code dev.quell.grpc}, the name quell-core's
 * module-info lends its internals to, and an application run with quell-grpc, quell-core and gRPC on
 * the module path can configure the interceptor ({@code GrpcClassifier.with},
 * {@code withDeadlineSlack}, which reach {@code dev.quell.internal}) and make a call through it.
 *
 * <p>Runs after {@code package} (the pom binds it to {@code integration-test}): only the packaged jar
 * carries the manifest's module name.
 */
class ModulePathIT {
  private static final Path TARGET = Path.of("target");
  /**
   * The test tooling: every other jar of the test class path goes on the application's module path
   * (quell-core, grpc-java with its transport and their dependencies), wherever it comes from — the
   * local repository, or a module's target/ in a reactor build.
   */
  private static final List<String> TOOLING = List.of(
      "junit-", "opentest4j-", "apiguardian-", "jqwik-", "assertj-", "byte-buddy-", "quell-test-");

  private static Path packagedJar() throws IOException {
    try (Stream<Path> files = Files.list(TARGET)) {
      return files.filter(p -> p.getFileName().toString().matches("quell-grpc-.*\\.jar"))
          .filter(p -> !p.getFileName().toString().matches(".*-(sources|javadoc|tests)\\.jar"))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no packaged quell-grpc jar in target/: run this test after package"));
    }
  }

  @Test
  void thePackagedJarIsNamedDevQuellGrpc() throws IOException {
    try (JarFile jar = new JarFile(packagedJar().toFile())) {
      assertThat(jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name")).isEqualTo("dev.quell.grpc");
    }
  }

  @Test
  void anApplicationOnTheModulePathConfiguresTheInterceptorAndMakesACall() throws Exception {
    List<String> modulePath = new ArrayList<>();
    modulePath.add(packagedJar().toAbsolutePath().toString());
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String file = Path.of(entry).getFileName().toString();
      if (file.endsWith(".jar") && TOOLING.stream().noneMatch(file::startsWith)) {
        modulePath.add(entry);
      }
    }
    assertThat(modulePath).as("quell-core and grpc-api among " + modulePath)
        .anyMatch(p -> p.contains("quell-core")).anyMatch(p -> p.contains("grpc-api"));

    // the application alone on the class path: its own class, copied away from the test classes
    Path app = Files.createTempDirectory("quell-modulepath");
    Path main = Path.of("dev", "quell", "modulepath", "GrpcOnTheModulePath.class");
    Path classes = TARGET.resolve("test-classes");
    try (Stream<Path> files = Files.list(classes.resolve(main.getParent()))) {
      for (Path f : files.collect(Collectors.toList())) {
        Path to = app.resolve(classes.relativize(f));
        Files.createDirectories(to.getParent());
        Files.copy(f, to);
      }
    }

    try {
      run(modulePath, app);
    } finally {
      try (Stream<Path> all = Files.walk(app)) {
        all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void run(List<String> modulePath, Path app) throws Exception {
    Path output = app.resolve("output.txt");
    Process child = new ProcessBuilder(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--module-path", String.join(File.pathSeparator, modulePath),
        // the application is on the class path: it resolves every module it was given
        "--add-modules", "ALL-MODULE-PATH",
        "-cp", app.toString(),
        "dev.quell.modulepath.GrpcOnTheModulePath")
        .redirectErrorStream(true)
        .redirectOutput(output.toFile())
        .start();
    boolean ended = child.waitFor(60, TimeUnit.SECONDS);
    if (!ended) {
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    String printed = Files.readString(output, StandardCharsets.UTF_8);

    assertThat(ended).as("the application ended within 60 s:\n" + printed).isTrue();
    assertThat(child.exitValue()).as(printed).isZero();
    assertThat(printed).as(printed).contains(
        "module dev.quell.grpc", "GrpcClassifier.with", "ResilienceInterceptor.withDeadlineSlack",
        "a call retried over loopback");
    assertThat(printed).as("no access error of any kind").doesNotContain("IllegalAccess");
  }
}
