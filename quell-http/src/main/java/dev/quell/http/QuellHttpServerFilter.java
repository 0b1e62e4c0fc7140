package dev.quell.http;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import dev.quell.Draining;
import dev.quell.ResilienceContext;
import dev.quell.http.internal.ServerAnswers;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The JDK {@code com.sun.net.httpserver} twin of {@link QuellServletFilter}: add it to a context's
 * filters ({@code server.createContext(path, handler).getFilters().add(new QuellHttpServerFilter())}).
 *
 * <ul>
 *   <li>Reads {@code X-Deadline-Ms} and {@code X-Criticality} as its {@link ResilienceContext.Inbound}
 *       allows and makes that context current while the handler runs, so outbound calls inherit the
 *       caller's deadline.
 *   <li>Maps a {@link dev.quell.CallRejectedException} escaping the handler (directly or as a cause) to
 *       {@code 503} with {@code Retry-After}, and a {@link dev.quell.DeadlineExceededException} or
 *       {@link dev.quell.AttemptTimeoutException} to {@code 504}, with an RFC 9457
 *       {@code application/problem+json} body — unless the handler had already sent its response
 *       headers, in which case the exception goes on up unchanged.
 *   <li>While {@link Draining#isDraining()}, answers new requests {@code 503} with {@code Connection: close}.
 * </ul>
 *
 * <p>The caller's {@link RetryMarker} is not copied into an attribute, as the servlet filter does:
 * the JDK's {@code HttpExchange} keeps its attributes on the shared {@code HttpContext}, so concurrent
 * requests would see each other's. Read it from the request instead:
 * {@code RetryMarker.parse(exchange.getRequestHeaders().getFirst(RetryMarker.HEADER))}.
 *
 * <p>Thread-safe; one instance may serve every context of a server.
 */
public final class QuellHttpServerFilter extends Filter {
  private final ResilienceContext.Inbound inbound;
  private final ResilienceContext.Inbound trustedInbound;
  private final Predicate<? super HttpExchange> trusted;

  /** A filter with {@link ResilienceContext.Inbound#DEFAULT}. */
  public QuellHttpServerFilter() {
    this(ResilienceContext.Inbound.DEFAULT);
  }

  /** A filter that reads inbound headers as {@code inbound} allows. */
  public QuellHttpServerFilter(ResilienceContext.Inbound inbound) {
    this(inbound, exchange -> false);
  }

  /**
   * A filter that reads inbound headers as {@code inbound} allows, and also accepts {@code CRITICAL_PLUS}
   * from exchanges {@code trustCriticalPlusFrom} accepts.
   */
  public QuellHttpServerFilter(ResilienceContext.Inbound inbound, Predicate<? super HttpExchange> trustCriticalPlusFrom) {
    this.inbound = Objects.requireNonNull(inbound, "inbound");
    this.trustedInbound = inbound.trustingCriticalPlus();
    this.trusted = Objects.requireNonNull(trustCriticalPlusFrom, "trustCriticalPlusFrom");
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    if (Draining.isDraining()) {
      answer(exchange, ServerAnswers.draining());
      return;
    }
    ResilienceContext context = ResilienceContext.fromHeaders(exchange.getRequestHeaders()::getFirst,
        trusted.test(exchange) ? trustedInbound : inbound);
    try (ResilienceContext.Scope scope = context.open()) {
      chain.doFilter(exchange);
    } catch (IOException | RuntimeException e) {
      ServerAnswers.Answer answer = ServerAnswers.forFailure(e);
      if (answer == null || exchange.getResponseCode() != -1) {
        throw e;
      }
      answer(exchange, answer);
    }
  }

  private static void answer(HttpExchange exchange, ServerAnswers.Answer answer) throws IOException {
    exchange.getRequestBody().close(); // the server drains a little of what is left, or drops the connection
    exchange.getResponseHeaders().set("Content-Type", ServerAnswers.PROBLEM_JSON);
    String retryAfter = answer.retryAfter();
    if (retryAfter != null) {
      exchange.getResponseHeaders().set(RetryAfter.HEADER, retryAfter);
    }
    if (answer.closeConnection()) {
      exchange.getResponseHeaders().set("Connection", "close");
    }
    byte[] body = answer.body();
    exchange.sendResponseHeaders(answer.status(), body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  @Override
  public String description() {
    return "Quell: inbound deadline and criticality, refusals as 503/504 problem+json, 503 while draining";
  }
}
