package dev.quell.okhttp;

import dev.quell.Attempt;
import dev.quell.CallRejectedException;
import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceConfigurationException;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.http.Repeatable;
import dev.quell.http.internal.Failures;
import dev.quell.http.internal.HostPolicies;
import dev.quell.http.internal.Hosts;
import dev.quell.http.internal.OutboundCall;
import dev.quell.http.internal.ResponseClassifier;
import dev.quell.okhttp.internal.CancelWatch;
import dev.quell.okhttp.internal.DeadlineBody;
import dev.quell.okhttp.internal.WireGuard;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.jspecify.annotations.Nullable;

/**
 * An OkHttp application interceptor that runs each call through a Quell policy, per host. Made by
 * {@link QuellOkHttp#interceptor(Resilience)}; add it with {@code OkHttpClient.Builder.addInterceptor}
 * (an <em>application</em> interceptor: a network interceptor runs once per network hop and cannot retry),
 * and its {@link #networkInterceptor()} with {@code addNetworkInterceptor}:
 *
 * <pre>{@code
 * QuellInterceptor quell = QuellOkHttp.interceptor(Resilience.HTTP.withName("catalog"));
 * OkHttpClient client = new OkHttpClient.Builder()
 *     .addInterceptor(quell)
 *     .addNetworkInterceptor(quell.networkInterceptor())
 *     .build();
 * }</pre>
 *
 * <h2>What each call does</h2>
 * <ul>
 *   <li><b>{@code chain.proceed} once per attempt</b>, with a fresh copy of the request carrying that
 *       attempt's {@code X-Deadline-Ms}, {@code X-Criticality} and nested-retry marker
 *       ({@code X-Quell-Attempt: n/N}), exactly as {@code ResilientHttpClient} does. Before a retry the
 *       previous response is closed, so OkHttp never refuses with "cannot make a new request because the
 *       previous response is still open"; every response the caller will not receive is closed.
 *   <li><b>One request on the wire per attempt.</b> OkHttp's own resends, which run below any application
 *       interceptor and would be attempts the budget never funded, are off: each attempt runs with
 *       {@code retryOnConnectionFailure} off (no resend after a 408 or a failed connection), and the network
 *       half keeps OkHttp from resending a 503 with {@code Retry-After: 0}. Quell retries those instead,
 *       through the budget. Redirects and authentication challenges are followed as before.
 *   <li><b>Per host</b>: each host gets its own copy of the policy, with its own retry budget
 *       ({@link #budgetsByHost()}), its own circuit breaker when the policy was given a
 *       {@link CircuitBreaker.Config} ({@link #breakersByHost()}) and its own adaptive limit
 *       ({@link #adaptiveLimitsByHost()}): a host that keeps failing opens its own breaker, and the others
 *       are not refused.
 *   <li><b>Only what may be repeated is retried</b> ({@link Repeatable}): idempotent methods and requests
 *       with an {@code Idempotency-Key}; tag a request with {@code Repeatable.YES} or {@code Repeatable.NO}
 *       ({@code new Request.Builder().tag(Repeatable.class, Repeatable.YES)}) to decide yourself. A request
 *       whose body is one-shot ({@link RequestBody#isOneShot()}) or duplex ({@link RequestBody#isDuplex()})
 *       is never retried, since it cannot be sent twice; when such a request asked to be retried and failed,
 *       its exception carries a suppressed note saying so. A request that is not retried runs under the
 *       host's {@link Resilience#once()}: one attempt, judged by the same breaker, limiters and budget as
 *       every other request to that host.
 *   <li><b>Status codes and Retry-After</b>: with {@link dev.quell.Classifier#HTTP} (the classifier of
 *       {@link Resilience#HTTP}), 408 and 5xx are retried and 429/503 wait the server's {@code Retry-After}
 *       in either form — OkHttp's own follow-up logic reads only delta-seconds and ignores a date. Any other
 *       classifier receives the {@link Response} to judge.
 *   <li><b>Attempt timeouts</b> become OkHttp's connect, read and write timeouts for that attempt (never
 *       longer than yours), because a thread blocked in a socket read does not notice an interrupt: a silent
 *       server is given up on at the attempt timeout.
 *   <li><b>The deadline bounds the body</b>: the body of the response the caller receives can be read until
 *       the call's deadline (the policy's or {@code callTimeout}'s, whichever is first); then the call is
 *       cancelled and the read throws a {@link SocketTimeoutException}. A server that trickles bytes never
 *       trips the read timeout, so only this ends it.
 *   <li><b>Failures</b> stay {@link IOException}s, as OkHttp expects of an interceptor (an unchecked
 *       exception would crash an enqueued call's dispatcher thread): a transport failure is rethrown
 *       unchanged; a refusal ({@link CallRejectedException}: budget, breaker, limiter, draining) arrives, after
 *       the guarded pause, as an {@code IOException} whose cause is the refusal (an open breaker's says
 *       {@link StopReason#DEPENDENCY_UNAVAILABLE} and carries its Retry-After); a deadline overrun or a
 *       last attempt that timed out arrives as a {@link SocketTimeoutException} whose cause is Quell's exception.
 * </ul>
 *
 * <p>It does not hedge: OkHttp runs one exchange of a call at a time, so a policy with a
 * {@link dev.quell.Hedge} is refused when the interceptor is made.
 *
 * <h2>With OkHttp's own machinery</h2>
 * <ul>
 *   <li>{@code callTimeout} bounds the whole call, retries and backoff included. The interceptor adopts it as
 *       the call's deadline, so Quell never waits for a retry the call timeout would cut off; when it fires,
 *       OkHttp reports its {@code InterruptedIOException("timeout")} as usual.
 *   <li>{@code Call.cancel()} aborts the attempt in flight and ends the call with no retry; during a backoff
 *       wait it wakes the waiting thread at once.
 * </ul>
 *
 * <p>Immutable and thread-safe: one interceptor serves every call of a client.
 */
