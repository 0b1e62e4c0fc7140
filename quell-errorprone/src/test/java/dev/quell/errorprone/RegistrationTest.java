package dev.quell.errorprone;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.errorprone.BugPattern;
import com.google.errorprone.bugpatterns.BugChecker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class RegistrationTest {

  @Test
  void theServicesFileListsEveryCheck() throws IOException {
    Set<String> checks = Registration.checks().stream().map(Class::getName).collect(Collectors.toCollection(TreeSet::new));
    assertThat(checks).hasSize(9);
    String services = Files.readString(Path.of("target/classes").resolve(Registration.SERVICES));
    assertThat(Registration.listed(services)).isEqualTo(checks);
  }

  @Test
  void errorPronesLoaderFindsEveryCheck() throws IOException {
    Set<String> loaded = ServiceLoader.load(BugChecker.class).stream().map(p -> p.type().getName())
        .filter(n -> n.startsWith("dev.quell.")).collect(Collectors.toCollection(TreeSet::new));
    assertThat(loaded).isEqualTo(Registration.checks().stream().map(Class::getName)
        .collect(Collectors.toCollection(TreeSet::new)));
  }

  @Test
  void everyCheckLinksToItsOwnSectionOfThePageAtAnAddressAUserCanOpen() throws IOException {
    String page = Files.readString(Path.of("..").resolve(Docs.PATH));
    List<String> headings = page.lines().filter(l -> l.startsWith("## ")).map(l -> l.substring(3).trim()).toList();
    for (Class<?> check : Registration.checks()) {
      BugPattern pattern = check.getAnnotation(BugPattern.class);
      assertThat(pattern.linkType()).isEqualTo(BugPattern.LinkType.CUSTOM);
      assertThat(pattern.link())
          .startsWith("https://")
          .isEqualTo(Docs.REPOSITORY + "/blob/main/docs/errorprone.md#" + check.getSimpleName().toLowerCase(Locale.ROOT));
      assertThat(headings).as("a section '## %s' in %s", check.getSimpleName(), Docs.PATH)
          .contains(check.getSimpleName());
      assertThat(pattern.summary()).isNotBlank();
    }
  }

  @Test
  void theLinksPointAtTheRepositoryThePomNames() throws IOException {
    String pom = Files.readString(Path.of("..", "pom.xml"));
    Matcher url = Pattern.compile("<url>([^<]+)</url>").matcher(pom.substring(0, pom.indexOf("<properties>")));
    assertThat(url.find()).as("the root pom names the project's <url>").isTrue();
    assertThat(Docs.REPOSITORY).isEqualTo(url.group(1));
  }

  @Test
  void aDiagnosticCarriesTheAbsoluteLink() {
    List<PluginCompiler.Finding> findings = PluginCompiler.quellFindings(java.util.Map.of("Limits.java", """
        class Limits {
          int free() {
            return dev.quell.Limiter.concurrency(4).available();
          }
        }
        """));
    assertThat(findings).singleElement().satisfies(f -> assertThat(f.message())
        .contains("(see " + Docs.REPOSITORY + "/blob/main/docs/errorprone.md#quellguardpercall)"));
  }
}
