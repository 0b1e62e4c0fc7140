package dev.quell.cli.internal;

import dev.quell.sim.ScenarioResult;
import java.util.List;

/**
 * One self-contained HTML file: the table, the charts as inline SVG, the diagnosis and the scenario
 * that ran. It loads nothing: no script, no style sheet, no font or image from anywhere else, so it
 * opens the same from a laptop on a plane or attached to a ticket.
 */
final class HtmlReport {
  private static final String STYLE = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;"
      + "max-width:1240px;padding:0 1em;color:#222;line-height:1.45}"
      + "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd}"
      + "table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
      + "td,th{padding:.25em .8em;border-bottom:1px solid #eee;text-align:right}"
      + "td:first-child,th:first-child{text-align:left}th{background:#f6f6f6}"
      + ".story{font-size:1.05em;background:#f4f4f4;border-left:4px solid #888;padding:.6em 1em}"
      + "figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}"
      + "pre{background:#f8f8f8;padding:1em;overflow:auto;font-size:.9em}.muted{color:#777;font-size:.9em}";

  private HtmlReport() {}

  static String run(ScenarioResult result, List<String> story, String chartSvg, String scenarioText, String command,
      String version) {
    StringBuilder h = head("quell simulate: " + result.scenario().name());
    h.append("<h1>quell simulate: ").append(esc(result.scenario().name())).append("</h1>\n");
    h.append("<p>").append(esc(result.scenario().description())).append("</p>\n");
    long[] seeds = result.seeds();
    h.append("<p class=\"muted\">").append(seeds.length == 1 ? "Seed " + seeds[0]
        : seeds.length + " seeds; cells show median [min–max]").append("</p>\n");
    if (!story.isEmpty()) {
      h.append("<div class=\"story\">");
      for (String line : story) {
        h.append("<p>").append(esc(line)).append("</p>");
      }
      h.append("</div>\n");
    }
    h.append("<h2>Results</h2>\n");
    table(h, result.tableRows(), true);
    h.append("<h2>Diagnosis</h2>\n<ul>\n");
    for (ScenarioResult.ArmResult a : result.arms()) {
      h.append("<li><b>").append(esc(a.name())).append("</b>: ").append(esc(a.first().diagnosis().label()))
          .append(" — ").append(esc(a.first().explanation())).append("</li>\n");
    }
    h.append("</ul>\n<h2>Charts</h2>\n<figure id=\"run-chart\">").append(chartSvg).append("</figure>\n");
    tail(h, scenarioText, command, version);
    return h.toString();
  }

  static String sweep(SweepResult sweep, String chartSvg, String scenarioText, String command, String version) {
    StringBuilder h = head("quell simulate: sweep of " + sweep.key());
    h.append("<h1>quell simulate: ").append(esc(sweep.scenarioName())).append(", sweep of ").append(esc(sweep.key()))
        .append("</h1>\n");
    h.append("<p>Each value of <code>").append(esc(sweep.key())).append("</code> ran with the same seeds; the chart"
        + " prices the trade: this client's availability against the worst second its retries put on the"
        + " dependency.</p>\n");
    h.append("<h2>Results</h2>\n");
    table(h, sweep.rows(), true);
    h.append("<h2>Charts</h2>\n<figure id=\"trade-off-chart\">").append(chartSvg).append("</figure>\n");
    tail(h, scenarioText, command, version);
    return h.toString();
  }

  private static StringBuilder head(String title) {
    StringBuilder h = new StringBuilder(64 * 1024);
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>").append(esc(title))
        .append("</title>\n<style>").append(STYLE).append("</style>\n</head>\n<body>\n");
    return h;
  }

  private static void tail(StringBuilder h, String scenarioText, String command, String version) {
    h.append("<h2>The scenario</h2>\n<p>Command: <code>").append(esc(command)).append("</code></p>\n<pre>")
        .append(esc(scenarioText)).append("</pre>\n<p class=\"muted\">").append(esc(version))
        .append("</p>\n</body>\n</html>\n");
  }

  private static void table(StringBuilder h, List<List<String>> rows, boolean header) {
    h.append("<table>\n");
    for (int r = 0; r < rows.size(); r++) {
      boolean th = header && r == 0;
      h.append("<tr>");
      for (String cell : rows.get(r)) {
        h.append(th ? "<th>" : "<td>").append(esc(cell)).append(th ? "</th>" : "</td>");
      }
      h.append("</tr>\n");
    }
    h.append("</table>\n");
  }

  static String esc(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<': out.append("&lt;"); break;
        case '>': out.append("&gt;"); break;
        case '&': out.append("&amp;"); break;
        case '"': out.append("&quot;"); break;
        default: out.append(c);
      }
    }
    return out.toString();
  }
}