public final class QuellInterceptor implements Interceptor {
  private static final ResponseClassifier.Access OKHTTP_RESPONSES = new ResponseClassifier.Access() {
    @Override
    public int status(Object result) {
      return result instanceof Response ? ((Response) result).code() : -1;
    }

    @Override
    public @Nullable String header(Object result, String name) {
      return ((Response) result).header(name);
    }
  };

  static final Function<Request, String> BY_HOST = request -> {
    HttpUrl url = request.url();
    return Hosts.key(url.scheme(), url.host(), url.port());
  };

  private final HostPolicies<Request> hosts;

  QuellInterceptor(Resilience policy, Function<? super Request, String> scopeKey, int maxKeys) {
    this(policy, HostPolicies.of(policy, OKHTTP_RESPONSES, scopeKey, maxKeys));
  }

  private QuellInterceptor(Resilience policy, HostPolicies<Request> hosts) {
    Objects.requireNonNull(policy, "policy");
    policy.hedge().ifPresent(h -> {
      throw new ResilienceConfigurationException("hedge was " + h + " in policy '" + policy.name()
          + "': an OkHttp interceptor cannot hedge, since OkHttp runs one exchange of a call at a time;"
          + " give the interceptor policy.withoutHedge()");
    });
    this.hosts = hosts;
  }

  /** An interceptor keyed by {@code scopeKey} instead of by host, with fresh budgets, breakers and adaptive limits. */
  public QuellInterceptor withScopeKey(Function<? super Request, String> scopeKey) {
    return new QuellInterceptor(hosts.template(), hosts.withScopeKey(scopeKey));
  }

  /** An interceptor that holds at most {@code maxKeys} scope keys (at least 1), with fresh budgets, breakers and adaptive limits. */
  public QuellInterceptor withMaxKeys(int maxKeys) {
    return new QuellInterceptor(hosts.template(), hosts.withMaxKeys(maxKeys));
  }

  /**
   * The network half: add it with {@code OkHttpClient.Builder.addNetworkInterceptor} beside this one.
   * OkHttp resends a request by itself, below any application interceptor, when a 503 says
   * {@code Retry-After: 0}; this stops that resend (it hides the header from OkHttp, and this
   * interceptor gives it back), so the retry is Quell's, funded by the budget. It touches only requests
   * sent through a {@code QuellInterceptor}, and holds no state.
   */
  public Interceptor networkInterceptor() {
    return WireGuard.INSTANCE;
  }

