package dev.quell.http.internal;

import dev.quell.ResilienceContext;
import dev.quell.http.RetryMarker;
import dev.quell.internal.Internal;
import java.time.Duration;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The headers every attempt of an outbound HTTP call carries, written from inside the attempt so the
 * current context is the attempt's own: {@code X-Deadline-Ms} (this attempt's end, or the caller's own
 * header if that is tighter), {@code X-Criticality} when the context is labelled, and the nested-retry
 * marker when the call may retry.
 */
@Internal
public final class OutboundHeaders {
  private OutboundHeaders() {}

  /** Which of the request's own headers an attempt replaces, given the current context. */
  public static boolean replaces(String name, ResilienceContext context) {
    return name.equalsIgnoreCase(RetryMarker.HEADER)
        || (context.hasDeadline() && name.equalsIgnoreCase(ResilienceContext.DEADLINE_HEADER))
        || (context.hasCriticality() && name.equalsIgnoreCase(ResilienceContext.CRITICALITY_HEADER));
  }

  /**
   * Writes attempt {@code attempt}'s headers through {@code header} (which sets, replacing).
   *
   * @param callerDeadline the {@code X-Deadline-Ms} the request already carried, parsed, or null
   * @param attempts the most attempts the call may make; no marker when 1
   */
  public static void write(ResilienceContext context, @Nullable Duration callerDeadline, int attempt, int attempts,
      BiConsumer<String, String> header) {
    context.writeHeaders((name, value) -> {
      if (callerDeadline != null && name.equals(ResilienceContext.DEADLINE_HEADER)
          && context.remaining().map(left -> left.compareTo(callerDeadline) > 0).orElse(false)) {
        value = ResilienceContext.formatDeadline(callerDeadline.toNanos()); // the caller's was tighter: keep it
      }
      header.accept(name, value);
    });
    if (attempts > 1) {
      header.accept(RetryMarker.HEADER, RetryMarker.of(Math.max(1, Math.min(attempt, attempts)), attempts).headerValue());
    }
  }
}
