package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Issue 23: the figures docs/simulation.md quotes in its prose and its overload table, beyond the
 * output blocks {@link DocsFiguresTest} checks. Each claim names the command, the row of its table,
 * the arm and how the page rounds the cell; the page must say the sentence with that figure in it.
 */
class DocsProseFiguresTest {
  private static final Map<String, List<String[]>> RUNS = new HashMap<>();

  /** The table {@code quell simulate ARGS --no-chart} prints, as rows of cells (label first). */
  private static List<String[]> table(String args) {
    return RUNS.computeIfAbsent(args, a -> {
      List<String> argv = new ArrayList<>(List.of(("simulate " + a + " --no-chart").trim().split("\\s+")));
      QuellRunner quell = new QuellRunner();
      assertThat(quell.run(argv.toArray(new String[0]))).as(quell.err()).isZero();
      List<String[]> rows = new ArrayList<>();
      for (String line : quell.out().split("\n")) {
        if (line.contains("   ")) {
          String[] cells = line.strip().split("\\s{3,}");
          if (line.startsWith(" ") && !line.startsWith("  ") || line.startsWith("   ")) { // the header row
            String[] header = new String[cells.length + 1];
            header[0] = "";
            System.arraycopy(cells, 0, header, 1, cells.length);
            cells = header;
          } else if (line.startsWith("  ")) {
            cells[0] = "  " + cells[0];
          }
          rows.add(cells);
        }
      }
      return rows;
    });
  }

  /** The cell of {@code arm} in the {@code occurrence}-th (from 1) row labelled {@code row}. */
  private static String cell(String args, String row, int occurrence, String arm) {
    List<String[]> rows = table(args);
    int column = List.of(rows.get(0)).indexOf(arm);
    assertThat(column).as("arm %s in %s", arm, args).isPositive();
    int seen = 0;
    for (String[] r : rows) {
      if (r[0].equals(row) && ++seen == occurrence) {
        return r[column];
      }
    }
    throw new AssertionError("no row '" + row + "' (" + occurrence + ") in the output of quell simulate " + args);
  }

  private static final UnaryOperator<String> AS_IS = s -> s;
  /** "1.91× at 2:32" → "1.91×". */
  private static final UnaryOperator<String> WITHOUT_WHEN = s -> s.replaceFirst(" at .*", "");
  /** "87.4%" → "87%". */
  private static final UnaryOperator<String> WHOLE_PERCENT = s -> Math.round(Double.parseDouble(s.replace("%", "")))
      + "%";
  /** "63.57" → "63.6". */
  private static final UnaryOperator<String> ONE_DECIMAL = s -> String.format(Locale.ROOT, "%.1f",
      Double.parseDouble(s));
  /** "237 of 400" → "237"; "47 s" → "47". */
  private static final UnaryOperator<String> FIRST_WORD = s -> s.split(" ")[0];

  private final String page = read();

