package dev.quell.cli.internal;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads durations as people write them: "160ms", "1.5s", "2m", "1h", "1m30s", "2:00" (minutes:seconds), "PT2M". */
final class Durations {
  private static final Pattern UNIT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|min|m|h)");
  private static final Pattern UNITS = Pattern.compile("(?:\\d+(?:\\.\\d+)?\\s*(?:ms|s|min|m|h)\\s*)+");
  private static final Pattern CLOCK = Pattern.compile("(\\d+):(\\d{2})(?:\\.(\\d{1,3}))?");

  private Durations() {}

  static Duration parse(String text, String what) {
    String t = text.trim();
    if (UNITS.matcher(t).matches()) {
      // one or more parts, such as 12h, 1m30s or 1.5s
      BigDecimal nanos = BigDecimal.ZERO;
      Matcher part = UNIT.matcher(t);
      while (part.find()) {
        BigDecimal nanosPerUnit;
        switch (part.group(2)) {
          case "ms": nanosPerUnit = BigDecimal.valueOf(1_000_000L); break;
          case "s": nanosPerUnit = BigDecimal.valueOf(1_000_000_000L); break;
          case "h": nanosPerUnit = BigDecimal.valueOf(3_600_000_000_000L); break;
          default: nanosPerUnit = BigDecimal.valueOf(60_000_000_000L);
        }
        nanos = nanos.add(new BigDecimal(part.group(1)).multiply(nanosPerUnit));
      }
      try {
        return Duration.ofNanos(nanos.toBigInteger().longValueExact());
      } catch (ArithmeticException tooLong) {
        throw new ScenarioException(what + " is too long: at most 292 years fit, and a run lasts at most 24h; was \""
            + text + "\"");
      }
    }
    Matcher m;
    m = CLOCK.matcher(t);
    if (m.matches()) {
      String millis = m.group(3) == null ? "0" : (m.group(3) + "00").substring(0, 3);
      try {
        return Duration.ofMinutes(Long.parseLong(m.group(1))).plusSeconds(Long.parseLong(m.group(2)))
            .plusMillis(Long.parseLong(millis));
      } catch (NumberFormatException | ArithmeticException tooLong) {
        throw new ScenarioException(what + " is too long, was \"" + text + "\"");
      }
    }
    if (t.startsWith("P") || t.startsWith("p")) {
      try {
        Duration d = Duration.parse(t);
        long unused = d.toNanos(); // the simulator works in nanoseconds: refuse what does not fit now, with the key's name
        return d;
      } catch (ArithmeticException tooLong) {
        throw new ScenarioException(what + " is too long, was \"" + text + "\"");
      } catch (DateTimeParseException e) {
        // fall through to the message below
      }
    }
    throw new ScenarioException(what + " must be a duration such as 160ms, 1.5s, 2m, 1m30s, 2:00 or PT2M, was \"" + text
        + "\"");
  }
}
