package dev.quell.sim;

import dev.quell.sim.KneeBenchmark.Contender;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Prints the adaptive-limit benchmark with every contender, Netflix's included, when asked:
 * {@code -Dquell.benchmark=all} (or variant names); {@code -Dquell.contenders=quell} runs Quell's
 * alone; {@code -Dquell.charts=docs/img} also draws the limit over time on the knee and the moving
 * knee as SVG charts there; {@code -Dquell.seed=N} runs another seed than the documented 1.
 */
class KneeBenchmarkPrint {
  private static final String[] COLOURS = {"#1f77b4", "#7f7f7f", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e"};

  @Test
  void print() throws IOException {
    String which = System.getProperty("quell.benchmark");
    Assumptions.assumeTrue(which != null, "run with -Dquell.benchmark=all to print the table");
    List<Contender> contenders = new ArrayList<>(Contender.builtIn());
    if ("quell".equals(System.getProperty("quell.contenders"))) {
      contenders = List.of(Contender.quellAdaptive());
    } else {
      contenders.addAll(NetflixContenders.all());
    }
    String charts = System.getProperty("quell.charts");
    long seed = Long.getLong("quell.seed", 1);
    List<KneeBenchmark.Row> rows = new ArrayList<>();
    for (KneeBenchmark.Variant v : KneeBenchmark.variants()) {
      if ("all".equals(which) || List.of(which.split(",")).contains(v.name())) {
        KneeBenchmark.Row row = KneeBenchmark.row(v, contenders, seed);
        rows.add(row);
        System.out.print(KneeBenchmark.table(List.of(row)));
        if (charts != null && (v.name().equals("knee") || v.name().equals("knee-moves"))) {
          Files.writeString(Path.of(charts, "adaptive-" + v.name() + ".svg"), svg(row), StandardCharsets.UTF_8);
        }
      }
    }
    System.out.println(KneeBenchmark.markdown(rows));
  }

  /** The limit of each contender every 100 ms, and the knee, as a self-contained SVG chart. */
  static String svg(KneeBenchmark.Row row) {
    int w = 900;
    int h = 420;
    int left = 50;
    int top = 30;
    int plotW = w - left - 190;
    int plotH = h - top - 40;
    double maxLimit = 300;
    KneeBenchmark.Variant v = row.variant();
    int points = row.runs().get(0).limitSeries().length;
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
        + " font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", w, h));
    s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\" font-size=\"14\">%s: the limit over time (%s)</text>%n",
        left, v.name(), v.description()));
    for (int y = 0; y <= maxLimit; y += 50) {
      double py = top + plotH - y / maxLimit * plotH;
      s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
          + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d</text>%n", left, py, left + plotW, py, left - 5, py + 4, y));
    }
    int seconds = (int) v.duration().toSeconds();
    for (int t = 0; t <= seconds; t += 5) {
      double px = left + t / (double) seconds * plotW;
      s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d s</text>%n", px,
          top + plotH + 16, t));
    }
    // the band [K/2, 3K/2] and the knee
    StringBuilder knee = new StringBuilder();
    StringBuilder band = new StringBuilder();
    for (int i = 0; i < points; i++) {
      double px = left + i / (double) points * plotW;
      int k = v.kneeAt(i * 100 * KneeBenchmark.MS);
      knee.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, top + plotH - k / maxLimit * plotH));
      band.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, top + plotH - 1.5 * k / maxLimit * plotH));
    }
    for (int i = points - 1; i >= 0; i--) {
      double px = left + i / (double) points * plotW;
      int k = v.kneeAt(i * 100 * KneeBenchmark.MS);
      band.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, top + plotH - 0.5 * k / maxLimit * plotH));
    }
    s.append("<polygon points=\"").append(band).append("\" fill=\"#f3f3f3\"/>\n");
    s.append("<polyline points=\"").append(knee).append("\" fill=\"none\" stroke=\"black\" stroke-dasharray=\"6,4\"/>\n");
    for (int c = 0; c < row.runs().size(); c++) {
      KneeBenchmark.Run r = row.runs().get(c);
      StringBuilder line = new StringBuilder();
      double[] series = r.limitSeries();
      for (int i = 0; i < series.length; i++) {
        double px = left + i / (double) points * plotW;
        double py = top + plotH - Math.min(maxLimit, series[i]) / maxLimit * plotH;
        line.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
      }
      String colour = COLOURS[c % COLOURS.length];
      s.append("<polyline points=\"").append(line).append("\" fill=\"none\" stroke=\"").append(colour)
          .append(c == 0 ? "\" stroke-width=\"2.5\"/>\n" : "\" stroke-width=\"1.2\"/>\n");
      s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>"
          + "<text x=\"%d\" y=\"%d\">%s (%.0f%% of best fixed)</text>%n", left + plotW + 10, top + 10 + c * 18,
          left + plotW + 30, top + 10 + c * 18, colour, left + plotW + 35, top + 14 + c * 18, r.contender(),
          r.goodputShare(row.bestFixed()) * 100));
    }
    s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">- - knee K; grey: [K/2, 3K/2]</text>%n",
        left + plotW + 10, top + 14 + row.runs().size() * 18));
    s.append("</svg>\n");
    return s.toString();
  }
}
