package dev.quell.slf4j;

import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.TimeSource;
import dev.quell.slf4j.internal.LoggingListener;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.LoggerFactory;

/**
 * SLF4J logging for Quell policies.
 *
 * <pre>{@code
 * Resilience inventory = Resilience.DEFAULT
 *     .withName("inventory")
 *     .withListener(QuellSlf4j.listener());
 * }</pre>
 *
 * <p>Lines go to the logger {@value LoggingListener#LOGGER_NAME}. Each starts with a stable event
 * name, followed by {@code key=value} fields:
 * <ul>
 *   <li>{@code quell.attempt} (TRACE): an attempt ended, with its verdict, duration and failure;
 *   <li>{@code quell.retry} (DEBUG): a retry was funded, with the delay and what failed;
 *   <li>{@code quell.recovered} (DEBUG): a call succeeded after retrying;
 *   <li>{@code quell.gave_up} (DEBUG): a call failed for good (permanent failure, attempts exhausted,
 *       deadline); the caller gets the exception, so Quell does not log it louder;
 *   <li>{@code quell.cancelled} (DEBUG): the caller cancelled or interrupted a call;
 *   <li>{@code quell.rejected.budget}, {@code quell.rejected.breaker}, {@code quell.rejected.limiter}
 *       (WARN): Quell refused work a call wanted to do;
 *   <li>{@code quell.draining} (INFO): a call ended because the process is shutting down;
 *   <li>{@code quell.breaker.opened} (WARN, with the failure rate and calls of the window that opened
 *       it and the break), {@code quell.breaker.half_open} and {@code quell.breaker.closed} (INFO): a
 *       call's attempt moved a circuit breaker (moves made by hand are not logged);
 *   <li>{@code quell.hedge.suppressed} (INFO): a hedge was due but refused; the call went on;
 *   <li>{@code quell.hedge.won} (DEBUG), {@code quell.hedge.started} and {@code quell.hedge.discarded}
 *       (TRACE).
 * </ul>
 *
 * <p><b>Flood control.</b> A retry storm can refuse thousands of retries a second; the refusal,
 * draining and suppressed-hedge lines are limited to one per policy and reason per interval (one
 * minute by default). The first refusal is logged at once; each later line carries {@code suppressed=N}, the number of
 * refusals not logged since the one before. There is no timer: after a quiet stretch, the count
 * waits for the next refusal. The DEBUG and TRACE lines are not limited: enable them only while
 * investigating.
 *
 * <p>Nothing is formatted for a level that is off. Thread-safe.
 */
public final class QuellSlf4j {
  /** The default interval between two refusal warnings of one policy and reason. */
  public static final Duration DEFAULT_WARNING_INTERVAL = Duration.ofMinutes(1);

  private static final ResilienceListener DEFAULT = new LoggingListener(
      LoggerFactory.getLogger(LoggingListener.LOGGER_NAME), DEFAULT_WARNING_INTERVAL, TimeSource.system());

  private QuellSlf4j() {}

  /**
   * The listener that logs through SLF4J, warning about refusals at most once a minute per policy and
   * reason. Always the same instance, so policies built with it compare equal. Pass it to
   * {@link Resilience#withListener}.
   */
  public static ResilienceListener listener() {
    return DEFAULT;
  }

  /**
   * A listener that warns about refusals at most once per {@code warningInterval} per policy and
   * reason, measured on {@code time} (pass the policy's time source in tests and simulations).
   */
  public static ResilienceListener listener(Duration warningInterval, TimeSource time) {
    Objects.requireNonNull(warningInterval, "warningInterval");
    Objects.requireNonNull(time, "time");
    return new LoggingListener(LoggerFactory.getLogger(LoggingListener.LOGGER_NAME), warningInterval, time);
  }
}
