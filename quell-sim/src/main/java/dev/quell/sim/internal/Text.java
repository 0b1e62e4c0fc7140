package dev.quell.sim.internal;

import dev.quell.internal.Internal;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Locale;

/** Formatting shared by the simulator's reports and the command line. Locale-independent. */
@Internal
public final class Text {
  private Text() {}

  /** A number with at most six significant digits and no exponent or trailing zeros: "8", "0.1", "1.16667". */
  public static String number(double value) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      return String.valueOf(value);
    }
    if (value == Math.rint(value) && Math.abs(value) < 1e15) {
      return Long.toString((long) value);
    }
    return BigDecimal.valueOf(value).round(new MathContext(6, RoundingMode.HALF_EVEN)).stripTrailingZeros()
        .toPlainString();
  }

  /** A fixed number of decimals: {@code fixed(1.23456, 2)} is "1.23". */
  public static String fixed(double value, int decimals) {
    return String.format(Locale.ROOT, "%." + decimals + "f", value);
  }

  /** Simulated time as minutes and seconds, hours too from an hour on: "2:00", "0:07", "2:00.250", "1:30:00". */
  public static String clock(Duration d) {
    long millis = d.toMillis();
    long minutes = millis / 60_000;
    long seconds = (millis / 1000) % 60;
    long rest = millis % 1000;
    String s = minutes >= 60
        ? minutes / 60 + ":" + (minutes % 60 < 10 ? "0" : "") + minutes % 60 + ":" + (seconds < 10 ? "0" : "") + seconds
        : minutes + ":" + (seconds < 10 ? "0" : "") + seconds;
    return rest == 0 ? s : s + "." + String.format(Locale.ROOT, "%03d", rest);
  }

  /** A duration as people write it: "160ms", "1.5s", "2m", "36h", "-5s". */
  public static String duration(Duration d) {
    long nanos;
    try {
      nanos = d.toNanos();
    } catch (ArithmeticException tooLong) {
      return d.toHours() + "h";
    }
    if (nanos % 3_600_000_000_000L == 0 && nanos != 0) {
      return nanos / 3_600_000_000_000L + "h";
    }
    if (nanos % 60_000_000_000L == 0 && nanos != 0) {
      return nanos / 60_000_000_000L + "m";
    }
    if (Math.abs(nanos) >= 1_000_000_000L) {
      return number(nanos / 1e9) + "s";
    }
    return number(nanos / 1e6) + "ms";
  }

  /** A duration in milliseconds: "20 ms", "0.5 ms", "1500 ms". */
  public static String millis(Duration d) {
    return number(d.toNanos() / 1e6) + " ms";
  }

  /** Milliseconds to three significant digits or so: "0.52", "25.0", "569". */
  public static String ms(double millis) {
    if (Double.isNaN(millis)) {
      return "n/a";
    }
    return millis >= 100 ? fixed(millis, 0) : millis >= 10 ? fixed(millis, 1) : fixed(millis, 2);
  }

  /** A ratio as a percentage with one decimal: "99.5%". */
  public static String percent(double ratio) {
    return Double.isNaN(ratio) ? "n/a" : fixed(ratio * 100, 1) + "%";
  }
}
