package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 23: the figures a page quotes from the simulator cannot drift from what the simulator says.
 * Every output block in the docs that follows a {@code ./quell simulate ...} block is the output of
 * that command, run here: each table row it shows (a line with columns) is a row of the real output,
 * and each paragraph of prose in it (the diagnoses, the line about what the budget did) is, with its
 * line breaks as spaces, a run of the real output's words. A block may leave rows out; it may not
 * show one the command does not print. Lines that depend on the machine (CPU time, where the chart
 * went) are not compared. When this fails, the message holds the real output to paste; and
 * {@code ./mvnw -pl quell-sim,quell-cli verify -Dtest=DocsFiguresTest -Dquell.docs.rewrite=true}
 * rewrites each stale table row in the page with the real row of the same label (prose is left to
 * a person, and the run still fails so the change is seen).
 *
 * <p>Speed figures depend on the machine; the pages give the command next to them instead, and no
 * test asserts them.
 */
class DocsFiguresTest {
  private static final List<String> PAGES = List.of("simulation.md", "testing.md");

  /** One command block and the output block after it. */
  record Example(String page, int line, String command, List<String> shown, int firstLine) {
    @Override
    public String toString() {
      return page + ":" + line + " " + command;
    }
  }

  static Stream<Arguments> examples() throws IOException {
    List<Arguments> all = new ArrayList<>();
    for (String page : PAGES) {
      Path file = Path.of("..", "docs", page);
      if (!Files.exists(file)) {
        continue;
      }
      List<String> lines = Files.readAllLines(file);
      List<int[]> blocks = new ArrayList<>(); // [first content line, end line (the closing fence)]
      for (int i = 0; i < lines.size(); i++) {
        if (lines.get(i).startsWith("```")) {
          int start = i + 1;
          int end = start;
          while (end < lines.size() && !lines.get(end).startsWith("```")) {
            end++;
          }
          if (lines.get(i).trim().equals("```")) { // plain blocks only: commands and their output
            blocks.add(new int[] {start, end});
          }
          i = end;
        }
      }
      for (int b = 0; b + 1 < blocks.size(); b++) {
        int[] cmd = blocks.get(b);
        int[] out = blocks.get(b + 1);
        if (cmd[1] - cmd[0] != 1 || !lines.get(cmd[0]).startsWith("./quell simulate")) {
          continue;
        }
        String command = lines.get(cmd[0]).trim();
        boolean adjacent = true;
        for (int i = cmd[1] + 1; i < out[0] - 1; i++) {
          adjacent &= lines.get(i).isBlank();
        }
        if (!adjacent || command.contains("[") || command.contains("...") || command.contains("--html")
            || command.contains("--json") || command.contains("--csv")) {
          continue;
        }
        all.add(Arguments.of(new Example(page, cmd[0] + 1, command, List.copyOf(lines.subList(out[0], out[1])),
            out[0])));
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void theOutputADocShowsIsTheOutputOfItsCommand(Example example) throws IOException {
    List<String> args = new ArrayList<>(List.of(example.command().substring("./quell ".length()).split("\\s+")));
    args.add("--no-chart");
    QuellRunner quell = new QuellRunner();
    int code = quell.run(args.toArray(new String[0]));
    String out = quell.out();
    assertThat(code).as(quell.err()).isEqualTo(0);

    Set<String> rows = new HashSet<>();
    // rows by label, in order: "  before (0:00–2:00)" is a row under the load multiplier and again under availability
    Map<String, List<String>> byLabel = new HashMap<>();
    for (String line : out.split("\n")) {
      rows.add(collapse(line));
      if (line.contains("   ")) {
        byLabel.computeIfAbsent(label(line), k -> new ArrayList<>()).add(line);
      }
    }
    Map<String, Integer> seen = new HashMap<>();
    Map<Integer, String> rewrites = new HashMap<>();
    String words = collapse(out);
    List<String> missing = new ArrayList<>();
    StringBuilder paragraph = new StringBuilder();
    for (int i = 0; i < example.shown().size(); i++) {
      String line = example.shown().get(i);
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("Chart: ") || trimmed.startsWith("Simulated ")
          || trimmed.startsWith("Report: ")) {
        check(paragraph, words, missing);
        continue;
      }
      if (trimmed.contains("   ")) { // a table row: columns are three spaces or more apart
        check(paragraph, words, missing);
        String label = label(line);
        int occurrence = seen.merge(label, 1, Integer::sum) - 1;
        if (!rows.contains(collapse(line))) {
          missing.add(line);
          List<String> candidates = byLabel.getOrDefault(label, List.of());
          if (!label.isEmpty() && occurrence < candidates.size()) {
            rewrites.put(example.firstLine() + i, candidates.get(occurrence));
          }
        }
      } else {
        paragraph.append(' ').append(trimmed);
      }
    }
    check(paragraph, words, missing);
    if (Boolean.getBoolean("quell.docs.rewrite") && !rewrites.isEmpty()) {
      rewrite(example.page(), rewrites);
    }
    assertThat(missing)
        .as("%s: lines the page shows that `%s` does not print; its output now is:%n%s", example, example.command(),
            out)
        .isEmpty();
  }

  private static void check(StringBuilder paragraph, String words, List<String> missing) {
    String p = collapse(paragraph.toString());
    if (!p.isEmpty() && !words.contains(p)) {
      missing.add(p);
    }
    paragraph.setLength(0);
  }

  /** A table row's label: what comes before the first gap of three spaces (the header row's is empty). */
  private static String label(String line) {
    String t = line.stripTrailing();
    int gap = t.indexOf("   ");
    return gap < 0 ? t.strip() : t.substring(0, gap).strip();
  }

  private static synchronized void rewrite(String page, Map<Integer, String> rewrites) throws IOException {
    Path file = Path.of("..", "docs", page);
    List<String> lines = new ArrayList<>(Files.readAllLines(file));
    for (Map.Entry<Integer, String> r : rewrites.entrySet()) {
      lines.set(r.getKey(), r.getValue().stripTrailing());
    }
    Files.write(file, lines);
  }

  private static String collapse(String s) {
    return s.strip().replaceAll("\\s+", " ");
  }
}
