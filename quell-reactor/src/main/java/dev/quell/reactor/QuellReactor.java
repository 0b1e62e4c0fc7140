package dev.quell.reactor;

import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Runs a {@link Mono} or {@link Flux} under a Quell {@link Resilience} policy, applied with
 * {@code transformDeferred}:
 *
 * <pre>{@code
 * static final Resilience INVENTORY = Resilience.DEFAULT.withName("inventory");
 *
 * Mono<Stock> stock = webClient.get().uri("/stock/{sku}", sku).retrieve().bodyToMono(Stock.class)
 *     .transformDeferred(QuellReactor.of(INVENTORY));
 * }</pre>
 *
 * <p>Each attempt is a fresh subscription to the upstream publisher; the policy's core decides
 * everything else, exactly as for {@link Resilience#executeAsync}: retries under the retry budget,
 * after the backoff or the server's Retry-After, attempt timeouts, the deadline, the gates (breaker,
 * limiters) and hedging. No thread waits: waits are timers on the policy's {@link dev.quell.TimeSource}
 * (give it {@link ReactorTime#of} to use a Reactor {@code Scheduler}).
 *
 * <ul>
 *   <li>A {@code Mono} is one attempt per subscription; with a {@link dev.quell.Hedge} a second
 *       subscription runs beside a slow one, the first acceptable answer wins, the others are
 *       cancelled, and a value that still arrives from a loser goes to the policy's discard hook, once.
 *   <li>A {@code Flux} is retried (and hedged) only until its first element. From then on the stream
 *       passes through: a later failure reaches the subscriber unchanged and is not retried, and the
 *       deadline and attempt timeout no longer apply (they bound the wait for the first element).
 *   <li>Cancelling the subscription cancels the call: the attempt in flight is cancelled, and nothing
 *       is charged to the budget or counted by the breaker.
 *   <li>The call's deadline and criticality come from the subscriber's {@link Context} under
 *       {@link #CONTEXT_KEY} (see {@link #withContext}), else from the thread's
 *       {@link ResilienceContext}; inside each attempt the upstream sees the attempt's own context
 *       (its end, the call's criticality) under the same key, and on the subscribing thread as
 *       {@link ResilienceContext#current()}.
 * </ul>
 *
 * <p>The operator is an immutable value, thread-safe, and may be shared; build the policy once per
 * dependency (its budget must see all the calls).
 *
 * @param <T> the element type
 */
public final class QuellReactor<T> implements UnaryOperator<Publisher<T>> {

  /**
   * The key under which a {@link ResilienceContext} travels in Reactor's {@link Context}: the class
   * {@code ResilienceContext} itself.
   */
  public static final Class<ResilienceContext> CONTEXT_KEY = ResilienceContext.class;

  private final Resilience policy;

  private QuellReactor(Resilience policy) {
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  /** The operator for {@code policy}, for {@code mono.transformDeferred(...)} or {@code flux.transformDeferred(...)}. */
  public static <T> QuellReactor<T> of(Resilience policy) {
    return new QuellReactor<>(policy);
  }

  /** The policy this operator runs publishers under. */
  public Resilience policy() {
    return policy;
  }

  /**
   * Wraps {@code publisher}: a {@link Mono} stays a {@code Mono}; any other publisher becomes a
   * {@link Flux} with the first-element rule. Nothing starts until the result is subscribed to.
   */
  @Override
  public Publisher<T> apply(Publisher<T> publisher) {
    Objects.requireNonNull(publisher, "publisher");
    if (publisher instanceof Mono) {
      return new QuellMono<>((Mono<T>) publisher, policy);
    }
    return new QuellFlux<>(Flux.from(publisher), policy);
  }

  /** As {@link #apply}, typed for a {@code Mono}. */
  public Mono<T> apply(Mono<T> mono) {
    return new QuellMono<>(Objects.requireNonNull(mono, "mono"), policy);
  }

  /** As {@link #apply}, typed for a {@code Flux}. */
  public Flux<T> apply(Flux<T> flux) {
    return new QuellFlux<>(Objects.requireNonNull(flux, "flux"), policy);
  }

  // ---------------------------------------------------------------- context

  /**
   * A function for {@code contextWrite} that puts {@code context} in Reactor's {@link Context} under
   * {@link #CONTEXT_KEY}, so the Quell operators above it run with its deadline and criticality:
   *
   * <pre>{@code
   * mono.transformDeferred(QuellReactor.of(POLICY))
   *     .contextWrite(QuellReactor.withContext(ResilienceContext.EMPTY.withDeadline(Duration.ofMillis(800))));
   * }</pre>
   */
  public static Function<Context, Context> withContext(ResilienceContext context) {
    Objects.requireNonNull(context, "context");
    return c -> c.put(CONTEXT_KEY, context);
  }

  /** The {@link ResilienceContext} in {@code view}, or {@link ResilienceContext#EMPTY} when there is none. */
  public static ResilienceContext context(ContextView view) {
    ResilienceContext c = view.getOrDefault(CONTEXT_KEY, ResilienceContext.EMPTY);
    return c != null ? c : ResilienceContext.EMPTY;
  }

  /**
   * The {@link ResilienceContext} of the subscription: inside an attempt, the attempt's (its end and
   * the call's criticality); {@link ResilienceContext#EMPTY} outside any.
   */
  public static Mono<ResilienceContext> currentContext() {
    return Mono.deferContextual(view -> Mono.just(context(view)));
  }

  @Override
  public String toString() {
    return "QuellReactor[" + policy.name() + "]";
  }
}