  private static String read() {
    try {
      // the page's line breaks are spaces to a reader
      return Files.readString(Path.of("..", "docs", "simulation.md")).replaceAll("\\s+", " ");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private void says(String sentence, String args, String row, int occurrence, String arm, UnaryOperator<String> format) {
    String figure = format.apply(cell(args, row, occurrence, arm));
    String expected = sentence.replace("{}", figure);
    // a message of its own: the page itself is too long to print
    assertThat(page.contains(expected)).as("docs/simulation.md should say \"%s\" (quell simulate %s: %s, %s)",
        expected, args, row.strip(), arm).isTrue();
  }

  @Test
  void theReferenceScenarioAsThePageTellsIt() {
    String during = "  during brownout ×8 (2:00–3:00)";
    says("{} on average over the minute", "", during, 1, "budget off", AS_IS);
    says("{} in the worst second", "", "worst second", 1, "budget off", WITHOUT_WHEN);
    says("drains in the first second of the brownout ({}, the worst second)", "", "worst second", 1, "budget on",
        WITHOUT_WHEN);
    says("dependency sees about {} the offered calls", "", during, 1, "budget on", AS_IS);
    says("peaks at {} of its 400 slots", "", "peak occupancy of dependency", 1, "budget off", FIRST_WORD);
    says("during the brownout is {} without the budget", "", during, 2, "budget off", WHOLE_PERCENT);
    says("without the budget and {} with it", "", during, 2, "budget on", WHOLE_PERCENT);
  }

  @Test
  void theOtherScenariosAsThePageTellsThem() {
    says("the calls are back {} seconds after the brownout", "--scenario sixteen-pods", "time to recover", 1,
        "budget on", FIRST_WORD);
    says("The offered calls alone need {} of the", "--scenario fleet", "first attempts alone need", 1, "budget off",
        s -> WHOLE_PERCENT.apply(FIRST_WORD.apply(s)));
    says("each call puts {} attempts on the database while it is down", "--scenario topology", "  during outage", 3,
        "budgets off", ONE_DECIMAL);
    says("automatic budget, {}.", "--scenario topology", "  during outage", 3, "budgets on", ONE_DECIMAL);

    String outage = "--scenario outage";
    String during = "  during outage (1:00–2:00)";
    says("({}) for the whole minute", outage, during, 1, "budget only", AS_IS);
    says("lets through only its probes: {} with the breaker alone", outage, during, 1, "breaker only", AS_IS);
    says("with the breaker alone, {} with both", outage, during, 1, "both", AS_IS);
    says("both, {} calls never did", outage, "calls that never reached dependency", 1, "both", AS_IS);
    says("{}, a retry storm)", outage, "worst second", 1, "breaker only", WITHOUT_WHEN);
    says("refusing the rest: {} and", outage, "time to recover", 1, "breaker only", AS_IS);
    says("and {} here.", outage, "time to recover", 1, "both", AS_IS);
    says("on ({} for the minute,", outage, during, 1, "throttle 10s", AS_IS);
    says("for the minute, {} calls refused locally", outage, "attempts refused by limiters", 1, "throttle 10s", AS_IS);
    says("and the calls are back last: {}.", outage, "time to recover", 1, "throttle 10s", AS_IS);
    says("requests pass 4 × accepts (it refused {} calls)", outage, "attempts refused by limiters", 1, "throttle 2m",
        AS_IS);

    String hanging = "--scenario outage-hanging";
    says("the calls come back {} later", hanging, "time to recover", 1, "budget only", AS_IS);
    says("the calls are back in {} (", hanging, "time to recover", 1, "both", AS_IS);
    says("so it reopens after the outage: {} here", hanging, "time to recover", 1, "breaker only", AS_IS);

    String hedging = "--scenario hedging-brownout";
    says("serve them ({} for the whole minute)", hedging, "  during brownout ×8 (2:00–3:00)", 1, "hedge, no budget",
        AS_IS);
    says("even without a budget the worst second is {}.", hedging, "worst second", 1, "live p95, no budget",
        WITHOUT_WHEN);
    says("the worst second is {} —", hedging, "worst second", 1, "hedge with budget", WITHOUT_WHEN);
    says("The calls recover as if nothing were hedged ({}).", hedging, "time to recover", 1, "hedge with budget",
        AS_IS);
  }

  @Test
  void theOverloadModelsTableIsTheThreeFleetScenarios() {
    List<String> files = List.of("fleet", "fleet-bounded-queue", "fleet-concurrency-limit");
    String[][] rows = {
        {"availability", "availability", "1"},
        {"before the brownout (0:00–2:00)", "  before (0:00–2:00)", "2"},
        {"during it (2:00–3:00)", "  during brownout ×8 (2:00–3:00)", "2"},
        {"after it (3:00–5:00)", "  after (3:00–5:00)", "2"},
        {"load multiplier", "load multiplier", "1"},
        {"worst second", "worst second", "1"}};
    for (String[] row : rows) {
      StringBuilder expected = new StringBuilder("| " + row[0] + " |");
      for (String f : files) {
        String args = "--scenario " + f;
        int occurrence = Integer.parseInt(row[2]);
        expected.append(' ').append(WITHOUT_WHEN.apply(cell(args, row[1], occurrence, "budget off"))).append(" / ")
            .append(WITHOUT_WHEN.apply(cell(args, row[1], occurrence, "budget on"))).append(" |");
      }
      assertThat(page.contains(expected.toString())).as("docs/simulation.md's overload models table should have the"
          + " row %s", expected).isTrue();
    }
  }
}
