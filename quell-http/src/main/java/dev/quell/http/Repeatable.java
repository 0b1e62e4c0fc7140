package dev.quell.http;

import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Whether a request may be sent more than once. A retry sends the request again; for a method that
 * is not idempotent (a {@code POST} that charges a card) that can do the work twice, so Quell's HTTP
 * clients retry only what is safe to repeat.
 *
 * <ul>
 *   <li>{@link #BY_METHOD} (the default): {@code GET}, {@code HEAD}, {@code OPTIONS}, {@code PUT} and
 *       {@code DELETE} are repeatable, and so is any request carrying an {@code Idempotency-Key}
 *       header (the server deduplicates it); everything else, {@code POST} and {@code PATCH} among it,
 *       gets one attempt.
 *   <li>{@link #YES}: repeatable whatever the method — you know the server tolerates it.
 *   <li>{@link #NO}: one attempt whatever the method.
 * </ul>
 *
 * <p>A request that is not repeatable still runs through the policy — its deadline, attempt timeout
 * and draining apply, and its success still funds the host's retry budget — it is just never retried.
 */
public enum Repeatable {
  /** Idempotent methods and requests with an {@code Idempotency-Key} header are repeatable. */
  BY_METHOD,
  /** Repeatable whatever the method. */
  YES,
  /** Never repeated. */
  NO;

  /** The request header that marks a non-idempotent request as safe to repeat. */
  public static final String IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

  private static final Set<String> IDEMPOTENT = Set.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE");

  /**
   * Whether a request with this {@code method} and these headers may be repeated.
   *
   * @param header looks a request header up by name, null when absent
   */
  public boolean allows(String method, Function<String, @Nullable String> header) {
    switch (this) {
      case YES:
        return true;
      case NO:
        return false;
      default:
        if (IDEMPOTENT.contains(method.toUpperCase(Locale.ROOT))) {
          return true;
        }
        String key = header.apply(IDEMPOTENCY_KEY_HEADER);
        return key != null && !key.isBlank();
    }
  }
}
