package dev.quell.http;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Reads a {@code Retry-After} header (RFC 9110 §10.2.3) in both of its forms: delta-seconds
 * ({@code 120}) and an HTTP-date, where the preferred IMF-fixdate ({@code Sun, 06 Nov 1994 08:49:37 GMT})
 * and the two obsolete forms every recipient must still accept — RFC 850
 * ({@code Sunday, 06-Nov-94 08:49:37 GMT}) and asctime ({@code Sun Nov  6 08:49:37 1994}) — are all read.
 *
 * <p>How a date becomes a wait:
 * <ul>
 *   <li>It is measured from the response's own {@code Date} header when there is a readable one, so the
 *       wait is what the server meant whatever the skew between its clock and ours; otherwise from
 *       {@code now}.
 *   <li>It is rounded <em>up</em> to a whole second. An HTTP-date has one-second granularity; rounding
 *       down (or not at all) sends the retry up to a second before the server said it would be ready.
 *   <li>A date in the past is a wait of zero.
 * </ul>
 *
 * <p>Anything unreadable — empty, negative, fractional, a date with an unknown month or a 31st of
 * April — is ignored ({@link Optional#empty()}), never thrown: a malformed header must not fail a
 * call. A wait longer than {@link #MAX} (including delta-seconds too large for a {@code long}) is
 * read as {@code MAX}: longer than any sensible deadline, so a policy gives up at once instead of
 * ignoring the server and retrying early. Stateless and thread-safe.
 */
public final class RetryAfter {
  /** The longest wait this parser reports: one day. Longer requests are read as this. */
  public static final Duration MAX = Duration.ofDays(1);

  /** The response header that names the wait. */
  public static final String HEADER = "Retry-After";

  private static final String[] SHORT_DAYS = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  private static final String[] LONG_DAYS = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
  private static final String[] MONTHS = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

  private RetryAfter() {}

  /** The wait {@code value} asks for, measured from {@code now}; empty when it cannot be read. */
  public static Optional<Duration> parse(@Nullable String value, Instant now) {
    return parse(value, null, now);
  }

  /**
   * The wait {@code value} asks for. An HTTP-date is measured from {@code dateHeader} (the response's
   * {@code Date}) when that can be read, else from {@code now}. Empty when {@code value} cannot be read.
   */
  public static Optional<Duration> parse(@Nullable String value, @Nullable String dateHeader, Instant now) {
    return Optional.ofNullable(wait(value, dateHeader, now));
  }

  private static @Nullable Duration wait(@Nullable String value, @Nullable String dateHeader, Instant now) {
    if (value == null) {
      return null;
    }
    String v = value.trim();
    if (v.isEmpty()) {
      return null;
    }
    if (isDigits(v)) {
      // delta-seconds: 1*DIGIT; anything too long for a long is simply very long
      if (v.length() > 18) {
        return MAX;
      }
      long seconds = Long.parseLong(v);
      return seconds >= MAX.getSeconds() ? MAX : Duration.ofSeconds(seconds);
    }
    Instant reference = now;
    Instant serverNow = dateHeader == null ? null : parseHttpDate(dateHeader, now);
    if (serverNow != null) {
      reference = serverNow;
    }
    Instant at = parseHttpDate(v, reference);
    if (at == null) {
      return null;
    }
    if (!at.isAfter(reference)) {
      return Duration.ZERO;
    }
    Duration d = Duration.between(reference, at);
    long seconds = d.getSeconds() + (d.getNano() > 0 ? 1 : 0); // round up: never before the server's second
    return seconds >= MAX.getSeconds() ? MAX : Duration.ofSeconds(seconds);
  }

  /**
   * Reads an HTTP-date in any of its three forms; null when it is not one. {@code reference} resolves
   * the two-digit year of the RFC 850 form: a year that would be more than 50 years after it is taken
   * as the most recent past year with those last two digits (RFC 9110 §5.6.7).
   */
  public static @Nullable Instant parseHttpDate(@Nullable String value, Instant reference) {
    if (value == null) {
      return null;
    }
    String v = value.trim();
    if (v.length() > 64) {
      return null; // no valid date is anywhere near this long
    }
    int comma = v.indexOf(',');
    try {
      if (comma > 0) {
        String day = v.substring(0, comma);
        String[] parts = v.substring(comma + 1).trim().split("[ \\t]+");
        if (indexOf(SHORT_DAYS, day) >= 0) {
          return imfFixdate(parts);
        }
        if (indexOf(LONG_DAYS, day) >= 0) {
          return rfc850(parts, reference);
        }
        return null;
      }
      return asctime(v.split("[ \\t]+"));
    } catch (DateTimeException | NumberFormatException e) {
      return null; // a 31st of April, an hour 25, digits too long
    }
  }

  // Sun, 06 Nov 1994 08:49:37 GMT  ->  [06, Nov, 1994, 08:49:37, GMT]
  private static @Nullable Instant imfFixdate(String[] p) {
    if (p.length != 5 || !p[4].equals("GMT") || !isDigits(p[0]) || p[0].length() > 2 || !isDigits(p[2]) || p[2].length() != 4) {
      return null;
    }
    int month = indexOf(MONTHS, p[1]);
    return month < 0 ? null : instant(Integer.parseInt(p[2]), month + 1, Integer.parseInt(p[0]), p[3]);
  }

  // Sunday, 06-Nov-94 08:49:37 GMT  ->  [06-Nov-94, 08:49:37, GMT]
  private static @Nullable Instant rfc850(String[] p, Instant reference) {
    if (p.length != 3 || !p[2].equals("GMT")) {
      return null;
    }
    String[] date = p[0].split("-", -1);
    if (date.length != 3 || !isDigits(date[0]) || date[0].length() > 2 || !isDigits(date[2]) || date[2].length() != 2) {
      return null;
    }
    int month = indexOf(MONTHS, date[1]);
    if (month < 0) {
      return null;
    }
    int referenceYear = reference.atOffset(ZoneOffset.UTC).getYear();
    int twoDigits = Integer.parseInt(date[2]);
    // the latest year with these last two digits that is not more than 50 years after the reference
    int year = referenceYear - Math.floorMod(referenceYear, 100) + twoDigits;
    if (year + 100 <= referenceYear + 50) {
      year += 100;
    } else if (year > referenceYear + 50) {
      year -= 100;
    }
    return instant(year, month + 1, Integer.parseInt(date[0]), p[1]);
  }

  // Sun Nov  6 08:49:37 1994  ->  [Sun, Nov, 6, 08:49:37, 1994]
  private static @Nullable Instant asctime(String[] p) {
    if (p.length != 5 || indexOf(SHORT_DAYS, p[0]) < 0 || !isDigits(p[2]) || p[2].length() > 2
        || !isDigits(p[4]) || p[4].length() != 4) {
      return null;
    }
    int month = indexOf(MONTHS, p[1]);
    return month < 0 ? null : instant(Integer.parseInt(p[4]), month + 1, Integer.parseInt(p[2]), p[3]);
  }

  private static @Nullable Instant instant(int year, int month, int day, String time) {
    String[] t = time.split(":", -1);
    if (t.length != 3) {
      return null;
    }
    for (String part : t) {
      if (part.length() != 2 || !isDigits(part)) {
        return null;
      }
    }
    int hour = Integer.parseInt(t[0]);
    int minute = Integer.parseInt(t[1]);
    int second = Integer.parseInt(t[2]);
    if (hour > 23 || minute > 59 || second > 60) {
      return null;
    }
    LocalDate date = LocalDate.of(year, month, day); // throws for a day the month does not have
    // a leap second (60) is read as the end of the 59th: a wait may round up, never down
    long epochSecond = date.toEpochDay() * 86_400L + hour * 3600L + minute * 60L + Math.min(second, 59);
    return Instant.ofEpochSecond(epochSecond, second == 60 ? 999_999_999 : 0);
  }

  private static int indexOf(String[] names, String name) {
    for (int i = 0; i < names.length; i++) {
      if (names[i].equals(name)) {
        return i;
      }
    }
    return -1;
  }

  private static boolean isDigits(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return false; // ASCII only: Character.isDigit would let other scripts' digits through
      }
    }
    return true;
  }

  /** Formats {@code wait} as delta-seconds, rounded up and at least 1: the value a server sends. */
  public static String format(Duration wait) {
    long seconds = wait.isNegative() ? 0 : wait.getSeconds() + (wait.getNano() > 0 ? 1 : 0);
    return Long.toString(Math.max(1, seconds));
  }
}
