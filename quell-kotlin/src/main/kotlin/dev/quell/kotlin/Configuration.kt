package dev.quell.kotlin

import dev.quell.Backoff
import dev.quell.CircuitBreaker
import dev.quell.Classifier
import dev.quell.Hedge
import dev.quell.Limiter
import dev.quell.Resilience
import dev.quell.ResilienceListener
import dev.quell.RetryBudget
import dev.quell.TimeSource
import kotlin.time.Duration
import kotlin.time.toJavaDuration

/** Marks Quell's configuration blocks, so an inner block cannot reach an outer one's settings by mistake. */
@DslMarker
public annotation class QuellDsl

/**
 * A policy built from [base] (by default [Resilience.DEFAULT]) with the settings [configure] makes:
 *
 * ```
 * val policy = resilience {
 *   name = "inventory"
 *   attempts = 4
 *   deadline = 2.seconds
 *   attemptTimeout = 500.milliseconds
 *   hedge(after = 50.milliseconds)
 * }
 * ```
 *
 * The same rules as `Resilience.with`: the result is a new immutable policy with its own automatic
 * budget, and invalid settings throw `ResilienceConfigurationException` listing every problem.
 */
public fun resilience(base: Resilience = Resilience.DEFAULT, configure: ResilienceSpec.() -> Unit): Resilience =
  base.with { settings -> ResilienceSpec(settings).configure() }

/**
 * The settings of [resilience], over Quell's `Resilience.Settings`, with [Duration] from kotlin.time.
 * The properties are write-only in spirit: reading one gives what this block set, or null.
 */
@QuellDsl
public class ResilienceSpec internal constructor(private val settings: Resilience.Settings) {

  /** The policy's name, in events, metrics and messages. */
  public var name: String? = null
    set(value) { field = value; if (value != null) settings.name(value) }

  /** Attempts in total, the first included. */
  public var attempts: Int? = null
    set(value) { field = value; if (value != null) settings.attempts(value) }

  /** The deadline of a whole call; [Duration.INFINITE] means none. */
  public var deadline: Duration? = null
    set(value) {
      field = value
      when {
        value == null -> {}
        value.isInfinite() -> settings.noDeadline()
        else -> settings.deadline(value.toJavaDuration())
      }
    }

  /** How long one attempt may run; [Duration.INFINITE] means no limit but the deadline. */
  public var attemptTimeout: Duration? = null
    set(value) {
      field = value
      when {
        value == null -> {}
        value.isInfinite() -> settings.noAttemptTimeout()
        else -> settings.attemptTimeout(value.toJavaDuration())
      }
    }

  /** The waits between attempts. */
  public var backoff: Backoff? = null
    set(value) { field = value; if (value != null) settings.backoff(value) }

  /** What counts as success, a transient failure, a throttled answer or a permanent failure. */
  public var classifier: Classifier? = null
    set(value) { field = value; if (value != null) settings.classifier(value) }

  /** The retry budget; [RetryBudget.NONE] retries without one. */
  public var budget: RetryBudget? = null
    set(value) { field = value; if (value != null) settings.budget(value) }

  /** Where time, timers and jitter come from (a virtual clock in tests). */
  public var timeSource: TimeSource? = null
    set(value) { field = value; if (value != null) settings.timeSource(value) }

  /** Use the ambient deadline ([QuellContext], `ResilienceContext`) when it is sooner (on by default). */
  public var useAmbientDeadline: Boolean? = null
    set(value) { field = value; if (value != null) settings.useAmbientDeadline(value) }

  /** Spend and hedge at the ambient criticality (off by default; needs a bounded budget). */
  public var useAmbientCriticality: Boolean? = null
    set(value) { field = value; if (value != null) settings.useAmbientCriticality(value) }

  /** Hedge: after [after] without an answer, another attempt in parallel, up to [maxHedges] of them. */
  public fun hedge(after: Duration, maxHedges: Int = 1) {
    settings.hedge(Hedge.after(after.toJavaDuration()).withMaxHedges(maxHedges))
  }

  /** Hedge with [hedge] as configured in Java terms (`Hedge.maxExtraLoad(0.05)`, say). */
  public fun hedge(hedge: Hedge) {
    settings.hedge(hedge)
  }

  /** No hedging. */
  public fun noHedge() {
    settings.noHedge()
  }

  /** A circuit breaker of its own for this policy, from [config]. */
  public fun breaker(config: CircuitBreaker.Config) {
    settings.breaker(config)
  }

  /** A circuit breaker shared with other policies. */
  public fun breaker(breaker: CircuitBreaker) {
    settings.breaker(breaker)
  }

  /** Adds a rate or concurrency limit, asked before every attempt in the fixed order. */
  public fun limiter(limiter: Limiter) {
    settings.limiter(limiter)
  }

  /** Adds a listener for the call's events. */
  public fun listener(listener: ResilienceListener) {
    settings.listener(listener)
  }
}

/** As `withDeadline(java.time.Duration)`, with a kotlin.time [Duration]; [Duration.INFINITE] means none. */
public fun Resilience.withDeadline(deadline: Duration): Resilience =
  if (deadline.isInfinite()) withoutDeadline() else withDeadline(deadline.toJavaDuration())

/** As `withAttemptTimeout(java.time.Duration)`, with a kotlin.time [Duration]; [Duration.INFINITE] means none. */
public fun Resilience.withAttemptTimeout(timeout: Duration): Resilience =
  if (timeout.isInfinite()) withoutAttemptTimeout() else withAttemptTimeout(timeout.toJavaDuration())

/** As `withHedge(Hedge.after(delay).withMaxHedges(maxHedges))`, with a kotlin.time [Duration]. */
public fun Resilience.withHedge(after: Duration, maxHedges: Int = 1): Resilience =
  withHedge(Hedge.after(after.toJavaDuration()).withMaxHedges(maxHedges))

/**
 * Exponential backoff with full jitter (Quell's default shape), with kotlin.time durations and
 * Quell's defaults: 100 ms for transient failures, 1 s for throttled answers, doubling, at most 30 s.
 */
public fun exponentialBackoff(
  transientBase: Duration = Duration.parse("100ms"),
  throttledBase: Duration = Duration.parse("1s"),
  factor: Double = 2.0,
  max: Duration = Duration.parse("30s"),
): Backoff.Exponential =
  Backoff.exponential(transientBase.toJavaDuration(), throttledBase.toJavaDuration(), factor, max.toJavaDuration())

/** The same wait before every retry, as `Backoff.constant`. */
public fun constantBackoff(delay: Duration): Backoff = Backoff.constant(delay.toJavaDuration())