  /** The policy as given: the template each host's copy is made from. */
  public Resilience policy() {
    return hosts.template();
  }

  /**
   * The policy that requests to {@code key} (a host, unless {@link #withScopeKey} said otherwise) run
   * under; requests that are not retried run under its {@link Resilience#once()}.
   */
  public Resilience policyFor(String key) {
    return hosts.policy(key);
  }

  /** A snapshot of each host's live retry budget, least recently used first. */
  public Map<String, RetryBudget> budgetsByHost() {
    return hosts.budgets();
  }

  /**
   * A snapshot of each host's live circuit breaker, least recently used first: each host's own when the
   * policy was given a {@link CircuitBreaker.Config}, the one shared breaker when it was given a live one,
   * empty when it has none. Every request to a host — retried or not — is judged by that host's breaker.
   */
  public Map<String, CircuitBreaker> breakersByHost() {
    return hosts.breakers();
  }

  /**
   * A snapshot of each host's own adaptive concurrency limit ({@link Limiter#adaptive()}), least recently
   * used first; empty when the policy has none. Rate limiters and bulkheads are shared by every host, as given.
   */
  public Map<String, Limiter> adaptiveLimitsByHost() {
    return hosts.adaptiveLimits();
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    Resilience hostPolicy = hosts.policyFor(request);
    Repeatable mark = request.tag(Repeatable.class);
    boolean wantsRepeat = (mark == null ? Repeatable.BY_METHOD : mark).allows(request.method(), request::header);
    String unrepeatableBody = unrepeatableBody(request.body());
    OutboundCall<Response> call = OutboundCall.of(hostPolicy, wantsRepeat && unrepeatableBody == null,
        request.header(ResilienceContext.DEADLINE_HEADER), Response::close);

    Call okCall = chain.call();
    boolean interruptedBefore = Thread.currentThread().isInterrupted();
    Attempts attempts = new Attempts(chain, request, call, call.retries() ? CancelWatch.watch(okCall) : null);
    Outcome<Response> outcome;
    try (ResilienceContext.Scope scope = withCallTimeout(okCall).open()) {
      outcome = call.policy().run(attempts::proceed);
    } finally {
      attempts.endWatch(interruptedBefore);
    }
    Response response = call.settle(outcome);
    if (response != null) {
      return attempts.boundedByDeadline(response);
    }
    Throwable failure = outcome.failure().orElse(null);
    if (outcome.stopReason() == StopReason.CANCELLED && okCall.isCanceled()) {
      if (!interruptedBefore) {
        Thread.interrupted(); // OkHttp's cancel, not an interrupt of this thread: leave no flag behind
      }
      IOException original = attempts.cancelled;
      throw original != null ? original : new IOException("Canceled");
    }
    if (unrepeatableBody != null && wantsRepeat && hostPolicy.attempts() > 1 && failure instanceof IOException) {
      failure.addSuppressed(new IOException("Quell did not retry this request: its body is " + unrepeatableBody
          + " (RequestBody.is" + (unrepeatableBody.equals("one-shot") ? "OneShot" : "Duplex")
          + "() is true), so it cannot be sent again"));
    }
    throw Failures.asIOException(failure, Failures.Refusals.AS_IO_EXCEPTION);
  }

  private static @Nullable String unrepeatableBody(@Nullable RequestBody body) {
    if (body == null) {
      return null;
    }
    if (body.isDuplex()) {
      return "duplex";
    }
    return body.isOneShot() ? "one-shot" : null;
  }

  /** OkHttp's call timeout, as the call's deadline: Quell then never waits for a retry it would cut off. */
  private static ResilienceContext withCallTimeout(Call call) {
    ResilienceContext current = ResilienceContext.current();
    long nanos = call.timeout().timeoutNanos();
    return nanos > 0 ? current.withDeadline(Duration.ofNanos(nanos)) : current;
  }

  @Override
  public String toString() {
    return "QuellInterceptor[" + hosts.template().name() + ", hosts=" + hosts.size() + "]";
  }

