package dev.quell.http.internal;

import dev.quell.Attempt;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.internal.Internal;
import java.time.Duration;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One outbound HTTP call of any client: which policy it runs under (the host's, or its
 * {@link Resilience#once()} when the request may not be repeated), the headers each attempt carries,
 * and the responses it received, so that each one the caller will never see is closed. Each client
 * keeps only what is its own: how to send a request and how to copy it with other headers.
 *
 * <p>Use: {@code OutboundCall.of(hostPolicy, repeatable, request's X-Deadline-Ms, closer)}; run
 * {@link #policy()}; inside each attempt call {@link #attemptStarting}, copy the request dropping the
 * headers {@link #replaces} names and adding those {@link #writeHeaders} writes, send it, and pass the
 * response to {@link #received}; at the end {@link #settle} the outcome (or {@link #abandon} the call
 * when no outcome will be read).
 *
 * <p>Thread-safe: responses may arrive on the client's threads while the call moves on.
 *
 * @param <R> the client's response type
 */
@Internal
public final class OutboundCall<R> {
  private final Resilience policy;
  private final @Nullable Duration callerDeadline;
  private final Superseded<R> responses;

  private OutboundCall(Resilience policy, @Nullable Duration callerDeadline, Consumer<? super R> closer) {
    this.policy = policy;
    this.callerDeadline = callerDeadline;
    this.responses = new Superseded<>(closer);
  }

  /**
   * A call under {@code hostPolicy} when {@code repeatable} and the policy may retry, otherwise under its
   * {@link Resilience#once()} (the same breaker, limiters, budget and histogram, one attempt, no hedge).
   *
   * @param deadlineHeader the request's own {@code X-Deadline-Ms} value, or null: a tighter one is kept
   * @param closer releases a response nobody will read; must not throw
   */
  public static <R> OutboundCall<R> of(Resilience hostPolicy, boolean repeatable, @Nullable String deadlineHeader,
      Consumer<? super R> closer) {
    Resilience policy = repeatable && hostPolicy.attempts() > 1 ? hostPolicy : hostPolicy.once();
    return new OutboundCall<>(policy, ResilienceContext.parseDeadline(deadlineHeader), closer);
  }

  /** The policy the call runs under. */
  public Resilience policy() {
    return policy;
  }

  /** True when the call may make more than one attempt. */
  public boolean retries() {
    return policy.attempts() > 1;
  }

  /** An attempt is starting: on a retry (not a hedge), every response received so far is closed. */
  public void attemptStarting(Attempt attempt) {
    if (attempt.isRetry() && !attempt.isHedge()) {
      responses.supersede();
    }
  }

  /** True when the request's own header {@code name} is replaced by the attempt's, in {@code context}. */
  public static boolean replaces(String name, ResilienceContext context) {
    return OutboundHeaders.replaces(name, context);
  }

  /**
   * Writes {@code attempt}'s headers through {@code set} (which replaces): its {@code X-Deadline-Ms},
   * {@code X-Criticality} and the nested-retry marker. {@code context} is the one current inside the attempt.
   */
  public void writeHeaders(ResilienceContext context, Attempt attempt, BiConsumer<String, String> set) {
    OutboundHeaders.write(context, callerDeadline, attempt.number(), policy.attempts(), set);
  }

  /** An attempt produced {@code response}; after the call has ended it is closed at once, unless it is the one returned. */
  public void received(R response) {
    responses.received(response);
  }

  /** The call ended: closes every response but the one returned, and returns that one (or null). */
  public @Nullable R settle(Outcome<R> outcome) {
    R response = outcome.hasValue() ? outcome.value() : null;
    responses.end(response);
    return response;
  }

  /** The call ended without a response anyone will read: closes every one received, now and later. */
  public void abandon() {
    responses.end(null);
  }
}
