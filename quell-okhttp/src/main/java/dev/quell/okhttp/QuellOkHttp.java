package dev.quell.okhttp;

import dev.quell.PolicyScope;
import dev.quell.Resilience;

/**
 * Quell for OkHttp: an application interceptor that sends each call through a policy, per host.
 *
 * <pre>{@code
 * QuellInterceptor quell = QuellOkHttp.interceptor(Resilience.HTTP.withName("catalog"));
 * OkHttpClient client = new OkHttpClient.Builder()
 *     .addInterceptor(quell)                              // an application interceptor: it retries
 *     .addNetworkInterceptor(quell.networkInterceptor())  // keeps OkHttp from resending a 503 itself
 *     .build();
 * }</pre>
 *
 * See {@link QuellInterceptor} for what it does and how it works with OkHttp's own retries, call
 * timeout and cancellation.
 */
public final class QuellOkHttp {
  private QuellOkHttp() {}

  /** An interceptor with {@link Resilience#HTTP}, per host. */
  public static QuellInterceptor interceptor() {
    return interceptor(Resilience.HTTP);
  }

  /**
   * An interceptor with {@code policy} as the template of each host's policy (named {@code name:host},
   * with its own automatic budget, and its own circuit breaker when {@code policy} has a
   * {@link dev.quell.CircuitBreaker.Config}). Give it {@link dev.quell.Classifier#HTTP} (as {@link Resilience#HTTP}
   * has) to retry by status code, or a classifier of your own that reads {@code okhttp3.Response}.
   */
  public static QuellInterceptor interceptor(Resilience policy) {
    return new QuellInterceptor(policy, QuellInterceptor.BY_HOST, PolicyScope.DEFAULT_MAX_KEYS);
  }
}
