package dev.quell.spring;

import dev.quell.Attempt;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.http.Repeatable;
import dev.quell.http.internal.Hosts;
import dev.quell.http.internal.OutboundHeaders;
import dev.quell.http.internal.ResponseClassifier;
import dev.quell.http.internal.Superseded;
import dev.quell.spring.internal.InFlight;
import dev.quell.spring.internal.PolicyRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * Runs each exchange of a {@code WebClient} through a Quell policy, per host: the same rules as
 * {@link QuellRestClientInterceptor} (which policy, per-host copies, what is repeated, the headers of each
 * attempt), asynchronously. The starter adds it to every {@code WebClient.Builder} Spring Boot provides;
 * add it to a builder of your own with {@code filter(...)}.
 *
 * <ul>
 *   <li>Each attempt subscribes to the next filter again, with a fresh copy of the request: a body must be
 *       one that can be sent again ({@code bodyValue}, or a publisher that can be subscribed to twice) for
 *       a request that is retried.
 *   <li>A superseded response — a 503 that is retried, a losing hedge's, one that arrives after its attempt
 *       timed out or after you cancelled — has its body released, so its connection goes back to the pool.
 *   <li>An attempt timeout cancels the attempt's subscription, which aborts the exchange. Cancelling the
 *       {@code Mono} (a {@code timeout} operator, a disconnected caller) cancels the whole call: no retry
 *       starts.
 *   <li>Failures come out of the {@code Mono} as they are: the transport's exception, or Quell's refusal.
 *   <li>Deadline and criticality come from the {@code ResilienceContext} current when the {@code Mono} is
 *       subscribed.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class QuellWebClientFilter implements ExchangeFilterFunction {
  /** The request attribute naming the policy an exchange runs under (the same name as the RestClient's). */
  public static final String POLICY_ATTRIBUTE = QuellRestClientInterceptor.POLICY_ATTRIBUTE;
  /** The request attribute holding a {@link Repeatable}. */
  public static final String REPEATABLE_ATTRIBUTE = QuellRestClientInterceptor.REPEATABLE_ATTRIBUTE;

  private static final ResponseClassifier.Access RESPONSES = new ResponseClassifier.Access() {
    @Override
    public int status(Object result) {
      return result instanceof ClientResponse ? ((ClientResponse) result).statusCode().value() : -1;
    }

    @Override
    public @Nullable String header(Object result, String name) {
      return ((ClientResponse) result).headers().asHttpHeaders().getFirst(name);
    }
  };

  private final PolicyRegistry registry;
  private final @Nullable String policy;

  /** A filter whose exchanges run under {@code quell.http.client.policy} unless their attribute names another. */
  public QuellWebClientFilter(QuellPolicies policies) {
    this.registry = policies.registry();
    this.policy = null;
  }

  /** A filter whose exchanges run under {@code policy} unless their attribute names another. */
  public QuellWebClientFilter(QuellPolicies policies, String policy) {
    this.registry = policies.registry();
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    return Mono.defer(() -> {
      String name = QuellRestClientInterceptor.policyFor(request.attribute(POLICY_ATTRIBUTE).orElse(null), policy, registry);
      URI uri = request.url();
      Resilience hostPolicy = registry.hostPolicy(name, Hosts.key(uri.getScheme(), uri.getHost(), uri.getPort()), RESPONSES);
      boolean repeat = QuellRestClientInterceptor.repeatable(request.attribute(REPEATABLE_ATTRIBUTE).orElse(null))
          .allows(request.method().name(), request.headers()::getFirst) && hostPolicy.attempts() > 1;
      Resilience call = repeat ? hostPolicy : hostPolicy.once();
      Exchange exchange = new Exchange(request, next, call.attempts());
      InFlight inFlight = registry.inFlight();
      inFlight.enter();
      CompletableFuture<Outcome<ClientResponse>> outcome;
      try {
        outcome = call.runAsync(exchange::start);
      } catch (RuntimeException | Error e) {
        inFlight.exit();
        throw e;
      }
      outcome.whenComplete((o, e) -> inFlight.exit());
      return Mono.fromFuture(outcome)
          .flatMap(o -> {
            ClientResponse response = o.hasValue() ? o.value() : null;
            exchange.responses.end(response);
            if (response != null) {
              return Mono.just(response);
            }
            Throwable failure = o.failure().orElseGet(() -> new IllegalStateException("call ended without an answer: " + o));
            return Mono.error(failure);
          })
          .doOnCancel(() -> exchange.responses.end(null)); // whatever arrives from now on is released
    });
  }

  @Override
  public String toString() {
    return "QuellWebClientFilter[" + (policy != null ? policy : "quell.http.client.policy") + "]";
  }

  /** One exchange's attempts. */
  private static final class Exchange {
    final ClientRequest request;
    final ExchangeFunction next;
    final int attempts;
    final @Nullable Duration callerDeadline;
    final Superseded<ClientResponse> responses = new Superseded<>(Exchange::release);

    Exchange(ClientRequest request, ExchangeFunction next, int attempts) {
      this.request = request;
      this.next = next;
      this.attempts = attempts;
      this.callerDeadline = ResilienceContext.parseDeadline(request.headers().getFirst(ResilienceContext.DEADLINE_HEADER));
    }

    CompletionStage<ClientResponse> start(Attempt attempt) {
      if (attempt.isRetry() && !attempt.isHedge()) {
        responses.supersede();
      }
      ResilienceContext context = ResilienceContext.current(); // the attempt's own: its deadline is this attempt's end
      ClientRequest copy = ClientRequest.from(request).headers(headers -> write(headers, context, attempt)).build();
      return next.exchange(copy).doOnNext(responses::received).toFuture();
    }

    private void write(HttpHeaders headers, ResilienceContext context, Attempt attempt) {
      for (String name : request.headers().headerNames()) {
        if (OutboundHeaders.replaces(name, context)) {
          headers.remove(name);
        }
      }
      OutboundHeaders.write(context, callerDeadline, attempt.number(), attempts, headers::set);
    }

    private static void release(ClientResponse response) {
      response.releaseBody().subscribe(null, e -> {}); // best effort: a broken connection is already gone
    }
  }
}
