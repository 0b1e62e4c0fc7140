package dev.quell.spring;

import dev.quell.Attempt;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.http.Repeatable;
import dev.quell.http.internal.Failures;
import dev.quell.http.internal.Hosts;
import dev.quell.http.internal.OutboundHeaders;
import dev.quell.http.internal.ResponseClassifier;
import dev.quell.http.internal.Superseded;
import dev.quell.spring.internal.InFlight;
import dev.quell.spring.internal.PolicyRegistry;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;

/**
 * Runs each request of a {@code RestClient} (or {@code RestTemplate}) through a Quell policy, per host.
 * The starter adds it to every {@code RestClient.Builder} and {@code RestTemplateBuilder} Spring Boot
 * provides ({@code quell.http.client.enabled}); add it to a builder of your own with
 * {@code requestInterceptor(...)}.
 *
 * <ul>
 *   <li><b>Which policy</b>: the request attribute {@value #POLICY_ATTRIBUTE}, else the interceptor's
 *       own, else {@code quell.http.client.policy} ({@code http}). Set it per request with
 *       {@code .attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "inventory")}, or for a whole client
 *       with the builder's {@code defaultRequest}. A policy that names no preset starts from {@code http}
 *       here: 408 and 5xx are retried, 429 and 503 wait the server's {@code Retry-After}.
 *   <li><b>Per host</b>: each host (with its port, when not the scheme's default) gets its own copy of the
 *       policy, {@code policy:host}, with its own retry budget, breaker and adaptive limit, so a storm
 *       against one dependency never refuses retries to another. Rate and concurrency limits are shared
 *       by the policy's hosts.
 *   <li><b>Only what may be repeated is retried</b>: {@code GET}, {@code HEAD}, {@code OPTIONS}, {@code PUT},
 *       {@code DELETE} and requests with an {@code Idempotency-Key}; the attribute
 *       {@value #REPEATABLE_ATTRIBUTE} ({@link Repeatable#YES} or {@link Repeatable#NO}) decides for one
 *       request. The body Spring hands an interceptor is a byte array, so it can always be sent again.
 *   <li><b>Each attempt</b> is a fresh copy of the request with that attempt's {@code X-Deadline-Ms},
 *       {@code X-Criticality} and nested-retry marker ({@code X-Quell-Attempt}).
 *   <li><b>Superseded responses are closed</b>: a 503 that is retried, an answer that came after its
 *       attempt timed out. The response you receive is never touched; when the attempts run out on a 503,
 *       you receive that 503 (and {@code RestClient} raises its usual exception for it).
 *   <li><b>Failures</b>: an {@code IOException} from the transport comes out unchanged (Spring turns it
 *       into {@code ResourceAccessException}); Quell's refusals come out as themselves
 *       ({@code CallRejectedException}, {@code DeadlineExceededException}, {@code AttemptTimeoutException}),
 *       so the servlet filter answers 503 or 504 when they escape a handler.
 *   <li><b>Attempt timeouts</b> interrupt the calling thread, as for any synchronous Quell call: a
 *       {@code java.net.http} based request factory (Spring Boot's {@code jdk} factory) stops at once.
 * </ul>
 *
 * <p>Immutable and thread-safe: one interceptor serves every request of a client.
 */
public final class QuellRestClientInterceptor implements ClientHttpRequestInterceptor {
  /** The request attribute naming the policy a request runs under. */
  public static final String POLICY_ATTRIBUTE = "quell.policy";
  /** The request attribute holding a {@link Repeatable} that decides whether a request may be retried. */
  public static final String REPEATABLE_ATTRIBUTE = "quell.repeatable";

