package dev.quell.reactor;

import dev.quell.ResilienceContext;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;

/** Moves a {@link ResilienceContext} between Reactor's {@link Context} and the thread, at subscription. */
final class CallContext {
  private CallContext() {}

  /** The context a call subscribed with {@code downstream} starts in: Reactor's, else none (the thread's stays). */
  static ResilienceContext.@Nullable Scope open(Context downstream) {
    ResilienceContext carried = downstream.getOrDefault(QuellReactor.CONTEXT_KEY, null);
    return carried == null ? null : carried.open();
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
