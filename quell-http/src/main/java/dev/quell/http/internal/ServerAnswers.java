package dev.quell.http.internal;

import dev.quell.AttemptTimeoutException;
import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.StopReason;
import dev.quell.http.RetryAfter;
import dev.quell.internal.Internal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What Quell's server filters answer instead of a handler's response: while draining, and when one
 * of Quell's refusals escapes the handler. The body is an RFC 9457 problem document
 * ({@code application/problem+json}) with {@code type} {@code about:blank}, so {@code title} is the
 * status phrase, plus one extension member, {@code reason}, naming Quell's stop reason. It says what
 * happened in general words and never repeats the exception's message, which names internal policies
 * and budgets.
 */
@Internal
public final class ServerAnswers {
  /** The media type of the body. */
  public static final String PROBLEM_JSON = "application/problem+json";

  private ServerAnswers() {}

  /** An answer: status, optional Retry-After value, whether to close the connection, and the body. */
  public static final class Answer {
    private final int status;
    private final @Nullable String retryAfter;
    private final boolean closeConnection;
    private final byte[] body;

    Answer(int status, @Nullable String retryAfter, boolean closeConnection, String reason, String detail) {
      this.status = status;
      this.retryAfter = retryAfter;
      this.closeConnection = closeConnection;
      this.body = problem(status, reason, detail).getBytes(StandardCharsets.UTF_8);
    }

    /** The HTTP status: 503 or 504. */
    public int status() {
      return status;
    }

    /** The Retry-After header value in delta-seconds, or null for none. */
    public @Nullable String retryAfter() {
      return retryAfter;
    }

    /** True when the answer should carry {@code Connection: close}. */
    public boolean closeConnection() {
      return closeConnection;
    }

    /** The problem document, UTF-8. */
    public byte[] body() {
      return body.clone();
    }
  }

  /** The answer to a request that arrives while the process is draining: 503, {@code Connection: close}. */
  public static Answer draining() {
    return new Answer(503, null, true, StopReason.DRAINING.name(),
        "This instance is shutting down and takes no new work; send the request to another.");
  }

  /**
   * The answer for {@code failure} if it is, or is caused by, one of Quell's refusals
   * ({@link CallRejectedException}: 503 with Retry-After; {@link DeadlineExceededException} and
   * {@link AttemptTimeoutException}: 504); null when it is anything else. The outermost refusal in the
   * cause chain decides.
   */
  public static @Nullable Answer forFailure(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null && seen.size() <= 32; t = t.getCause()) {
      if (t instanceof CallRejectedException) {
        return rejected((CallRejectedException) t);
      }
      if (t instanceof DeadlineExceededException) {
        return new Answer(504, null, false, StopReason.DEADLINE_EXCEEDED.name(),
            "The request's deadline passed before a dependency of this service answered.");
      }
      if (t instanceof AttemptTimeoutException) {
        return new Answer(504, null, false, "ATTEMPT_TIMEOUT", "A dependency of this service did not answer in time.");
      }
    }
    return null;
  }

  private static Answer rejected(CallRejectedException e) {
    StopReason reason = e.reason();
    if (reason == StopReason.DRAINING) {
      return draining();
    }
    String retryAfter = RetryAfter.format(e.retryAfter().orElse(Duration.ofSeconds(1)));
    String detail;
    switch (reason) {
      case BUDGET_EXHAUSTED:
        detail = "A dependency of this service is failing and the retry budget for it is spent; the work was not tried again.";
        break;
      case DEPENDENCY_UNAVAILABLE:
        detail = "A dependency of this service is unavailable: its circuit breaker is open.";
        break;
      case LIMITED:
        detail = "A limiter refused a call this request needed.";
        break;
      default:
        detail = "A call this request needed was refused.";
    }
    return new Answer(503, retryAfter, false, reason.name(), detail);
  }

  static String problem(int status, String reason, String detail) {
    String title = status == 504 ? "Gateway Timeout" : "Service Unavailable";
    return "{\"type\":\"about:blank\",\"title\":\"" + title + "\",\"status\":" + status
        + ",\"detail\":\"" + escape(detail) + "\",\"reason\":\"" + escape(reason) + "\"}";
  }

  private static String escape(String s) {
    StringBuilder b = new StringBuilder(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
