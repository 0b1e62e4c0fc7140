package dev.quell.internal;

import dev.quell.Verdict;
import java.net.http.HttpResponse;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Status-code classification behind {@code Classifier.HTTP}, and the one reader of {@code Retry-After}
 * that every Quell HTTP integration uses (RFC 9110 §10.2.3): delta-seconds ({@code 120}) or an
 * HTTP-date in any of its three forms — the preferred IMF-fixdate ({@code Sun, 06 Nov 1994 08:49:37 GMT})
 * and the two obsolete forms a recipient must still accept, RFC 850 ({@code Sunday, 06-Nov-94 08:49:37 GMT})
 * and asctime ({@code Sun Nov  6 08:49:37 1994}).
 *
 * <p>How a value becomes a wait:
 * <ul>
 *   <li>A date is measured from the response's own {@code Date} header when that can be read, so the
 *       wait is what the server meant whatever the skew between its clock and ours; otherwise from
 *       {@code now}.
 *   <li>It is rounded <em>up</em> to a whole second: an HTTP-date has one-second granularity, and
 *       rounding down would send the retry before the server said it would be ready.
 *   <li>A date in the past is a wait of zero.
 *   <li>Anything longer than {@link #MAX_RETRY_AFTER} — delta-seconds of any number of digits, a date
 *       in the year 9999 — is read as {@code MAX_RETRY_AFTER}: longer than any sensible deadline, so
 *       a policy gives up at once instead of ignoring the server. Nothing overflows.
 *   <li>Anything unreadable — empty, negative, fractional, digits other than ASCII {@code 0-9}, a date
 *       with an unknown month or a 31st of April — is ignored ({@code null}), never thrown: a malformed
 *       header must not fail a call.
 * </ul>
 *
 * <p>java.time only: the core has no dependencies. Stateless and thread-safe.
 */
@Internal
public final class HttpClassification {
  /** The longest wait a Retry-After is read as: one day. Longer requests are read as this. */
  public static final Duration MAX_RETRY_AFTER = Duration.ofDays(1);

  /** The response header that names the wait. */
  public static final String RETRY_AFTER = "Retry-After";

  /** The response header a date is measured from. */
  public static final String DATE = "Date";

  private static final long MAX_SECONDS = MAX_RETRY_AFTER.getSeconds();
  private static final String[] SHORT_DAYS = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  private static final String[] LONG_DAYS = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
  private static final String[] MONTHS = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

  private HttpClassification() {}

  /**
   * Classifies a successful attempt's result; anything not an HTTP response is {@code OK}. A
   * Retry-After date is measured from the response's {@code Date} header, or from the system clock
   * when it has none.
   */
  public static Verdict classify(Object result) {
    if (!(result instanceof HttpResponse)) {
      return Verdict.OK;
    }
    HttpResponse<?> response = (HttpResponse<?>) result;
    return classifyStatus(response.statusCode(), response.headers().firstValue(RETRY_AFTER).orElse(null),
        response.headers().firstValue(DATE).orElse(null), Instant.now());
  }

  /** Classifies a status code with an optional Retry-After header value, measuring a date from the system clock. */
  public static Verdict classifyStatus(int status, Optional<String> retryAfterHeader) {
    return classifyStatus(status, retryAfterHeader.orElse(null), null, Instant.now());
  }

  /**
   * The HTTP status rules: 1xx to 3xx {@code OK}; 408 and 5xx transient; 429 throttled, and so is a
   * 503 with a readable {@code Retry-After} (its wait then says how long); other 4xx permanent.
   */
  public static Verdict classifyStatus(int status, @Nullable String retryAfter, @Nullable String date, Instant now) {
    Verdict verdict = statusVerdict(status);
    if (status != 429 && status != 503) {
      return verdict;
    }
    Duration wait = parseRetryAfter(retryAfter, date, now);
    return wait == null ? verdict : Verdict.throttled(wait);
  }

  /** The status rules before Retry-After is read: 429 {@code THROTTLED}, 503 {@code TRANSIENT}. */
  public static Verdict statusVerdict(int status) {
    if (status < 400) {
      return Verdict.OK;
    }
    if (status == 429) {
      return Verdict.THROTTLED;
    }
    if (status == 408 || status >= 500) {
      return Verdict.TRANSIENT;
    }
    return Verdict.PERMANENT;
  }

  /** The wait a Retry-After value asks for, measured from {@code now}; null when it cannot be read. */
  public static @Nullable Duration parseRetryAfter(@Nullable String value, Instant now) {
    return parseRetryAfter(value, null, now);
  }

  /**
   * The wait a Retry-After value asks for. An HTTP-date is measured from {@code dateHeader} (the
   * response's {@code Date}) when that can be read, else from {@code now}. Null when {@code value}
   * cannot be read; never negative, never more than {@link #MAX_RETRY_AFTER}.
   */
  public static @Nullable Duration parseRetryAfter(@Nullable String value, @Nullable String dateHeader, Instant now) {
    if (value == null) {
      return null;
    }
    String v = trim(value);
    if (v.isEmpty()) {
      return null;
    }
    if (isDigits(v)) {
      return Duration.ofSeconds(saturatedSeconds(v)); // delta-seconds: 1*DIGIT
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
    // both instants lie in years 0 to 9999, so the difference cannot overflow
    Duration d = Duration.between(reference, at);
    long seconds = d.getSeconds() + (d.getNano() > 0 ? 1 : 0); // round up: never before the server's second
    return Duration.ofSeconds(Math.min(seconds, MAX_SECONDS));
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
    String v = trim(value);
    if (v.length() > 64) {
      return null; // no valid date is anywhere near this long
    }
    int comma = v.indexOf(',');
    try {
      if (comma > 0) {
        String day = v.substring(0, comma);
        String[] parts = trim(v.substring(comma + 1)).split("[ \\t]+");
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
      return null; // a 31st of April, a year out of range
    }
  }

  /** Whole seconds in {@code digits} (ASCII, at least one), saturating at {@link #MAX_RETRY_AFTER}. */
  private static long saturatedSeconds(String digits) {
    long seconds = 0;
    for (int i = 0; i < digits.length(); i++) {
      seconds = seconds * 10 + (digits.charAt(i) - '0');
      if (seconds >= MAX_SECONDS) {
        return MAX_SECONDS; // any number of further digits only makes it longer
      }
    }
    return seconds;
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

  /** Whether {@code s} is one or more ASCII digits: {@code Character.isDigit} would let other scripts' digits through. */
  private static boolean isDigits(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }

  /** Strips HTTP's optional whitespace (spaces and tabs) from both ends, and nothing else. */
  private static String trim(String s) {
    int start = 0;
    int end = s.length();
    while (start < end && (s.charAt(start) == ' ' || s.charAt(start) == '\t')) {
      start++;
    }
    while (end > start && (s.charAt(end - 1) == ' ' || s.charAt(end - 1) == '\t')) {
      end--;
    }
    return s.substring(start, end);
  }
}
