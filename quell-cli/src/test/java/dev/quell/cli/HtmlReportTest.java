package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §9: {@code --html} writes one self-contained file (the table, the charts as inline SVG, the
 * diagnosis and the scenario) that opens with no network. Where Chromium is installed, a headless
 * Chromium renders it and the test checks that the charts show.
 */
class HtmlReportTest {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final int RED = 0xD62728; // the first arm's colour, used only in the charts
  private static final int BLUE = 0x1F77B4; // the second arm's

  @TempDir
  Path dir;

  private final QuellRunner quell = new QuellRunner();

  private String report(Path html, String... more) throws Exception {
    List<String> args = new ArrayList<>(List.of("simulate", "--no-chart", "--html", html.toString()));
    args.addAll(List.of(more));
    assertThat(quell.run(args.toArray(new String[0]))).as(quell.err()).isZero();
    assertThat(quell.out()).contains("Report: " + html.toAbsolutePath());
    return Files.readString(html);
  }

  @Test
  void theReportCarriesTheTableTheChartsTheDiagnosisAndTheScenarioAndLoadsNothing() throws Exception {
    String page = report(dir.resolve("report.html"));
    assertThat(page).startsWith("<!DOCTYPE html>")
        .contains("<table>", "load multiplier", "worst second", "budget off", "budget on")
        .contains("<svg", "id=\"run-chart\"")
        .contains("retry storm", "healthy", "In one line: the budget cost this client")
        .contains("name: reference", "brownout: 8", "quell simulate --no-chart --html");
    selfContained(page);
  }

  @Test
  void aSweepReportCarriesTheTradeOff() throws Exception {
    String page = report(dir.resolve("sweep.html"), "--sweep", "budget.fraction=0.05,0.5");
    assertThat(page).contains("<svg", "id=\"trade-off-chart\"", "budget.fraction", "0.05", "0.5",
        "# swept: budget.fraction = 0.05, 0.5");
    selfContained(page);
  }

  /** Nothing to fetch: no script, style sheet, image, font or frame from anywhere (the SVG's clip paths are local). */
  private static void selfContained(String page) {
    assertThat(page).doesNotContainPattern("(?i)<script|<link|<img|<iframe|@import|url\\((?!#)|src=|href=");
    // namespace names (xmlns="http://www.w3.org/2000/svg") are identifiers, never fetched
    String withoutNamespaces = page.replaceAll("xmlns(:\\w+)?=(['\"])[^'\"]*\\2", "");
    assertThat(withoutNamespaces).doesNotContain("http://").doesNotContain("https://");
  }

  @Test
  void headlessChromiumShowsTheCharts() throws Exception {
    assumeTrue(Files.isExecutable(CHROMIUM), "Chromium is not installed, so the report is not rendered here;"
        + " install it (Debian: apt-get install -y chromium) to run this test. .ci/run installs it.");
    Path html = dir.resolve("report.html");
    report(html);
    Path shot = dir.resolve("shot.png");
    Path profile = Files.createDirectories(dir.resolve("profile"));
    // the flags this machine needs (docs: java-maven machine notes): no sandbox as root, no GPU, and no
    // background connections, which a closed network refuses
    List<String> command = List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--user-data-dir=" + profile, "--hide-scrollbars", "--window-size=1280,2600",
        "--screenshot=" + shot, html.toUri().toString());
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("chromium.log").toFile())
        .start();
    try {
      assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("Chromium finished").isTrue();
    } finally {
      p.destroyForcibly();
    }
    assertThat(shot).as(Files.readString(dir.resolve("chromium.log"))).exists();
    BufferedImage image = ImageIO.read(shot.toFile());
    assertThat(image.getWidth()).isEqualTo(1280);
    // the arms' colours appear only in the charts: drawn, they cover thousands of pixels
    assertThat(pixels(image, RED)).as("red pixels (budget off's lines)").isGreaterThan(2000);
    assertThat(pixels(image, BLUE)).as("blue pixels (budget on's lines)").isGreaterThan(2000);
  }

  private static int pixels(BufferedImage image, int rgb) {
    int count = 0;
    for (int y = 0; y < image.getHeight(); y++) {
      for (int x = 0; x < image.getWidth(); x++) {
        int p = image.getRGB(x, y) & 0xFFFFFF;
        if (close(p >> 16, rgb >> 16) && close((p >> 8) & 0xFF, (rgb >> 8) & 0xFF) && close(p & 0xFF, rgb & 0xFF)) {
          count++;
        }
      }
    }
    return count;
  }

  private static boolean close(int a, int b) {
    return Math.abs((a & 0xFF) - (b & 0xFF)) <= 24;
  }
}
