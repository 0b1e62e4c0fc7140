package dev.quell.internal;

import dev.quell.Verdict;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** Status-code classification behind {@code Classifier.HTTP}. */
@Internal
public final class HttpClassification {
  private HttpClassification() {}

  /** Classifies a successful attempt's result; anything not an HTTP response is {@code OK}. */
  public static Verdict classify(Object result) {
    if (!(result instanceof HttpResponse)) {
      return Verdict.OK;
    }
    HttpResponse<?> response = (HttpResponse<?>) result;
    return classifyStatus(response.statusCode(), response.headers().firstValue("Retry-After"));
  }

  /** Classifies a status code with an optional Retry-After header value. */
  public static Verdict classifyStatus(int status, Optional<String> retryAfterHeader) {
    if (status < 400) {
      return Verdict.OK;
    }
    if (status == 429 || status == 503) {
      Duration retryAfter = retryAfterHeader.map(h -> parseRetryAfter(h, Instant.now())).orElse(null);
      if (retryAfter != null) {
        return Verdict.throttled(retryAfter);
      }
      return status == 429 ? Verdict.THROTTLED : Verdict.TRANSIENT;
    }
    if (status == 408 || status >= 500) {
      return Verdict.TRANSIENT;
    }
    return Verdict.PERMANENT;
  }

  /**
   * Parses a Retry-After value: delta-seconds or an IMF-fixdate. Returns null for anything else,
   * so a malformed header is ignored rather than failing the call.
   */
  public static @Nullable Duration parseRetryAfter(String value, Instant now) {
    String v = value.trim();
    if (v.isEmpty()) {
      return null;
    }
    if (v.chars().allMatch(Character::isDigit)) {
      if (v.length() > 9) {
        return null;
      }
      return Duration.ofSeconds(Long.parseLong(v));
    }
    try {
      Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
      Duration d = Duration.between(now, at);
      return d.isNegative() ? Duration.ZERO : d;
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
