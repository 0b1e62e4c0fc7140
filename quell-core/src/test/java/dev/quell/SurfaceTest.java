package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What a user of quell-core meets: the module's exports, and the public types of the API package. */
class SurfaceTest {
  private static final Path CLASSES = Path.of("target/classes");

  @Test
  void theModuleExportsTheApiAndLendsItsInternalsOnlyToQuellsOwnModules() {
    ModuleReference ref = ModuleFinder.of(CLASSES).find("dev.quell").orElseThrow();
    ModuleDescriptor module = ref.descriptor();
    Set<String> open = module.exports().stream().filter(e -> !e.isQualified())
        .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
    assertThat(open).containsExactly("dev.quell");
    ModuleDescriptor.Exports internal = module.exports().stream()
        .filter(e -> e.source().equals("dev.quell.internal")).findFirst().orElseThrow();
    assertThat(internal.targets()).isNotEmpty().allMatch(t -> t.startsWith("dev.quell."));
    assertThat(module.opens()).as("nothing is open to reflection").isEmpty();
    assertThat(module.requires().stream().filter(r -> !r.name().equals("java.base"))
        .allMatch(r -> r.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC)))
        .as("no runtime dependency").isTrue();
  }

  @Test
  void thePublicTypesOfTheApiAreTheDocumentedOnes() throws IOException {
    Set<String> found = new TreeSet<>();
    try (Stream<Path> files = Files.list(CLASSES.resolve("dev/quell"))) {
      for (Path p : (Iterable<Path>) files::iterator) {
        String file = p.getFileName().toString();
        if (!file.endsWith(".class") || file.contains("$") || file.equals("package-info.class")) {
          continue;
        }
        String name = file.substring(0, file.length() - ".class".length());
        try {
          Class<?> type = Class.forName("dev.quell." + name, false, getClass().getClassLoader());
          if (Modifier.isPublic(type.getModifiers())) {
            found.add(name);
          }
        } catch (ClassNotFoundException e) {
          throw new AssertionError(e);
        }
      }
    }
    assertThat(found).containsExactlyInAnyOrderElementsOf(PUBLIC_TYPES);
  }

  @Test
  void docsPolicyMdListsEveryPublicType() throws IOException {
    String doc = Files.readString(Path.of("../docs/policy.md"));
    String section = doc.substring(doc.indexOf("## The public surface"));
    for (String type : PUBLIC_TYPES) {
      assertThat(section).as("docs/policy.md's public surface names %s", type).contains("`" + type + "`");
    }
  }

  /** The public types of {@code dev.quell}; docs/policy.md, "The public surface", lists the same. */
  static final Set<String> PUBLIC_TYPES = Set.of(
      "Attempt", "AttemptTimeoutException", "Backoff", "CallRejectedException", "CircuitBreaker", "Classifier",
      "Criticality", "DeadlineExceededException", "Draining", "Hedge", "Jitter", "Limiter", "MeasuredTiming",
      "Outcome", "PolicyScope", "RateLimitedException",
      "Resilience", "ResilienceConfigurationException", "ResilienceContext", "ResilienceEvent", "ResilienceException",
      "ResilienceListener", "RetryBudget", "StopReason", "TimeSource", "Verdict");
}
