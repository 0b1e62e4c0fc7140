package dev.quell.moduletests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every published Quell module works on the module path (issue 19, item 7; Caffeine keeps such a
 * test). For each one a tiny application module (src/test/resources/apps/app.NAME: a module-info that
 * {@code requires dev.quell.NAME} and a Main) calls a public API that, inside, crosses into
 * {@code dev.quell.internal}, the package quell-core exports only to its friends by name: a module whose
 * JAR names itself otherwise is not a friend, and that call throws IllegalAccessError. Each Main also
 * checks the export itself ({@code app.support.Friends}).
 *
 * <p>The applications are compiled in one javac call against a module path made of every JAR on this
 * test's classpath (Quell's and the third-party ones, most of them automatic modules) except the test
 * harness's (JUnit, Failsafe), and each runs in a child {@code java --module-path … -m app.NAME/app.NAME.Main}
 * on the same java as this test. With all those JARs on one module path, every automatic module is
 * resolved as soon as one is, so a split package or a duplicate module name between any two of them
 * would fail every application that requires an automatic module: today none does (grpc-api without
 * grpc-context, OpenTelemetry's API, OkHttp with Okio and Kotlin's stdlib, Micrometer, Spring Framework 7
 * and Boot 4, picocli, SnakeYAML, JFreeChart all resolve together), so no JAR has to go on the class path.
 *
 * <p>What does need help: an automatic module has no {@code requires}, so an explicit module (one with a
 * module-info) that only automatic modules use is never resolved, and the first use of one of its classes
 * throws NoClassDefFoundError. quell-core (dev.quell) is such a module for quell-http, quell-okhttp and
 * quell-cli when the application names no core type itself; slf4j-api (org.slf4j) for quell-slf4j;
 * SnakeYAML and JFreeSVG for quell-cli; commons-logging for Spring itself. Those applications start with
 * {@code --add-modules} for them ({@link App#addModules}), as a user's must until those Quell modules ship
 * a module-info.java of their own that requires them.
 *
 * <p>This runs under Failsafe in the integration-test phase because the module names come from the
 * JARs' manifests; see the pom.
 */
class ModulePathIT {

  /** One application per published module: its module, what it must print, and how long it may take. */
  enum App {
    CORE("quell-core", "app.core", "quell-core on the module path: ok after 2 attempts"),
    TEST("quell-test", "app.test", "quell-test on the module path: ok after 2 attempts, SUCCEEDED"),
    SIM("quell-sim", "app.sim", "quell-sim on the module path: \\d+ calls simulated"),
    // quell-cli is an automatic module, so it cannot say it requires SnakeYAML (org.yaml.snakeyaml) or
    // JFreeSVG (org.jfree.svg), which are explicit modules: nothing resolves them unless the launcher adds
    // them (without them: NoClassDefFoundError: org/yaml/snakeyaml/error/MarkedYAMLException, and
    // org/jfree/svg/SVGGraphics2D for --html). picocli the application requires itself, to call
    // Quell.commandLine(); java.desktop, for JFreeChart, comes in through org.jfree.svg's requires
    CLI("quell-cli", "app.cli",
        "quell-cli on the module path: --version exit 0, simulate exit 0, chart and report written",
        "dev.quell", "org.yaml.snakeyaml", "org.jfree.svg"),
    MICROMETER("quell-micrometer", "app.micrometer",
        "quell-micrometer on the module path: quell.calls 1.0, quell.budget.utilization 0.0"),
    OPENTELEMETRY("quell-opentelemetry", "app.opentelemetry", "quell-opentelemetry on the module path: ok"),
    // quell-slf4j is an automatic module and slf4j-api an explicit one (org.slf4j): an automatic module
    // cannot require it, so the application must (requires org.slf4j, or --add-modules org.slf4j); without
    // it QuellSlf4j fails with NoClassDefFoundError: org/slf4j/LoggerFactory
    SLF4J("quell-slf4j", "app.slf4j", "quell-slf4j on the module path: ok after 2 attempts", "org.slf4j"),
    // An application that names no type of quell-core requires only dev.quell.http: quell-http is an
    // automatic module, which cannot require dev.quell (an explicit one), so nothing resolves the core
    // unless the application adds it (without it: NoClassDefFoundError: dev/quell/... in dev.quell.http).
    // The same holds for quell-okhttp and quell-cli.
    HTTP("quell-http", "app.http",
        "quell-http on the module path: 200 hello after 2 requests; Retry-After 7 is 7 s", "dev.quell"),
    OKHTTP("quell-okhttp", "app.okhttp", "quell-okhttp on the module path: 200 hello after 2 requests",
        "dev.quell"),
    GRPC("quell-grpc", "app.grpc",
        "quell-grpc on the module path: RESOURCE_EXHAUSTED is PERMANENT, slack 5 ms, refused a negative slack"),
    // Spring Framework's own JARs are automatic modules that use commons-logging, an explicit module
    // (org.apache.commons.logging) nothing requires: any Spring application on the module path adds it
    // (without it: NoClassDefFoundError: org/apache/commons/logging/LogFactory in spring.context)
    SPRING("quell-spring-boot-starter", "app.spring",
        "quell-spring-boot-starter on the module path: ok from 2-attempt policy inventory, quell.calls 1.0",
        "org.apache.commons.logging");

    final String artifact;
    final String module;
    final Pattern expected;
    /** Explicit modules the child adds with --add-modules: needed by an automatic module, which cannot require them. */
    final List<String> addModules;

    App(String artifact, String module, String expected, String... addModules) {
      this.artifact = artifact;
      this.module = module;
      this.expected = Pattern.compile("^" + expected + "$", Pattern.MULTILINE);
      this.addModules = List.of(addModules);
    }

    @Override
    public String toString() {
      return artifact;
    }
  }

  /** The module the applications share (the friend check, a loopback HTTP server). */
  private static final String SUPPORT = "app.support";

  /** How long one application may run: they take a second or two; a hang must not hold the build. */
  private static final long RUN_TIMEOUT_SECONDS = 120;

  private static List<Path> libraries;
  /** Applications not run, and why: the test of each is skipped with the reason. */
  private static Map<App, String> notRunnable;
  /** Applications that cannot run, and why: the test of each fails with the reason. */
  private static Map<App, String> broken;
  private static Path work;
  private static Path compiled;

  @BeforeAll
  static void compileTheApplications() throws IOException, URISyntaxException {
    libraries = libraries();
    notRunnable = new EnumMap<>(App.class);
    broken = new EnumMap<>(App.class);
    for (App app : App.values()) {
      Path jar = jarOf(app.artifact);
      String expectedName = app == App.CORE ? "dev.quell" : "dev.quell." + app.module.substring("app.".length());
      String name = moduleName(jar);
      if (app == App.GRPC && "dev.quell.parent".equals(name)) {
        // the one tolerated defect (issue 19, item 7): quell-grpc's pom lacks its quell.module.suffix,
        // fixed on another branch; once that is merged this application runs like the others
        notRunnable.put(app, "quell-grpc's JAR " + jar + " names itself dev.quell.parent (Automatic-Module-Name):"
            + " its pom lacks <quell.module.suffix>grpc</quell.module.suffix>, so on the module path it is not"
            + " dev.quell.grpc, a friend of quell-core, and GrpcClassifier.with(...) and"
            + " ResilienceInterceptor.withDeadlineSlack(...) throw IllegalAccessError. Skipped until the fix is"
            + " merged.");
      } else if (!expectedName.equals(name)) {
        broken.put(app, jar + " names itself " + name + " on the module path, not " + expectedName
            + ": check the Automatic-Module-Name in its manifest (the quell.module.suffix in its pom)");
      }
    }

    work = Path.of("target", "module-path-apps").toAbsolutePath();
    deleteRecursively(work);
    compiled = Files.createDirectories(work.resolve("modules"));
    Path sources = Path.of(resource("/apps"));
    List<App> apps = new ArrayList<>();
    for (App app : App.values()) {
      if (!notRunnable.containsKey(app) && !broken.containsKey(app)) {
        apps.add(app);
      }
    }
    compile(sources, apps);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(App.class)
  void runsOnTheModulePath(App app) throws IOException, InterruptedException {
    Assumptions.assumeFalse(notRunnable.containsKey(app), () -> notRunnable.get(app));
    if (broken.containsKey(app)) {
      fail(broken.get(app));
    }

    List<String> command = new ArrayList<>();
    command.add(javaBinary());
    // the children are short: no JIT tiers or GC threads to start on a busy machine
    command.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true"));
    command.add("--module-path");
    command.add(modulePath(compiled, libraries));
    if (!app.addModules.isEmpty()) {
      command.add("--add-modules");
      command.add(String.join(",", app.addModules));
    }
    command.add("--module");
    command.add(app.module + "/" + app.module + ".Main");

    Path out = work.resolve(app.module + ".out");
    Path err = work.resolve(app.module + ".err");
    Process process = new ProcessBuilder(command)
        .redirectOutput(out.toFile())
        .redirectError(err.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File(isWindows() ? "NUL" : "/dev/null")))
        .start();
    if (!process.waitFor(RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      fail(app.module + " did not end within " + RUN_TIMEOUT_SECONDS + " s" + report(command, out, err));
    }
    assertEquals(0, process.exitValue(), () -> app.module + " failed" + report(command, out, err));
    String stdout = Files.readString(out, StandardCharsets.UTF_8);
    assertTrue(app.expected.matcher(stdout).find(),
        () -> app.module + " did not print a line matching " + app.expected + report(command, out, err));
  }

  /**
   * Compiles the applications in one javac call. When it fails, the applications whose own sources
   * have errors are marked broken with those errors, and the others are compiled again without them;
   * errors in no application's sources (app.support) mark them all.
   */
  private static void compile(Path sources, List<App> apps) {
    List<App> left = new ArrayList<>(apps);
    while (!left.isEmpty()) {
      List<String> modules = new ArrayList<>(List.of(SUPPORT));
      left.forEach(app -> modules.add(app.module));
      List<String> options = List.of(
          "--release", "17",
          "-Xlint:all,-requires-automatic,-requires-transitive-automatic,-module,-options",
          "--module-source-path", sources.toString(),
          "--module-path", modulePath(null, libraries),
          "--module", String.join(",", modules),
          "-d", compiled.toString());
      JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
      DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
      if (javac.getTask(null, null, diagnostics, options, null, null).call()) {
        return;
      }
      Map<App, String> errors = new EnumMap<>(App.class);
      StringBuilder all = new StringBuilder();
      for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
        if (d.getKind() != Diagnostic.Kind.ERROR) {
          continue;
        }
        String where = d.getSource() == null ? "" : d.getSource().toUri().getPath();
        String line = where + ":" + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT) + "\n";
        all.append(line);
        left.stream().filter(app -> where.contains("/" + app.module + "/")).findFirst()
            .ifPresent(app -> errors.merge(app, line, String::concat));
      }
      String command = "javac " + String.join(" ", options) + "\n";
      if (errors.isEmpty()) {
        left.forEach(app -> broken.put(app, "javac failed for the applications:\n" + command + all));
        return;
      }
      errors.forEach((app, text) -> broken.put(app, app.module + " does not compile:\n" + command + text));
      left.removeAll(errors.keySet());
    }
  }

  /**
   * Every JAR on this test's classpath but the test harness's: Quell's modules and all they bring. The
   * harness (JUnit with its opentest4j and apiguardian, Failsafe's booter, this module's own classes)
   * stays out.
   */
  private static List<Path> libraries() {
    String classpath = System.getProperty("java.class.path");
    List<Path> jars = new ArrayList<>();
    for (String entry : classpath.split(Pattern.quote(File.pathSeparator))) {
      if (entry.isEmpty()) {
        continue;
      }
      Path path = Path.of(entry).toAbsolutePath();
      String slashed = path.toString().replace(File.separatorChar, '/');
      String file = path.getFileName().toString();
      boolean harness = Stream.of("/org/junit/", "/org/opentest4j/", "/org/apiguardian/", "/org/apache/maven/",
              "/quell-module-tests/")
          .anyMatch(slashed::contains) || file.startsWith("quell-module-tests") || file.startsWith("surefire");
      if (harness) {
        continue;
      }
      if (Files.isDirectory(path)) {
        fail("the classpath holds " + path + ", a directory of classes, not a JAR: on the module path a Quell"
            + " module is named by its JAR's Automatic-Module-Name. Run through the integration-test phase"
            + " (./mvnw verify), not ./mvnw test.");
      }
      jars.add(path);
    }
    return jars;
  }

  private static Path jarOf(String artifact) {
    return libraries.stream()
        .filter(jar -> jar.getFileName().toString().matches(Pattern.quote(artifact) + "-\\d.*\\.jar"))
        .findFirst()
        .orElseThrow(() -> new AssertionError(artifact + "'s JAR is not on the classpath: " + libraries));
  }

  /** The name a JAR has on the module path: its module-info's, else its Automatic-Module-Name. */
  private static String moduleName(Path jar) {
    return java.lang.module.ModuleFinder.of(jar).findAll().stream()
        .map(reference -> reference.descriptor().name())
        .findFirst()
        .orElseThrow(() -> new AssertionError(jar + " is not a module"));
  }

  private static String modulePath(Path first, List<Path> jars) {
    Stream<Path> entries = first == null ? jars.stream() : Stream.concat(Stream.of(first), jars.stream());
    return entries.map(Path::toString).collect(Collectors.joining(File.pathSeparator));
  }

  private static String javaBinary() {
    return ProcessHandle.current().info().command()
        .orElseGet(() -> Path.of(System.getProperty("java.home"), "bin", isWindows() ? "java.exe" : "java").toString());
  }

  private static boolean isWindows() {
    return File.separatorChar == '\\';
  }

  /** What a failure message shows: the child's command line, its standard output and its standard error. */
  private static String report(List<String> command, Path out, Path err) {
    return "\ncommand: " + String.join(" ", command)
        + "\n--- stdout ---\n" + read(out)
        + "\n--- stderr ---\n" + read(err);
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(cannot read " + file + ": " + e + ")";
    }
  }

  private static java.net.URI resource(String name) throws URISyntaxException {
    URL url = ModulePathIT.class.getResource(name);
    if (url == null) {
      throw new AssertionError(name + " is not on the test classpath");
    }
    return url.toURI();
  }

  private static void deleteRecursively(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(path -> {
        try {
          Files.delete(path);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }
}
