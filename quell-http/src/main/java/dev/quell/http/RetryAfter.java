package dev.quell.http;

import dev.quell.internal.HttpClassification;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Reads a {@code Retry-After} header (RFC 9110 §10.2.3) as every Quell HTTP integration does —
 * {@link dev.quell.Classifier#HTTP}, {@link ResilientHttpClient} and the OkHttp interceptor — for your own
 * loops, and writes one for a server. Both forms are read: delta-seconds ({@code 120}) and an HTTP-date,
 * where the preferred IMF-fixdate ({@code Sun, 06 Nov 1994 08:49:37 GMT}) and the two obsolete forms every
 * recipient must still accept — RFC 850 ({@code Sunday, 06-Nov-94 08:49:37 GMT}) and asctime
 * ({@code Sun Nov  6 08:49:37 1994}) — are all read.
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
 * <p>Anything unreadable — empty, negative, fractional, digits other than ASCII {@code 0-9}, a date with an
 * unknown month or a 31st of April — is ignored ({@link Optional#empty()}), never thrown: a malformed header
 * must not fail a call. A wait longer than {@link #MAX} (delta-seconds of any length, a date in the year
 * 9999) is read as {@code MAX}: longer than any sensible deadline, so a policy gives up at once instead of
 * ignoring the server and retrying early. Nothing overflows. Stateless and thread-safe.
 */
public final class RetryAfter {
  /** The longest wait this parser reports: one day. Longer requests are read as this. */
  public static final Duration MAX = HttpClassification.MAX_RETRY_AFTER;

  /** The response header that names the wait. */
  public static final String HEADER = HttpClassification.RETRY_AFTER;

  private RetryAfter() {}

  /** The wait {@code value} asks for, measured from {@code now}; empty when it cannot be read. */
  public static Optional<Duration> parse(@Nullable String value, Instant now) {
    return Optional.ofNullable(HttpClassification.parseRetryAfter(value, now));
  }

  /**
   * The wait {@code value} asks for. An HTTP-date is measured from {@code dateHeader} (the response's
   * {@code Date}) when that can be read, else from {@code now}. Empty when {@code value} cannot be read.
   */
  public static Optional<Duration> parse(@Nullable String value, @Nullable String dateHeader, Instant now) {
    return Optional.ofNullable(HttpClassification.parseRetryAfter(value, dateHeader, now));
  }

  /**
   * Reads an HTTP-date in any of its three forms; null when it is not one. {@code reference} resolves
   * the two-digit year of the RFC 850 form: a year that would be more than 50 years after it is taken
   * as the most recent past year with those last two digits (RFC 9110 §5.6.7).
   */
  public static @Nullable Instant parseHttpDate(@Nullable String value, Instant reference) {
    return HttpClassification.parseHttpDate(value, reference);
  }

  /** Formats {@code wait} as delta-seconds, rounded up and at least 1: the value a server sends. Never overflows. */
  public static String format(Duration wait) {
    if (wait.isNegative()) {
      return "1";
    }
    long seconds = wait.getSeconds();
    if (wait.getNano() > 0 && seconds < Long.MAX_VALUE) {
      seconds++; // rounded up: never ask the client back before the wait is over
    }
    return Long.toString(Math.max(1, seconds));
  }
}
