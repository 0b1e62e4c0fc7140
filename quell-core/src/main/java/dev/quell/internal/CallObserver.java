package dev.quell.internal;

import dev.quell.Criticality;
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
 */
@Internal
public interface CallObserver {

  /** An attempt is starting. */
  void attemptStarted(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge);

  /** An attempt ended; {@code verdict} is null when the caller cancelled it. */
  void attemptEnded(String policy, RetryBudget budget, Criticality criticality, int attempt, boolean hedge,
      @Nullable Verdict verdict, @Nullable Throwable failure, long durationNanos);

  /** A retry was funded and starts after {@code delayNanos}. */
  void retrying(String policy, RetryBudget budget, Criticality criticality, int attempt, long delayNanos);

  /** The call ended (exactly once per call); {@code verdict} is the last attempt's, null if none was classified. */
  void callEnded(String policy, RetryBudget budget, Criticality criticality, StopReason reason, int attempts,
      @Nullable Verdict verdict, long elapsedNanos);
}
