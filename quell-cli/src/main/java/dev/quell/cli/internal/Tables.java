package dev.quell.cli.internal;

import java.util.List;

/** Plain-text tables and CSV cells. */
final class Tables {
  private Tables() {}

  /** Columns padded to line up: the first left-aligned, the rest right-aligned. */
  static String render(List<List<String>> rows) {
    int columns = rows.get(0).size();
    int[] widths = new int[columns];
    for (List<String> r : rows) {
      for (int c = 0; c < columns; c++) {
        widths[c] = Math.max(widths[c], r.get(c).length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (List<String> r : rows) {
      out.append(r.get(0)).append(" ".repeat(widths[0] - r.get(0).length()));
      for (int c = 1; c < columns; c++) {
        out.append("   ").append(" ".repeat(widths[c] - r.get(c).length())).append(r.get(c));
      }
      out.append('\n');
    }
    return out.toString();
  }

  static String csv(String s) {
    return s.contains(",") || s.contains("\"") || s.contains("\n") ? '"' + s.replace("\"", "\"\"") + '"' : s;
  }
}
