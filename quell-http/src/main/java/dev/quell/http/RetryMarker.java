package dev.quell.http;

import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The nested-retry marker: which attempt of a retrying call a request is. Quell's HTTP clients send
 * it as {@value #HEADER} ({@code 2/3}: the second of at most three attempts) on every attempt of a
 * call whose policy may retry, and only then. A server that receives it knows its caller is already
 * retrying: if the server retries its own dependencies as well, the attempts multiply (3 × 3 = 9 on
 * the dependency for one user action), which is what retry budgets exist to bound. A handler can read
 * it with {@link #parse} to retry less, or to log or count it; {@link QuellServletFilter} also puts it
 * in the request's attributes under {@value #ATTRIBUTE}.
 *
 * <p>Immutable and thread-safe.
 */
public final class RetryMarker {
  /** The request header that carries the marker. */
  public static final String HEADER = "X-Quell-Attempt";
  /** The servlet request attribute under which {@link QuellServletFilter} stores the caller's {@link RetryMarker}. */
  public static final String ATTRIBUTE = "dev.quell.http.RetryMarker";

  private final int attempt;
  private final int attempts;

  private RetryMarker(int attempt, int attempts) {
    this.attempt = attempt;
    this.attempts = attempts;
  }

  /** The marker for attempt {@code attempt} of at most {@code attempts}; both at least 1, attempt at most attempts. */
  public static RetryMarker of(int attempt, int attempts) {
    if (attempt < 1 || attempts < attempt) {
      throw new IllegalArgumentException(
          "RetryMarker attempt was " + attempt + " of " + attempts + ": need 1 <= attempt <= attempts");
    }
    return new RetryMarker(attempt, attempts);
  }

  /** Reads a {@value #HEADER} value; empty when absent or malformed (never throws). */
  public static Optional<RetryMarker> parse(@Nullable String value) {
    if (value == null) {
      return Optional.empty();
    }
    String v = value.trim();
    int slash = v.indexOf('/');
    if (slash <= 0 || slash > 9 || v.length() - slash - 1 > 9 || v.length() == slash + 1) {
      return Optional.empty();
    }
    int attempt = digits(v, 0, slash);
    int attempts = digits(v, slash + 1, v.length());
    if (attempt < 1 || attempts < attempt) {
      return Optional.empty();
    }
    return Optional.of(new RetryMarker(attempt, attempts));
  }

  private static int digits(String s, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      n = n * 10 + (c - '0');
    }
    return n;
  }

  /** This attempt's number: 1 for the first. */
  public int attempt() {
    return attempt;
  }

  /** The most attempts the caller's policy allows, the first included. */
  public int attempts() {
    return attempts;
  }

  /** True when this request is itself a retry (attempt 2 or later). */
  public boolean isRetry() {
    return attempt > 1;
  }

  /** The header value, {@code attempt/attempts}. */
  public String headerValue() {
    return attempt + "/" + attempts;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof RetryMarker && ((RetryMarker) o).attempt == attempt && ((RetryMarker) o).attempts == attempts;
  }

  @Override
  public int hashCode() {
    return Objects.hash(attempt, attempts);
  }

  @Override
  public String toString() {
    return "RetryMarker[" + headerValue() + "]";
  }
}
