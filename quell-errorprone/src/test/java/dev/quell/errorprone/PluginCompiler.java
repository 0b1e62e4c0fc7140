package dev.quell.errorprone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

/**
 * Compiles sources the way a user's build does: javac with {@code -Xplugin:ErrorProne}, the checks
 * found on the processor path through their {@code META-INF/services} registration (not handed to
 * Error Prone by a test helper), each at its default severity.
 */
final class PluginCompiler {
  private static final Pattern CHECK = Pattern.compile("^\\[(\\w+)\\]");

  /** One diagnostic from a Quell check. */
  record Finding(String check, long line, String message) {}

  private PluginCompiler() {}

  /** What a compilation gave: the findings of Quell's checks, and the compiler's own errors. */
  record Compiled(List<Finding> findings, List<String> errors) {}

  /** Compiles {@code sources} (file name to text) and returns the findings of Quell's checks. */
  static List<Finding> quellFindings(Map<String, String> sources) {
    return compile(sources).findings();
  }

  /** Compiles {@code sources} (file name to text) with every Quell check on. */
  static Compiled compile(Map<String, String> sources) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    List<JavaFileObject> files = new ArrayList<>();
    sources.forEach((name, text) -> files.add(new Source(name, text)));
    Path out;
    try {
      out = Files.createTempDirectory("quell-errorprone-classes");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String classpath = System.getProperty("java.class.path");
    // Error Prone's own ~400 checks are turned off to keep the tests quick; Quell's are named, so
    // they must still be found through the services registration, as in a user's build
    StringBuilder plugin = new StringBuilder("-Xplugin:ErrorProne -XepDisableAllChecks");
    try {
      for (Class<?> check : Registration.checks()) {
        plugin.append(" -Xep:").append(check.getSimpleName());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> options = List.of(
        "-d", out.toString(),
        "-classpath", classpath,
        "-processorpath", classpath,
        "-proc:none",
        "-XDcompilePolicy=simple",
        "--should-stop=ifError=FLOW",
        plugin.toString());
    javac.getTask(null, null, diagnostics, options, null, files).call();
    List<Finding> findings = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      String message = d.getMessage(Locale.ROOT);
      Matcher m = CHECK.matcher(message);
      if (m.find() && m.group(1).startsWith("Quell")) {
        findings.add(new Finding(m.group(1), d.getLineNumber(), message));
      } else if (d.getKind() == Diagnostic.Kind.ERROR) {
        errors.add((d.getSource() == null ? "" : d.getSource().getName()) + ":" + d.getLineNumber() + " " + message);
      }
    }
    return new Compiled(findings, errors);
  }

  private static final class Source extends SimpleJavaFileObject {
    private final String text;

    Source(String name, String text) {
      super(URI.create("string:///" + name), Kind.SOURCE);
      this.text = text;
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return text;
    }
  }
}
