package dev.quell.http;

import dev.quell.Draining;
import dev.quell.ResilienceConfigurationException;
import dev.quell.ResilienceContext;
import dev.quell.http.internal.ServerAnswers;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A Jakarta Servlet filter that lets a request's deadline and criticality flow from the caller into
 * every outbound call the handler makes, and turns Quell's refusals into answers a caller can act on.
 *
 * <ul>
 *   <li>Reads {@code X-Deadline-Ms} and {@code X-Criticality} as its {@link ResilienceContext.Inbound}
 *       allows (by default deadlines are capped at 5 minutes and {@code CRITICAL_PLUS} from outside is
 *       lowered to {@code CRITICAL}), and makes that context current while the rest of the chain runs:
 *       a policy used inside the handler gives up when the caller does.
 *   <li>Reads the caller's {@link RetryMarker} ({@code X-Quell-Attempt}) into the request attribute
 *       {@value RetryMarker#ATTRIBUTE}.
 *   <li>When a {@link dev.quell.CallRejectedException} (budget, breaker, limiter) escapes the handler —
 *       directly or as the cause of another exception — answers {@code 503} with {@code Retry-After}
 *       (the refusal's hint rounded up to whole seconds, else 1); a {@link dev.quell.DeadlineExceededException}
 *       or {@link dev.quell.AttemptTimeoutException} becomes {@code 504}. Both with an RFC 9457
 *       {@code application/problem+json} body. A response already committed cannot be changed: then the
 *       exception goes on up unchanged, as does every other exception.
 *   <li>While {@link Draining#isDraining()}, answers new requests {@code 503} with {@code Connection: close}
 *       without running the chain.
 * </ul>
 *
 * <p>The context covers the thread that runs the chain. For asynchronous servlets, carry it into your
 * own executors with {@link ResilienceContext#wrap(java.util.concurrent.Executor)}; exceptions raised after
 * the dispatch returns do not pass through this filter.
 *
 * <p>Deployed from {@code web.xml}, the filter reads two optional init parameters:
 * {@value #MAX_DEADLINE_PARAM} (an ISO-8601 duration such as {@code PT10S}) and
 * {@value #TRUST_CRITICAL_PLUS_PARAM} ({@code true}/{@code false}). Thread-safe.
 */
public final class QuellServletFilter implements Filter {
  /** Init parameter: the cap on inbound deadlines, as an ISO-8601 duration ({@code PT10S}). */
  public static final String MAX_DEADLINE_PARAM = "maxDeadline";
  /** Init parameter: {@code true} to accept {@code CRITICAL_PLUS} from every caller. */
  public static final String TRUST_CRITICAL_PLUS_PARAM = "trustCriticalPlus";

  private volatile ResilienceContext.Inbound inbound;
  private volatile ResilienceContext.Inbound trustedInbound;
  private final Predicate<? super HttpServletRequest> trusted;

  /** A filter with {@link ResilienceContext.Inbound#DEFAULT}, adjustable by init parameters. */
  public QuellServletFilter() {
    this(ResilienceContext.Inbound.DEFAULT);
  }

  /** A filter that reads inbound headers as {@code inbound} allows. */
  public QuellServletFilter(ResilienceContext.Inbound inbound) {
    this(inbound, request -> false);
  }

  /**
   * A filter that reads inbound headers as {@code inbound} allows, and also accepts {@code CRITICAL_PLUS}
   * from requests {@code trustCriticalPlusFrom} accepts (your own edge, a caller with a client certificate).
   */
  public QuellServletFilter(ResilienceContext.Inbound inbound, Predicate<? super HttpServletRequest> trustCriticalPlusFrom) {
    this.inbound = Objects.requireNonNull(inbound, "inbound");
    this.trustedInbound = inbound.trustingCriticalPlus();
    this.trusted = Objects.requireNonNull(trustCriticalPlusFrom, "trustCriticalPlusFrom");
  }

  @Override
  public void init(FilterConfig config) throws ServletException {
    ResilienceContext.Inbound configured = inbound;
    String max = config.getInitParameter(MAX_DEADLINE_PARAM);
    if (max != null) {
      configured = configured.withMaxDeadline(parseDuration(max));
    }
    String trust = config.getInitParameter(TRUST_CRITICAL_PLUS_PARAM);
    if (trust != null) {
      if (!trust.trim().equalsIgnoreCase("true") && !trust.trim().equalsIgnoreCase("false")) {
        throw new ResilienceConfigurationException((
            TRUST_CRITICAL_PLUS_PARAM + " was \"" + trust + "\": must be true or false"));
      }
      if (Boolean.parseBoolean(trust.trim())) {
        configured = configured.trustingCriticalPlus();
      }
    }
    inbound = configured;
    trustedInbound = configured.trustingCriticalPlus();
  }

  private static Duration parseDuration(String value) {
    try {
      return Duration.parse(value.trim());
    } catch (DateTimeParseException e) {
      throw new ResilienceConfigurationException((
          MAX_DEADLINE_PARAM + " was \"" + value + "\": must be an ISO-8601 duration such as PT10S"));
    }
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)) {
      chain.doFilter(req, res);
      return;
    }
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    if (Draining.isDraining()) {
      answer(response, ServerAnswers.draining());
      return;
    }
    ResilienceContext context = ResilienceContext.fromHeaders(request::getHeader,
        trusted.test(request) ? trustedInbound : inbound);
    RetryMarker.parse(request.getHeader(RetryMarker.HEADER)).ifPresent(m -> request.setAttribute(RetryMarker.ATTRIBUTE, m));
    try (ResilienceContext.Scope scope = context.open()) {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException e) {
      ServerAnswers.Answer answer = ServerAnswers.forFailure(e);
      if (answer == null || response.isCommitted()) {
        throw e;
      }
      response.reset();
      answer(response, answer);
    }
  }

  private static void answer(HttpServletResponse response, ServerAnswers.Answer answer) throws IOException {
    response.setStatus(answer.status());
    response.setContentType(ServerAnswers.PROBLEM_JSON);
    String retryAfter = answer.retryAfter();
    if (retryAfter != null) {
      response.setHeader(RetryAfter.HEADER, retryAfter);
    }
    if (answer.closeConnection()) {
      response.setHeader("Connection", "close");
    }
    byte[] body = answer.body();
    response.setContentLength(body.length);
    try {
      response.getOutputStream().write(body);
    } catch (IllegalStateException writerInUse) {
      // the handler had taken the writer before it failed; the body is ASCII
      response.getWriter().write(new String(body, java.nio.charset.StandardCharsets.UTF_8));
    }
  }

  @Override
  public String toString() {
    return "QuellServletFilter[maxDeadline=" + inbound.maxDeadline() + "]";
  }
}
