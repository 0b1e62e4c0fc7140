package dev.quell.cli.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A CSV of calls, as access logs and trace exports give them: a header row naming the columns
 * {@code timestamp}, {@code latency} (or {@code latency_ms}) and {@code outcome} (or {@code status}),
 * in any order and among others, then one row per call.
 *
 * <ul>
 *   <li>timestamp: an ISO-8601 instant ({@code 2026-12-01T10:00:00.125Z}), or epoch seconds (with a
 *       fraction) or epoch milliseconds as a number;
 *   <li>latency: milliseconds as a number, or a duration with its unit ({@code 850us}, {@code 12ms},
 *       {@code 1.5s});
 *   <li>outcome: {@code ok}, {@code success}, {@code succeeded}, {@code true}, or an HTTP status below
 *       500 other than 429, for a success; {@code error}, {@code failure}, {@code failed},
 *       {@code timeout}, {@code false}, 429 or a 5xx status for a failure.
 * </ul>
 */
final class CsvTelemetry implements Telemetry {
  @Override
  public String name() {
    return "csv";
  }

  @Override
  public List<Sample> read(Path file) {
    String where = file.getFileName().toString();
    List<Sample> samples = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String header = in.readLine();
      if (header == null || header.isBlank()) {
        throw new ScenarioException(where + " is empty: it needs a header row (timestamp,latency,outcome) and a row"
            + " per call");
      }
      List<String> names = Arrays.asList(split(header.replace("\uFEFF", "")));
      int time = column(names, "timestamp", "time");
      int latency = column(names, "latency", "latency_ms");
      int outcome = column(names, "outcome", "status");
      if (time < 0 || latency < 0 || outcome < 0) {
        throw new ScenarioException(where + " line 1: the header must name the columns timestamp, latency (or"
            + " latency_ms) and outcome (or status); it has " + String.join(", ", names));
      }
      boolean millisColumn = names.get(latency).trim().equalsIgnoreCase("latency_ms");
      String line;
      int number = 1;
      while ((line = in.readLine()) != null) {
        number++;
        if (line.isBlank()) {
          continue;
        }
        String[] cells = split(line);
        int needed = Math.max(time, Math.max(latency, outcome)) + 1;
        if (cells.length < needed) {
          throw new ScenarioException(where + " line " + number + ": has " + cells.length + " fields, the header "
              + needed + " or more");
        }
        samples.add(new Sample(timestamp(cells[time].trim(), where, number),
            latency(cells[latency].trim(), millisColumn, where, number), outcome(cells[outcome].trim(), where,
            number)));
      }
    } catch (MalformedInputException e) {
      throw new ScenarioException(where + " is not UTF-8 text");
    } catch (IOException e) {
      throw new ScenarioException("cannot read " + file + ": " + SimulateCommand.why(e), e);
    }
    return samples;
  }

  private static int column(List<String> names, String... accepted) {
    for (int i = 0; i < names.size(); i++) {
      for (String a : accepted) {
        if (names.get(i).trim().equalsIgnoreCase(a)) {
          return i;
        }
      }
    }
    return -1;
  }

  /** Splits on commas, honouring double quotes (no field of ours needs more). */
  private static String[] split(String line) {
    List<String> cells = new ArrayList<>();
    StringBuilder cell = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.add(cell.toString());
        cell.setLength(0);
      } else {
        cell.append(c);
      }
    }
    cells.add(cell.toString());
    return cells.toArray(new String[0]);
  }

  static long timestamp(String text, String where, int line) {
    try {
      if (!text.isEmpty() && (Character.isDigit(text.charAt(0)) && !text.contains("-") && !text.contains(":"))) {
        double n = Double.parseDouble(text);
        if (!Double.isFinite(n) || n < 0) {
          throw new NumberFormatException();
        }
        // epoch seconds until about the year 5138, epoch milliseconds above
        return n < 1e11 ? Math.round(n * 1e9) : Math.round(n * 1e6);
      }
      Instant i = Instant.parse(text);
      return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000_000L), i.getNano());
    } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
      throw new ScenarioException(where + " line " + line + ": timestamp must be an ISO-8601 instant such as"
          + " 2026-12-01T10:00:00.125Z or epoch seconds or milliseconds, was \"" + text + "\"");
    }
  }

  static long latency(String text, boolean millisColumn, String where, int line) {
    String t = text.toLowerCase(Locale.ROOT);
    double scale = 1e6; // milliseconds
    String number = t;
    if (!millisColumn) {
      if (t.endsWith("us") || t.endsWith("µs")) {
        scale = 1e3;
        number = t.substring(0, t.length() - 2);
      } else if (t.endsWith("ms")) {
        number = t.substring(0, t.length() - 2);
      } else if (t.endsWith("s")) {
        scale = 1e9;
        number = t.substring(0, t.length() - 1);
      }
    }
    try {
      double v = Double.parseDouble(number.trim());
      if (!Double.isFinite(v) || v < 0 || v * scale > 8.64e13) {
        throw new NumberFormatException();
      }
      return Math.round(v * scale);
    } catch (NumberFormatException e) {
      throw new ScenarioException(where + " line " + line + ": latency must be milliseconds from 0 to a day, as a"
          + " number" + (millisColumn ? "" : " or a duration such as 850us, 12ms or 1.5s") + ", was \"" + text + "\"");
    }
  }

  static boolean outcome(String text, String where, int line) {
    String t = text.toLowerCase(Locale.ROOT);
    switch (t) {
      case "ok": case "success": case "succeeded": case "true":
        return true;
      case "error": case "failure": case "failed": case "timeout": case "false":
        return false;
      default:
        try {
          int status = Integer.parseInt(t);
          if (status >= 100 && status < 600) {
            return status < 500 && status != 429;
          }
        } catch (NumberFormatException e) {
          // named below
        }
        throw new ScenarioException(where + " line " + line + ": outcome must be ok, success, error, failure,"
            + " timeout, true, false or an HTTP status, was \"" + text + "\"");
    }
  }
}
