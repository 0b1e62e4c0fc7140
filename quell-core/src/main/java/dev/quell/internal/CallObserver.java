package dev.quell.internal;

import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import org.jspecify.annotations.Nullable;

/**
 * The allocation-free side of the listener SPI, for Quell's own telemetry modules. A
 * {@link ResilienceListener} that also implements this interface is called through these methods
 * instead of {@link ResilienceListener#onEvent}, with primitives in place of event objects, so that
 * a metrics binding adds nothing to the garbage a call makes.
 *
 * <p>The same rules hold as for listeners: called on the deciding thread, in order, exceptions are
 * swallowed. {@code policy} is the policy's name; {@code budget} is the live budget the call spends
 * from ({@link RetryBudget#NONE} when it has none).
 *
 * <p>The methods with a default body came later than the core's first observers: a core that does
 * not call them yet leaves them silent, and an observer that does not care need not implement them.
 */
@Internal
public interface CallObserver {

  /** An attempt is starting. */
  void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge);

  /** An attempt ended; {@code verdict} is null when the caller cancelled it. */
  void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
      @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos);

  /** A retry is due after {@code delayNanos} and the budget would fund it now (it is charged when the retry starts). */
  void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos);

  /** The call ended (exactly once per call); {@code verdict} is the last attempt's, null if none was classified. */
  void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
      @Nullable Verdict verdict, long elapsedNanos);

  /**
   * Something happened to hedging in this call: {@code type} is one of
   * {@link ResilienceEvent.Type#HEDGE_STARTED}, {@link ResilienceEvent.Type#HEDGE_WON},
   * {@link ResilienceEvent.Type#HEDGE_DISCARDED} (an attempt still running lost the race) or
   * {@link ResilienceEvent.Type#HEDGE_SUPPRESSED} (a hedge was due but a gate refused it; the call goes
   * on). {@code attempt} is the attempt concerned, or for a suppressed hedge the attempts made so far.
   */
  default void hedged(String policy, RetryBudget budget, Criticality criticality, ResilienceEvent.Type type,
      int attempt) {}

  /**
   * The policy's circuit breaker moved to {@code state} while admitting or releasing attempt
   * {@code attempt} of this call. {@code breaker} is that breaker, or null when it is not known (an
   * event passed through {@link CallObservers#dispatch} does not carry it). Moves made by hand
   * ({@code isolate()}, {@code reset()}) happen outside any call and are not reported here.
   */
  default void breakerMoved(String policy, @Nullable CircuitBreaker breaker, CircuitBreaker.State state,
      int attempt) {}

  /**
   * A call of {@code policy} ended: called once per call, right after {@link #callEnded}, with the policy
   * instance itself, so that a binding can watch what the instance holds live (its circuit breaker,
   * limiters and measured timing) from its first call on. Must be cheap and allocation-free for a
   * policy it has seen before.
   */
  default void policyCalled(Resilience policy) {}
}
