package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The README's "depend on it today" section names the version this clone builds, in both build tools. */
class ReadmeTest {
  @Test
  void theCoordinatesInTheReadmeCarryTheBuildsVersion() throws Exception {
    String version = System.getProperty("quell.expected.version");
    assertThat(version).isNotBlank();
    String readme = Files.readString(Path.of("..", "README.md"));
    assertThat(readme).contains("./mvnw -q install -DskipTests")
        .contains("<groupId>dev.quell</groupId>\n  <artifactId>quell-core</artifactId>\n  <version>" + version
            + "</version>")
        .contains("implementation(\"dev.quell:quell-core:" + version + "\")");
    // and no other version of ours anywhere in it
    Matcher m = Pattern.compile("dev\\.quell:[a-z-]+:([0-9][^\"\\s]*)").matcher(readme);
    while (m.find()) {
      assertThat(m.group(1)).isEqualTo(version);
    }
  }
}