  private static final ResponseClassifier.Access RESPONSES = new ResponseClassifier.Access() {
    @Override
    public int status(Object result) {
      if (!(result instanceof ClientHttpResponse)) {
        return -1;
      }
      try {
        return ((ClientHttpResponse) result).getStatusCode().value();
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }

    @Override
    public @Nullable String header(Object result, String name) {
      return ((ClientHttpResponse) result).getHeaders().getFirst(name);
    }
  };

  private final PolicyRegistry registry;
  private final @Nullable String policy;

  /** An interceptor whose requests run under {@code quell.http.client.policy} unless their attribute names another. */
  public QuellRestClientInterceptor(QuellPolicies policies) {
    this.registry = policies.registry();
    this.policy = null;
  }

  /** An interceptor whose requests run under {@code policy} unless their attribute names another. */
  public QuellRestClientInterceptor(QuellPolicies policies, String policy) {
    this.registry = policies.registry();
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  @Override
  public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
      throws IOException {
    String name = policyFor(request.getAttributes().get(POLICY_ATTRIBUTE), policy, registry);
    URI uri = request.getURI();
    Resilience hostPolicy = registry.hostPolicy(name, Hosts.key(uri.getScheme(), uri.getHost(), uri.getPort()), RESPONSES);
    boolean repeat = repeatable(request.getAttributes().get(REPEATABLE_ATTRIBUTE))
        .allows(request.getMethod().name(), request.getHeaders()::getFirst) && hostPolicy.attempts() > 1;
    Resilience call = repeat ? hostPolicy : hostPolicy.once();
    Attempts attempts = new Attempts(request, body, execution, call.attempts());
    InFlight inFlight = registry.inFlight();
    inFlight.enter();
    try {
      Outcome<ClientHttpResponse> outcome = call.run(attempts::send);
      ClientHttpResponse response = outcome.hasValue() ? outcome.value() : null;
      attempts.responses.end(response);
      if (response != null) {
        return response;
      }
      // the one mapping every Quell HTTP client uses (quell-http): refusals pass as they are
      throw Failures.asIOException(outcome.failure().orElse(null), Failures.Refusals.UNCHANGED);
    } finally {
      inFlight.exit();
    }
  }

  static String policyFor(@Nullable Object attribute, @Nullable String own, PolicyRegistry registry) {
    if (attribute instanceof String && !((String) attribute).isBlank()) {
      return (String) attribute;
    }
    return own != null ? own : registry.properties().getHttp().getClient().getPolicy();
  }

  static Repeatable repeatable(@Nullable Object attribute) {
    if (attribute instanceof Repeatable) {
      return (Repeatable) attribute;
    }
    if (attribute instanceof String) {
      return Repeatable.valueOf(((String) attribute).trim().toUpperCase(java.util.Locale.ROOT));
    }
    return Repeatable.BY_METHOD;
  }

  @Override
  public String toString() {
    return "QuellRestClientInterceptor[" + (policy != null ? policy : "quell.http.client.policy") + "]";
  }

  /** One request's attempts. */
  private static final class Attempts {
    final HttpRequest request;
    final byte[] body;
    final ClientHttpRequestExecution execution;
    final int attempts;
    final @Nullable Duration callerDeadline;
    final Superseded<ClientHttpResponse> responses = new Superseded<>(ClientHttpResponse::close);

    Attempts(HttpRequest request, byte[] body, ClientHttpRequestExecution execution, int attempts) {
      this.request = request;
      this.body = body;
      this.execution = execution;
      this.attempts = attempts;
      this.callerDeadline = ResilienceContext.parseDeadline(request.getHeaders().getFirst(ResilienceContext.DEADLINE_HEADER));
    }

    ClientHttpResponse send(Attempt attempt) throws IOException {
      if (attempt.isRetry() && !attempt.isHedge()) {
        responses.supersede(); // give the connection back before asking for the next
      }
      ClientHttpResponse response = execution.execute(forAttempt(attempt), body);
      responses.received(response);
      return response;
    }

    private HttpRequest forAttempt(Attempt attempt) {
      ResilienceContext context = ResilienceContext.current();
      HttpHeaders headers = HttpHeaders.copyOf(request.getHeaders());
      for (String name : request.getHeaders().headerNames()) {
        if (OutboundHeaders.replaces(name, context)) {
          headers.remove(name);
        }
      }
      OutboundHeaders.write(context, callerDeadline, attempt.number(), attempts, headers::set);
      return new HttpRequestWrapper(request) {
        @Override
        public HttpHeaders getHeaders() {
          return headers;
        }
      };
    }
  }
}
