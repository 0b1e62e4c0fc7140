package dev.quell.grpc;

import dev.quell.ResilienceContext;
import io.grpc.Metadata;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The metadata keys Quell reads and writes on gRPC calls, and the pushback value a server sends.
 *
 * <ul>
 *   <li>{@link #RETRY_PUSHBACK_MS} ({@code grpc-retry-pushback-ms}, gRFC A6): in a failed call's
 *       trailers, how many milliseconds the server asks the client to wait before retrying; a
 *       negative or unparseable value asks it not to retry at all.
 *   <li>{@link #PREVIOUS_RPC_ATTEMPTS} ({@code grpc-previous-rpc-attempts}, gRFC A6): on a retry,
 *       how many attempts went before it; absent on the first attempt.
 *   <li>{@link #CRITICALITY} ({@code x-criticality}) and {@link #DEADLINE_MS} ({@code x-deadline-ms}):
 *       the headers of {@link ResilienceContext} as gRPC metadata. On gRPC the deadline travels as
 *       gRPC's own {@code grpc-timeout}; {@code x-deadline-ms} is read on the server for callers
 *       that come through an HTTP gateway, never written by the client.
 * </ul>
 */
public final class QuellMetadata {
  /** {@code grpc-retry-pushback-ms}: the server's pushback, in milliseconds (gRFC A6). */
  public static final Metadata.Key<String> RETRY_PUSHBACK_MS =
      Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

  /** {@code grpc-previous-rpc-attempts}: attempts made before this one (gRFC A6). */
  public static final Metadata.Key<String> PREVIOUS_RPC_ATTEMPTS =
      Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

  /** {@code x-criticality}: {@code CRITICAL_PLUS}, {@code CRITICAL}, {@code SHEDDABLE_PLUS} or {@code SHEDDABLE}. */
  public static final Metadata.Key<String> CRITICALITY =
      Metadata.Key.of(ResilienceContext.CRITICALITY_HEADER, Metadata.ASCII_STRING_MARSHALLER);

  /** {@code x-deadline-ms}: whole milliseconds remaining, as the HTTP integrations send it. */
  public static final Metadata.Key<String> DEADLINE_MS =
      Metadata.Key.of(ResilienceContext.DEADLINE_HEADER, Metadata.ASCII_STRING_MARSHALLER);

  /** Returned by {@link #pushbackMillis} when the trailers carry no pushback. */
  static final long NO_PUSHBACK = Long.MIN_VALUE;

  private QuellMetadata() {}

  /**
   * The value of {@link #RETRY_PUSHBACK_MS} for a wait of {@code retryAfter}: whole milliseconds,
   * rounded up so that a client never comes back early, at most {@link Integer#MAX_VALUE} (the key
   * holds a signed 32-bit integer), never negative (a negative value would mean "do not retry").
   */
  public static String pushback(Duration retryAfter) {
    if (retryAfter.isNegative() || retryAfter.isZero()) {
      return "0";
    }
    long millis;
    try {
      millis = retryAfter.plusNanos(999_999).toMillis(); // round up to the next whole millisecond
    } catch (ArithmeticException tooLong) {
      millis = Long.MAX_VALUE;
    }
    return Long.toString(Math.min(millis, Integer.MAX_VALUE));
  }

  /**
   * The pushback in {@code trailers}, parsed as gRPC does (a signed 32-bit decimal integer): its
   * value, -1 when it is present but unparseable (which, like any negative value, means "do not
   * retry"), or {@link #NO_PUSHBACK} when absent.
   */
  static long pushbackMillis(@Nullable Metadata trailers) {
    if (trailers == null) {
      return NO_PUSHBACK;
    }
    String value = trailers.get(RETRY_PUSHBACK_MS);
    if (value == null) {
      return NO_PUSHBACK;
    }
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** True when {@code trailers} carry a pushback that says not to retry (negative or unparseable). */
  static boolean saysDoNotRetry(@Nullable Metadata trailers) {
    long pushback = pushbackMillis(trailers);
    return pushback != NO_PUSHBACK && pushback < 0;
  }
}
