package dev.quell.errorprone;

import com.google.errorprone.BugPattern;
import com.google.errorprone.bugpatterns.BugChecker;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The registration Error Prone's plugin loader reads: {@code META-INF/services/...BugChecker},
 * which must list every check. Without it every check vanishes silently, so the build checks it
 * twice: in the compiled classes (a test) and in the packaged jar ({@link #main}, run at verify).
 */
public final class Registration {
  static final String SERVICES = "META-INF/services/" + BugChecker.class.getName();

  private Registration() {}

  /** The checks that suggest fixes, by name: those patch mode can apply. */
  static List<String> fixable() {
    return List.of("QuellGuardPerCall", "QuellDiscardedConfiguration");
  }

  /** Every check compiled from this module's sources: the BugChecker classes with a {@code @BugPattern}. */
  static List<Class<?>> checks() throws IOException {
    Path classes = Path.of("target/classes");
    List<Class<?>> checks = new ArrayList<>();
    try (Stream<Path> files = Files.walk(classes)) {
      for (Path p : files.filter(f -> f.toString().endsWith(".class")).sorted().toList()) {
        String name = classes.relativize(p).toString().replace('/', '.').replaceAll("\\.class$", "");
        Class<?> type = load(name);
        if (BugChecker.class.isAssignableFrom(type) && type.isAnnotationPresent(BugPattern.class)) {
          checks.add(type);
        }
      }
    }
    return checks;
  }

  private static Class<?> load(String name) {
    try {
      return Class.forName(name, false, Registration.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The class names a services file lists. */
  static Set<String> listed(String servicesFile) {
    return servicesFile.lines().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#"))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * Checks the packaged jar: it must hold the services file, and the file must list exactly the
   * classes in the jar that are checks. Run by the build at verify, after the jar is made.
   */
  public static void main(String[] args) throws IOException {
    Path jar = Path.of(args[0]);
    try (JarFile file = new JarFile(jar.toFile())) {
      JarEntry services = file.getJarEntry(SERVICES);
      if (services == null) {
        throw new IllegalStateException(jar + " has no " + SERVICES + ": Error Prone would load none of its checks");
      }
      String text;
      try (InputStream in = file.getInputStream(services)) {
        text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      Set<String> inJar = new TreeSet<>();
      file.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class"))
          .map(n -> n.replace('/', '.').replaceAll("\\.class$", ""))
          .filter(n -> {
            Class<?> type = load(n);
            return BugChecker.class.isAssignableFrom(type) && type.isAnnotationPresent(BugPattern.class);
          })
          .forEach(inJar::add);
      Set<String> listed = listed(text);
      if (inJar.isEmpty() || !inJar.equals(listed)) {
        throw new IllegalStateException(jar + ": " + SERVICES + " lists " + listed + " but the jar's checks are " + inJar);
      }
      System.out.println(jar.getFileName() + " registers " + listed.size() + " checks: " + listed);
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }
}
