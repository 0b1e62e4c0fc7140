package dev.quell.reactor;

import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/** Moves a {@link ResilienceContext} between Reactor's {@link Context} and the thread, at subscription. */
final class CallContext {
  private CallContext() {}

  /**
   * Starts the call on the core's asynchronous driver, in the context carried in Reactor's
   * {@code downstream} context (else the thread's). Returns the core's future, or null when starting
   * failed, which the subscriber has then been told.
   */
  static <T> @Nullable CompletableFuture<Outcome<T>> start(Resilience policy, Resilience.AsyncWork<T> work,
      Context downstream, CoreSubscriber<?> subscriber) {
    ResilienceContext carried = downstream.getOrDefault(QuellReactor.CONTEXT_KEY, null);
    try (ResilienceContext.Scope ignored = carried == null ? null : carried.open()) {
      return policy.runAsync(work);
    } catch (RuntimeException | Error e) {
      subscriber.onError(Operators.onOperatorError(e, downstream));
      return null;
    }
  }

  /**
   * The Reactor context an attempt subscribes with: the subscriber's, with the attempt's own
   * {@link ResilienceContext} (published by the core while it starts the attempt) under the key.
   * Unchanged when there is nothing to say: no deadline, no label, and none carried before.
   */
  static Context forAttempt(Context downstream) {
    ResilienceContext attempt = ResilienceContext.current();
    if (attempt == ResilienceContext.EMPTY && !downstream.hasKey(QuellReactor.CONTEXT_KEY)) {
      return downstream;
    }
    return downstream.put(QuellReactor.CONTEXT_KEY, attempt);
  }
}
