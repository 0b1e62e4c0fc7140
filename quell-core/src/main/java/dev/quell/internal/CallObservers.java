package dev.quell.internal;

import dev.quell.CircuitBreaker;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import java.time.Duration;

/** Helpers for listeners that implement {@link CallObserver}. */
@Internal
public final class CallObservers {
  private CallObservers() {}

  /**
   * Passes {@code event} to the matching {@link CallObserver} method: what such a listener's
   * {@code onEvent} does for callers that only speak {@code ResilienceListener}. Hedge events go to
   * {@link CallObserver#hedged}, breaker transitions to {@link CallObserver#breakerMoved} (without the
   * breaker, which the event does not carry). Other non-terminal events, and terminal events without a
   * stop reason, are ignored. The policy instance is not in the event either, so
   * {@link CallObserver#policyCalled} is never called from here.
   */
  public static void dispatch(ResilienceEvent event, CallObserver observer) {
    RetryBudget budget = event.budget().orElse(RetryBudget.NONE);
    switch (event.type()) {
      case ATTEMPT_STARTED:
        observer.attemptStarted(event.policy(), budget, event.criticality(), event.attempt(), event.isHedge());
        break;
      case ATTEMPT_ENDED:
        observer.attemptEnded(event.policy(), budget, event.criticality(), event.attempt(), event.isHedge(),
            event.verdict().orElse(null), event.failure().orElse(null),
            event.attemptDuration().map(Duration::toNanos).orElse(0L));
        break;
      case RETRYING:
        observer.retrying(event.policy(), budget, event.criticality(), event.attempt(),
            event.delay().map(Duration::toNanos).orElse(0L));
        break;
      case HEDGE_STARTED:
      case HEDGE_WON:
      case HEDGE_DISCARDED:
      case HEDGE_SUPPRESSED:
        observer.hedged(event.policy(), budget, event.criticality(), event.type(), event.attempt());
        break;
      case BREAKER_TRANSITION:
        CircuitBreaker.State state = event.breakerState().orElse(null);
        if (state != null) {
          observer.breakerMoved(event.policy(), null, state, event.attempt());
        }
        break;
      default:
        StopReason reason = event.stopReason().orElse(null);
        if (event.isTerminal() && reason != null) {
          observer.callEnded(event.policy(), budget, event.criticality(), reason, event.attempt(),
              event.verdict().orElse(null), event.elapsed().toNanos());
        }
    }
  }
}
