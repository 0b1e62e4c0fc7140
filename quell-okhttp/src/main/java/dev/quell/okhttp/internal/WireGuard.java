package dev.quell.okhttp.internal;

import dev.quell.Attempt;
import dev.quell.RetryBudget;
import dev.quell.internal.Internal;
import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The network half of the interceptor. OkHttp's {@code RetryAndFollowUpInterceptor} runs below every
 * application interceptor and resends a request by itself after a 503 that carries
 * {@code Retry-After: 0} — whatever {@code retryOnConnectionFailure} says. That resend would be an attempt
 * the budget never funded. Here, on a request Quell sent (it carries a {@link Tag}), such a header is
 * taken off the response before OkHttp reads it, so OkHttp does not resend, and the application
 * interceptor puts it back before its classifier sees the response: the retry is Quell's, or none.
 */
@Internal
public final class WireGuard implements Interceptor {
  /** Stateless: one for every client. */
  public static final WireGuard INSTANCE = new WireGuard();

  private static final String RETRY_AFTER = "Retry-After";

  private WireGuard() {}

  @Override
  public Response intercept(Chain chain) throws IOException {
    Tag tag = chain.request().tag(Tag.class);
    Response response = chain.proceed(chain.request());
    if (tag == null) {
      return response;
    }
    tag.guarded = true;
    if (response.code() == 503) {
      String retryAfter = response.header(RETRY_AFTER);
      if (retryAfter != null && meansNow(retryAfter)) {
        tag.hiddenRetryAfter = retryAfter;
        return response.newBuilder().removeHeader(RETRY_AFTER).build();
      }
    }
    return response;
  }

  /** What OkHttp reads as "resend at once": digits only, all of them zero. */
  private static boolean meansNow(String value) {
    if (value.isEmpty()) {
      return false;
    }
    for (int i = 0; i < value.length(); i++) {
      if (value.charAt(i) != '0') {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return "QuellInterceptor.networkInterceptor()";
  }

  /** One attempt's mark on its request, and what the network half did to its response. */
  public static final class Tag {
    volatile boolean guarded;
    volatile @Nullable String hiddenRetryAfter;

    /**
     * The attempt's response as the server sent it: a Retry-After the network half hid is put back. When
     * the network half is not installed and OkHttp resent the request by itself after a 503 or a 408,
     * each resend is charged to {@code budget} as the retry it was (it has already reached the server).
     */
    public Response restore(Response response, Attempt attempt, RetryBudget budget) {
      String hidden = hiddenRetryAfter;
      if (hidden != null) {
        return response.newBuilder().header(RETRY_AFTER, hidden).build();
      }
      if (!guarded) {
        for (Response prior = response.priorResponse(); prior != null; prior = prior.priorResponse()) {
          if (prior.code() == 503 || prior.code() == 408) {
            budget.trySpend(attempt.criticality());
          }
        }
      }
      return response;
    }
  }
}