  /** One call's attempts. Runs on the one thread OkHttp gives the call. */
  private static final class Attempts {
    final Chain chain;
    final Request request;
    final OutboundCall<Response> call;
    final @Nullable CancelWatch watch;
    /** The IOException OkHttp raised when the call was cancelled, rethrown as it was. */
    @Nullable IOException cancelled;
    /** When the call's deadline passes, in {@link System#nanoTime()}; Long.MAX_VALUE for none. */
    long deadlineNanoTime = Long.MAX_VALUE;

    Attempts(Chain chain, Request request, OutboundCall<Response> call, @Nullable CancelWatch watch) {
      this.chain = chain;
      this.request = request;
      this.call = call;
      this.watch = watch;
    }

    Response proceed(Attempt attempt) throws IOException {
      CancelWatch w = watch;
      if (w != null) {
        w.attemptStarting();
      }
      Duration remaining = attempt.remaining();
      if (remaining.compareTo(Duration.ofDays(1)) < 0) {
        deadlineNanoTime = System.nanoTime() + remaining.toNanos();
      }
      try {
        call.attemptStarting(attempt); // close the previous response before OkHttp is asked for the next
        if (chain.call().isCanceled()) {
          throw cancelled(new IOException("Canceled"));
        }
        WireGuard.Tag wire = new WireGuard.Tag();
        Response response;
        try {
          // OkHttp's own resends (a 408, a failed connection) would be attempts the budget never saw: off.
          response = timed(chain, attempt).withRetryOnConnectionFailure(false).proceed(requestFor(attempt, wire));
        } catch (IOException e) {
          if (chain.call().isCanceled()) {
            throw cancelled(e);
          }
          throw e;
        }
        response = wire.restore(response, attempt, call.policy().budget());
        call.received(response);
        return response;
      } finally {
        if (w != null) {
          w.waiting(); // between attempts a cancel must wake the backoff wait
        }
      }
    }

    /** The call was cancelled: remember OkHttp's exception and tell the core it was a cancellation. */
    private InterruptedIOException cancelled(IOException e) {
      cancelled = e;
      InterruptedIOException signal = new InterruptedIOException("call cancelled");
      signal.initCause(e);
      return signal;
    }

    void endWatch(boolean interruptedBefore) {
      CancelWatch w = watch;
      if (w != null && w.end() && !interruptedBefore) {
        Thread.interrupted(); // the watch interrupted this thread to end a backoff wait: take it back
      }
    }

    /** The response the caller receives, its body read no later than the call's deadline. */
    Response boundedByDeadline(Response response) {
      ResponseBody body = response.body();
      if (deadlineNanoTime == Long.MAX_VALUE || body == null) {
        return response;
      }
      return response.newBuilder().body(DeadlineBody.of(body, chain.call(), deadlineNanoTime)).build();
    }

    private Request requestFor(Attempt attempt, WireGuard.Tag wire) {
      ResilienceContext context = ResilienceContext.current();
      Request.Builder builder = request.newBuilder().tag(WireGuard.Tag.class, wire);
      for (String name : request.headers().names()) {
        if (OutboundCall.replaces(name, context)) {
          builder.removeHeader(name);
        }
      }
      call.writeHeaders(context, attempt, builder::header);
      return builder.build();
    }

    /** The attempt timeout as OkHttp's connect, read and write timeouts, never longer than the client's own. */
    private static Chain timed(Chain chain, Attempt attempt) {
      Duration timeout = attempt.timeout();
      if (timeout.compareTo(Duration.ofDays(1)) > 0) {
        return chain; // none, in practice
      }
      int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis() + (timeout.toNanosPart() % 1_000_000 > 0 ? 1 : 0)));
      return chain
          .withConnectTimeout(tighter(chain.connectTimeoutMillis(), millis), TimeUnit.MILLISECONDS)
          .withReadTimeout(tighter(chain.readTimeoutMillis(), millis), TimeUnit.MILLISECONDS)
          .withWriteTimeout(tighter(chain.writeTimeoutMillis(), millis), TimeUnit.MILLISECONDS);
    }

    private static int tighter(int current, int attempt) {
      return current == 0 ? attempt : Math.min(current, attempt); // 0 is "no timeout" to OkHttp
    }
  }
}
