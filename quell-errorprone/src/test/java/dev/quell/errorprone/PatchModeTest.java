package dev.quell.errorprone;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 * Error Prone's patch mode over a small source tree written the way users write code, with several
 * findings per class: javac with {@code -XepPatchChecks:... -XepPatchLocation:IN_PLACE} rewrites the
 * files, and the rewritten tree must then compile without an error. A fix may bring to light what
 * its finding hid (a dropped copy, kept, can be a policy built per call), so patch mode runs again
 * until nothing is left: at most twice, and then without a finding of the checks that patched it.
 */
class PatchModeTest {
  private static final Path TREE = Path.of("src/test/resources/patch-tree");

  @Test
  void everyFixInTheTreeAppliedTogetherCompilesAndClearsItsFindings(@TempDir Path work) throws IOException {
    Path sources = work.resolve("src");
    copy(TREE, sources);
    RealIntegrations.sources().forEach((path, text) -> write(sources.resolve(path), text));
    List<String> patchable = Registration.fixable();

    Result before = compile(sources, work.resolve("before"), List.of());
    assertThat(before.errors()).isEmpty();
    assertThat(before.findings()).as("the tree has findings of every check that fixes").isNotEmpty();
    for (String check : patchable) {
      assertThat(before.findings()).as("the tree exercises %s", check).anyMatch(f -> f.startsWith(check + " "));
    }
    Map<String, String> original = read(sources);

    // A fix can bring to light a mistake its finding hid: a dropped copy, once kept, may be a policy
    // built per call. Patch mode is run again, as a user would, until nothing is left to patch.
    List<String> left = before.findings();
    int rounds = 0;
    while (!left.isEmpty() && rounds < 3) {
      rounds++;
      Result patching = compile(sources, work.resolve("patching" + rounds),
          List.of("-XepPatchChecks:" + String.join(",", patchable), "-XepPatchLocation:IN_PLACE"));
      assertThat(patching.errors()).isEmpty();
      Result after = compile(sources, work.resolve("after" + rounds), List.of());
      assertThat(after.errors()).as("the tree compiles after round %s of patching; it reads:%n%s", rounds,
          read(sources).get("shop/Storefront.java")).isEmpty();
      if (rounds == 1) {
        assertThat(after.findings()).as("the first round leaves no dropped copy")
            .noneMatch(f -> f.startsWith("QuellDiscardedConfiguration "));
      }
      left = after.findings().stream()
          .filter(f -> patchable.stream().anyMatch(check -> f.startsWith(check + " "))).toList();
    }
    assertThat(read(sources)).as("patch mode changed the tree").isNotEqualTo(original);
    assertThat(left).as("no finding of a check that patched the tree is left; the tree now reads:%n%s",
        read(sources).get("shop/Storefront.java")).isEmpty();
    assertThat(rounds).as("a fix reveals at most one more round of work").isLessThanOrEqualTo(2);
    assertThat(read(sources).get("shop/Settings.java")).as("the copy is kept, then the policy is hoisted")
        .contains("BASE.withAttempts(2).withDeadline(Duration.ofSeconds(5));")
        .contains("policy = policy.withDeadline(Duration.ofMinutes(1));");
  }

  private record Result(List<String> errors, List<String> findings) {}

  /** javac with Error Prone and every Quell check on, as a user's build runs it. */
  private static Result compile(Path sources, Path classes, List<String> extra) throws IOException {
    Files.createDirectories(classes);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    StringBuilder plugin = new StringBuilder("-Xplugin:ErrorProne -XepDisableAllChecks");
    for (Class<?> check : Registration.checks()) {
      plugin.append(" -Xep:").append(check.getSimpleName());
    }
    extra.forEach(option -> plugin.append(' ').append(option));
    String classpath = System.getProperty("java.class.path");
    List<String> options = List.of("-d", classes.toString(), "-classpath", classpath, "-processorpath", classpath,
        "-proc:none", "-XDcompilePolicy=simple", "--should-stop=ifError=FLOW", plugin.toString());
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null);
        Stream<Path> walk = Files.walk(sources)) {
      List<Path> java = walk.filter(p -> p.toString().endsWith(".java")).sorted().toList();
      // patch mode tells the console which files it rewrote; the test reads the files instead
      java.io.StringWriter said = new java.io.StringWriter();
      javac.getTask(said, files, diagnostics, options, null, files.getJavaFileObjectsFromPaths(java)).call();
    }
    List<String> errors = new ArrayList<>();
    List<String> findings = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      String message = d.getMessage(Locale.ROOT);
      String where = (d.getSource() == null ? "" : Path.of(d.getSource().toUri()).getFileName()) + ":" + d.getLineNumber();
      if (message.startsWith("[Quell")) {
        findings.add(message.substring(1, message.indexOf(']')) + " " + where);
      } else if (d.getKind() == Diagnostic.Kind.ERROR) {
        errors.add(where + " " + message);
      }
    }
    return new Result(errors, findings);
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : walk.filter(Files::isRegularFile).toList()) {
        write(to.resolve(from.relativize(p).toString()), Files.readString(p));
      }
    }
  }

  private static Map<String, String> read(Path root) throws IOException {
    Map<String, String> texts = new java.util.TreeMap<>();
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.filter(Files::isRegularFile).toList()) {
        texts.put(root.relativize(p).toString().replace('\\', '/'), Files.readString(p));
      }
    }
    return texts;
  }

  private static void write(Path file, String text) {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
