package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * quell-reactor as a module: its packaged jar names itself {@code dev.quell.reactor}, the name
 * quell-core's module-info lends {@code dev.quell.internal} to, and an application with quell-reactor,
 * quell-core and Reactor on the module path retries a Mono and a Flux through the operator (whose
 * attempts are the core's {@code DirectStage}s and whose calls its {@code OutcomeReceiver}s).
 *
 * <p>Runs after {@code package} (the pom binds it to {@code integration-test}): only the packaged jar
 * carries the manifest's module name.
 */
class ModulePathIT {
  private static final Path TARGET = Path.of("target");
  /** Test tooling and the test-only libraries: everything else on the test class path goes on the module path. */
  private static final List<String> TOOLING = List.of(
      "junit-", "opentest4j-", "apiguardian-", "assertj-", "byte-buddy-", "quell-test-", "reactor-test-",
      "spring-", "commons-logging-", "micrometer-", "jqwik-");

  private static Path packagedJar() throws IOException {
    try (Stream<Path> files = Files.list(TARGET)) {
      return files.filter(p -> p.getFileName().toString().matches("quell-reactor-.*\\.jar"))
          .filter(p -> !p.getFileName().toString().matches(".*-(sources|javadoc|tests)\\.jar"))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no packaged quell-reactor jar in target/: run this test after package"));
    }
  }

  @Test
  void thePackagedJarIsNamedDevQuellReactor() throws IOException {
    try (JarFile jar = new JarFile(packagedJar().toFile())) {
      assertThat(jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name")).isEqualTo("dev.quell.reactor");
    }
  }

  @Test
  void anApplicationOnTheModulePathRetriesAMonoAndAFlux() throws Exception {
    List<String> modulePath = new ArrayList<>();
    modulePath.add(packagedJar().toAbsolutePath().toString());
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String file = Path.of(entry).getFileName().toString();
      if (file.endsWith(".jar") && TOOLING.stream().noneMatch(file::startsWith)) {
        modulePath.add(entry);
      } else if (!file.endsWith(".jar") && entry.contains("quell-core")) {
        modulePath.add(entry); // quell-core's classes in a reactor build
      }
    }
    assertThat(modulePath).as("quell-core and reactor-core among " + modulePath)
        .anyMatch(p -> p.contains("quell-core")).anyMatch(p -> p.contains("reactor-core"));

    Path app = Files.createTempDirectory("quell-modulepath");
    Path main = Path.of("dev", "quell", "modulepath", "ReactorOnTheModulePath.class");
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
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void run(List<String> modulePath, Path app) throws Exception {
    Path output = app.resolve("output.txt");
    Process child = new ProcessBuilder(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--module-path", String.join(File.pathSeparator, modulePath),
        "--add-modules", "ALL-MODULE-PATH",
        "-cp", app.toString(),
        "dev.quell.modulepath.ReactorOnTheModulePath")
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
    assertThat(printed).as(printed).contains("module dev.quell.reactor", "a Mono retried", "a Flux retried");
    assertThat(printed).as("no access error of any kind").doesNotContain("IllegalAccess");
  }
}
