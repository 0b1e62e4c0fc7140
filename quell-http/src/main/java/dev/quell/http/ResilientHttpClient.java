package dev.quell.http;

import dev.quell.Attempt;
import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Outcome;
import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.http.internal.Bodies;
import dev.quell.http.internal.Failures;
import dev.quell.http.internal.HostPolicies;
import dev.quell.http.internal.Hosts;
import dev.quell.http.internal.OutboundCall;
import dev.quell.http.internal.ResponseClassifier;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Your {@link HttpClient}, with every request sent through a Quell policy: retries with backoff and a
 * retry budget per host, a deadline, attempt timeouts, Retry-After honoured, and the caller's deadline
 * and criticality passed on to the server.
 *
 * <pre>{@code
 * static final ResilientHttpClient CATALOG = ResilientHttpClient.of(
 *     HttpClient.newHttpClient(),
 *     Resilience.HTTP.withName("catalog").withDeadline(Duration.ofSeconds(2)));
 *
 * HttpResponse<String> r = CATALOG.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString());
 * }</pre>
 *
 * <p>It is a type of its own, not an {@code HttpClient} subclass: a subclass compiled on Java 17 would
 * silently turn Java 21's {@code HttpClient.close()} into a no-op and lose the JDK's cancellable
 * futures. Use {@link #httpClient()} for what this type does not offer (WebSockets, push promises).
 *
 * <h2>What each call does</h2>
 * <ul>
 *   <li><b>Per host.</b> Each host (with its port, when not the scheme's default) gets its own copy of the
 *       policy and so its own automatic retry budget ({@link #budgetsByHost()}), its own circuit breaker when
 *       the policy was given a {@link CircuitBreaker.Config} ({@link #breakersByHost()}) and its own adaptive
 *       limit ({@link #adaptiveLimitsByHost()}): a storm against one host never spends the retries of
 *       another, and a host that keeps failing opens its own breaker without refusing calls to the others.
 *       At most {@value PolicyScope#DEFAULT_MAX_KEYS} hosts are held, the least recently used forgotten
 *       first. {@link #withScopeKey} keys by something else.
 *   <li><b>Only what may be repeated is retried</b> ({@link Repeatable}): {@code GET}, {@code HEAD},
 *       {@code OPTIONS}, {@code PUT}, {@code DELETE}, and any request with an {@code Idempotency-Key}
 *       header; {@code POST} and {@code PATCH} otherwise get one attempt ({@link Resilience#once()} of the
 *       host's policy), still under the deadline, and judged by the same breaker, limiters and budget as
 *       every other request to that host.
 *   <li><b>A fresh request per attempt</b>, copied from yours, carrying that attempt's own headers:
 *       {@code X-Deadline-Ms} (the time left to <em>this attempt's</em> end — the smaller of its attempt
 *       timeout and the call's deadline, and of any {@code X-Deadline-Ms} you set yourself),
 *       {@code X-Criticality} (when the ambient context has one; otherwise yours is kept), and the
 *       nested-retry marker {@code X-Quell-Attempt: n/N} when the call may retry ({@link RetryMarker}).
 *       The body publisher is subscribed again for each attempt, as the JDK itself does for redirects; a
 *       publisher that can be read only once must go with {@link Repeatable#NO}.
 *   <li><b>Status codes</b>, with {@link dev.quell.Classifier#HTTP} (the policy of {@link Resilience#HTTP}):
 *       408 and 5xx are retried, 429 and 503 wait the server's {@code Retry-After} when it gives one —
 *       delta-seconds or any of the three HTTP-date forms, measured from the response's {@code Date},
 *       rounded up ({@link RetryAfter}). A wait that would cross the deadline ends the call at once instead.
 *       With another classifier, your classifier decides, and a readable Retry-After on a retried 429 or
 *       503 still sets the wait. (A classifier that knows nothing of HTTP, such as
 *       {@link dev.quell.Classifier#DEFAULT}, takes every response as a success.)
 *   <li><b>Superseded responses are closed</b>: the body of a response the caller will never see — a 503
 *       that was retried, an answer that came after its attempt timed out or after the caller cancelled —
 *       is closed (an {@code InputStream} or {@code Stream} closed, a {@code Flow.Publisher} cancelled), so
 *       its connection is released. The response the call returns is never touched: a streaming body is
 *       yours to read and close, and is never buffered.
 *   <li><b>Outcome</b>: as {@link Resilience#execute}. The last response is returned when the attempts run
 *       out (a 503, say); transport failures are rethrown unchanged; Quell's refusals — budget, an open
 *       breaker ({@link dev.quell.StopReason#DEPENDENCY_UNAVAILABLE}, with the breaker's Retry-After),
 *       limiter, draining — throw {@link dev.quell.CallRejectedException} after the guarded pause, and a
 *       missed deadline {@link dev.quell.DeadlineExceededException} (the response that preceded them is closed). An interrupted {@code send} throws {@link InterruptedException} and
 *       keeps the thread's interrupt flag set, as every Quell call does.
 * </ul>
 *
 * <p><b>Hedging</b>: a policy with a {@link dev.quell.Hedge} sends a request still unanswered after the
 * hedge delay again, beside the first, each on its own exchange; the losers are aborted and any answer
 * they still produce is closed. Only repeatable requests are hedged.
 *
 * <h2>Blocking sends</h2>
 * {@link #send} calls the JDK's blocking {@link HttpClient#send} on the caller's thread for each attempt,
 * inside the core's synchronous driver: it costs what {@code policy.execute(() -> http.send(...))} costs,
 * plus the per-host policy and the headers.
 *
 * <h2>Cancellation</h2>
 * An attempt that outlives its attempt timeout is abandoned: {@link #send} interrupts the blocked thread
 * (the JDK's {@code send} then cancels its exchange) and {@link #sendAsync} cancels the JDK's future,
 * which since JDK 16 (JDK-8245462) asks the JDK to abort the exchange. Cancelling the future
 * {@code sendAsync} returns ({@code cancel(true)} or {@code cancel(false)}: the same) cancels the call:
 * the attempt in flight is abandoned the same way and no retry starts. Cancel that future itself, not a
 * stage derived from it — as with the JDK's own, cancelling a dependent stage does not reach the exchange.
 *
 * <p>The call always ends at once; the exchange is the JDK's to abort, and on Java 17 an aborted exchange
 * does not always close its connection under load (a hand-written {@code sendAsync} + {@code cancel(true)}
 * behaves the same). This client bounds what it can: the body of an answer that arrived as its
 * {@code send} was interrupted is closed, and every exchange given up on in flight is counted in
 * {@link #abandonedExchanges()}. If the {@code HttpClient} you wrap is a custom subclass, aborting depends
 * on its futures being cancellable.
 *
 * <p>Immutable and thread-safe; build one per dependency (or one per application) and keep it in a field,
 * as you would the {@code HttpClient}.
 */
public final class ResilientHttpClient implements AutoCloseable {
  private static final ResponseClassifier.Access JDK_RESPONSES = new ResponseClassifier.Access() {
    @Override
    public int status(Object result) {
      return result instanceof HttpResponse ? ((HttpResponse<?>) result).statusCode() : -1;
    }

    @Override
    public @Nullable String header(Object result, String name) {
      return ((HttpResponse<?>) result).headers().firstValue(name).orElse(null);
    }
  };

  private static final Function<HttpRequest, String> BY_HOST = request -> {
    URI uri = request.uri();
    return Hosts.key(uri.getScheme(), uri.getHost(), uri.getPort());
  };

  /** {@code HttpClient.close()}, present from JDK 21; null before. */
  private static final @Nullable MethodHandle CLOSE = findClose();

  private final HttpClient http;
  private final HostPolicies<HttpRequest> hosts;
  /** Shared by the clients {@link #withScopeKey} and {@link #withMaxKeys} make: they send on the same {@code HttpClient}. */
  private final LongAdder abandoned;

  private ResilientHttpClient(HttpClient http, HostPolicies<HttpRequest> hosts, LongAdder abandoned) {
    this.http = Objects.requireNonNull(http, "http");
    this.hosts = hosts;
    this.abandoned = abandoned;
  }

  /** Wraps {@code http} with {@link Resilience#HTTP}, per host. */
  public static ResilientHttpClient of(HttpClient http) {
    return of(http, Resilience.HTTP);
  }

  /**
   * Wraps {@code http} with {@code policy}, per host. The policy is a template: each host gets a copy
   * named {@code name:host} with its own automatic budget. Give it {@link dev.quell.Classifier#HTTP} (as
   * {@link Resilience#HTTP} has) or a classifier of your own that reads responses.
   */
  public static ResilientHttpClient of(HttpClient http, Resilience policy) {
    return new ResilientHttpClient(http, HostPolicies.of(policy, JDK_RESPONSES, BY_HOST, PolicyScope.DEFAULT_MAX_KEYS),
        new LongAdder());
  }

  /**
   * A client keyed by {@code scopeKey} instead of by host — a tenant, a route, or a constant for one
   * budget over everything. The new client starts with fresh budgets, breakers and adaptive limits.
   */
  public ResilientHttpClient withScopeKey(Function<? super HttpRequest, String> scopeKey) {
    return new ResilientHttpClient(http, hosts.withScopeKey(scopeKey), abandoned);
  }

  /** A client that holds at most {@code maxKeys} scope keys (at least 1), with fresh budgets, breakers and adaptive limits. */
  public ResilientHttpClient withMaxKeys(int maxKeys) {
    return new ResilientHttpClient(http, hosts.withMaxKeys(maxKeys), abandoned);
  }

  /** The {@code HttpClient} this one wraps. */
  public HttpClient httpClient() {
    return http;
  }

  /** The policy as given: the template each host's copy is made from. */
  public Resilience policy() {
    return hosts.template();
  }

  /**
   * The policy that requests to {@code key} (a host, unless {@link #withScopeKey} said otherwise) run
   * under; requests that may not be repeated run under its {@link Resilience#once()}.
   */
  public Resilience policyFor(String key) {
    return hosts.policy(key);
  }

  /** A snapshot of each host's live retry budget, least recently used first: for dashboards and alerts. */
  public Map<String, RetryBudget> budgetsByHost() {
    return hosts.budgets();
  }

  /**
   * A snapshot of each host's live circuit breaker, least recently used first: each host's own when the
   * policy was given a {@link CircuitBreaker.Config}, the one shared breaker when it was given a live one,
   * empty when it has none. Every request to a host — repeatable or not — is judged by that host's breaker.
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

  /**
   * How many exchanges this client gave up on while they were still in flight: attempts that outlived
   * their attempt timeout, lost to a hedge, or were cancelled or interrupted by the caller. Quell asked
   * the JDK to abort each one (cancelling its future, as {@code HttpClient.send} does when interrupted)
   * and closed any body that had already arrived. On Java 17 the JDK does not always close an aborted
   * exchange's connection under load, so this counts the exchanges that may still hold one; a count
   * that keeps rising together with the server's open connections points there. Counted since the
   * client was made, shared with the clients {@link #withScopeKey} and {@link #withMaxKeys} derive.
   */
  public long abandonedExchanges() {
    return abandoned.sum();
  }

  /** Sends {@code request} through the host's policy, retrying it only if {@link Repeatable#BY_METHOD} allows. */
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws IOException, InterruptedException {
    return send(request, handler, Repeatable.BY_METHOD);
  }

  /** Sends {@code request} through the host's policy, retrying it only if {@code repeatable} allows. */
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler, Repeatable repeatable)
      throws IOException, InterruptedException {
    Exchange<T> exchange = exchange(request, handler, repeatable);
    Outcome<HttpResponse<T>> outcome = exchange.call.policy().run(exchange::send);
    HttpResponse<T> response = exchange.call.settle(outcome);
    if (response != null) {
      return response;
    }
    throw Failures.asIOExceptionOrInterrupt(outcome.failure().orElse(null));
  }

  /** As {@link #send(HttpRequest, HttpResponse.BodyHandler)}, without blocking. Cancel the returned future to cancel the call. */
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    return sendAsync(request, handler, Repeatable.BY_METHOD);
  }

  /**
   * As {@link #send(HttpRequest, HttpResponse.BodyHandler, Repeatable)}, without blocking. The future
   * completes with the response, or exceptionally with what {@code send} would throw. Cancelling it
   * cancels the call and aborts the exchange in flight.
   */
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
      Repeatable repeatable) {
    Exchange<T> exchange = exchange(request, handler, repeatable);
    CompletableFuture<Outcome<HttpResponse<T>>> call = exchange.call.policy().runAsync(exchange::sendAsync);
    CompletableFuture<HttpResponse<T>> result = new CompletableFuture<>();
    result.whenComplete((r, t) -> {
      if (result.isCancelled()) {
        call.cancel(true); // the core cancels the JDK's own future, which aborts the exchange
      }
    });
    call.whenComplete((outcome, failure) -> {
      if (outcome == null) {
        exchange.call.abandon();
        result.completeExceptionally(failure != null ? failure : new IllegalStateException("call ended without an outcome"));
        return;
      }
      HttpResponse<T> response = exchange.call.settle(outcome);
      if (response != null) {
        if (!result.complete(response)) {
          Bodies.discard(response); // the caller cancelled as it arrived: nobody will read it
        }
      } else {
        Throwable f = outcome.failure().orElse(null);
        result.completeExceptionally(f != null ? f : new IllegalStateException("call ended without a response"));
      }
    });
    return result;
  }

  /**
   * Closes the wrapped {@code HttpClient} on JDK 21 and later ({@code HttpClient.close()}: waits for the
   * requests in flight, then releases its threads and connections). On JDK 17 to 20, where
   * {@code HttpClient} has no {@code close}, this does nothing and the client's resources are released
   * when it becomes unreachable. Close only a client you own: the {@code HttpClient} may be shared.
   */
  @Override
  public void close() {
    MethodHandle close = CLOSE;
    if (close == null) {
      return;
    }
    try {
      close.invoke(http);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("HttpClient.close() failed", t);
    }
  }

  private static @Nullable MethodHandle findClose() {
    try {
      return MethodHandles.publicLookup().findVirtual(HttpClient.class, "close", MethodType.methodType(void.class));
    } catch (NoSuchMethodException | IllegalAccessException e) {
      return null; // JDK 17 to 20
    }
  }

  private <T> Exchange<T> exchange(HttpRequest request, HttpResponse.BodyHandler<T> handler, Repeatable repeatable) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(handler, "handler");
    Objects.requireNonNull(repeatable, "repeatable");
    Resilience hostPolicy = hosts.policyFor(request);
    boolean repeat = repeatable.allows(request.method(), name -> request.headers().firstValue(name).orElse(null));
    OutboundCall<HttpResponse<T>> call = OutboundCall.of(hostPolicy, repeat,
        request.headers().firstValue(ResilienceContext.DEADLINE_HEADER).orElse(null), Bodies::discard);
    return new Exchange<>(http, request, handler, call, abandoned);
  }

  @Override
  public String toString() {
    return "ResilientHttpClient[" + hosts.template().name() + ", hosts=" + hosts.size() + "]";
  }

  /** One call: its request, its responses, and how to send each attempt. */
  private static final class Exchange<T> {
    final HttpClient http;
    final HttpRequest request;
    final HttpResponse.BodyHandler<T> handler;
    final OutboundCall<HttpResponse<T>> call;
    final LongAdder abandoned;

    Exchange(HttpClient http, HttpRequest request, HttpResponse.BodyHandler<T> handler, OutboundCall<HttpResponse<T>> call,
        LongAdder abandoned) {
      this.http = http;
      this.request = request;
      this.handler = handler;
      this.call = call;
      this.abandoned = abandoned;
    }

    /**
     * The blocking attempt: the JDK's own blocking {@code send}, on the caller's thread (no hand-over to
     * another thread, which is what {@code sendAsync(...).get()} costs). An attempt timeout, a winning
     * hedge or the caller interrupts this thread; the JDK's {@code send} then cancels its exchange.
     */
    HttpResponse<T> send(Attempt attempt) throws IOException, InterruptedException {
      call.attemptStarting(attempt); // release the 503 before asking again
      Arrival<T> arrival = new Arrival<>(handler);
      HttpRequest attemptRequest = requestFor(attempt);
      boolean interruptedBefore = Thread.currentThread().isInterrupted(); // then the JDK sends nothing
      HttpResponse<T> response;
      try {
        response = http.send(attemptRequest, arrival);
      } catch (InterruptedException e) {
        // The JDK asked its exchange to abort; if the answer's headers were already here, its body may
        // be open with nobody to read it: close it. Either way the exchange was abandoned in flight.
        if (!interruptedBefore) {
          abandoned.increment();
        }
        arrival.discard();
        throw e;
      }
      call.received(response);
      return response;
    }

    CompletionStage<HttpResponse<T>> sendAsync(Attempt attempt) {
      call.attemptStarting(attempt);
      CompletableFuture<HttpResponse<T>> future = http.sendAsync(requestFor(attempt), handler);
      future.whenComplete((response, failure) -> {
        if (response != null) {
          call.received(response);
        }
      });
      // Cancelling the attempt (the core does, on timeout, on cancel and for a losing hedge) cancels the
      // JDK's own future, which aborts the exchange. The JDK may complete that future with its own
      // IOException as it aborts, so the abandonment is counted here, where the cancel is asked for.
      Abandonable<HttpResponse<T>> attemptFuture = new Abandonable<>(future, abandoned);
      future.whenComplete((response, failure) -> {
        if (failure != null) {
          attemptFuture.completeExceptionally(failure);
        } else {
          attemptFuture.complete(response);
        }
      });
      return attemptFuture;
    }

    /** Runs inside the attempt: the current context is this attempt's own. */
    HttpRequest requestFor(Attempt attempt) {
      ResilienceContext context = ResilienceContext.current();
      HttpRequest.Builder builder = HttpRequest.newBuilder(request, (name, value) -> !OutboundCall.replaces(name, context));
      call.writeHeaders(context, attempt, builder::setHeader);
      return builder.build();
    }
  }

  /** An attempt's future whose cancel cancels the JDK's future beneath it and counts an exchange abandoned in flight. */
  private static final class Abandonable<T> extends CompletableFuture<T> {
    private final CompletableFuture<T> exchange;
    private final LongAdder abandoned;

    Abandonable(CompletableFuture<T> exchange, LongAdder abandoned) {
      this.exchange = exchange;
      this.abandoned = abandoned;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      // this future first: the JDK completes its own with an IOException as it aborts, which would complete this one
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      if (!exchange.isDone()) {
        exchange.cancel(true); // the JDK's cancellable future: aborts the exchange
        abandoned.increment();
      }
      return cancelled;
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
      return new CompletableFuture<>(); // dependents are plain futures
    }
  }

  /**
   * A body handler that remembers the body subscriber the JDK made for the answer, so that an answer
   * whose headers arrived as its {@code send} was interrupted — which the JDK's {@code send} drops —
   * can still have its body closed. The subscriber itself is the JDK's, unwrapped: the JDK delivers the
   * bodies of its own subscribers without a thread hand-over, and a wrapper would lose that.
   */
  private static final class Arrival<T> implements HttpResponse.BodyHandler<T> {
    private final HttpResponse.BodyHandler<T> handler;
    private volatile HttpResponse.@Nullable BodySubscriber<T> subscriber;

    Arrival(HttpResponse.BodyHandler<T> handler) {
      this.handler = handler;
    }

    @Override
    public HttpResponse.BodySubscriber<T> apply(HttpResponse.ResponseInfo info) {
      HttpResponse.BodySubscriber<T> s = handler.apply(info);
      subscriber = s;
      return s;
    }

    /** Closes the body of an answer that arrived, if one did; never throws. */
    void discard() {
      HttpResponse.BodySubscriber<T> s = subscriber;
      if (s == null) {
        return;
      }
      try {
        // For the JDK's streaming subscribers this is the stream or publisher the response would have
        // carried (ofLines maps a new Stream over the same input); a buffering one has nothing open.
        s.getBody().whenComplete((body, failure) -> Bodies.discardBody(body));
      } catch (RuntimeException ignored) {
        // a subscriber of the user's own that cannot give its body twice: its exchange was aborted
      }
    }
  }
}
