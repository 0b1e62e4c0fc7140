package dev.quell.kotlin

import dev.quell.Criticality
import dev.quell.ResilienceContext
import dev.quell.TimeSource
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext
import kotlin.time.Duration
import kotlin.time.toJavaDuration
import kotlinx.coroutines.ThreadContextElement
import kotlinx.coroutines.withContext

/**
 * A [ResilienceContext] (deadline and [Criticality]) carried by a coroutine, the coroutine
 * counterpart of [ResilienceContext.open]. While a coroutine that holds it runs, on whatever thread
 * its dispatcher picks, the context is [ResilienceContext.current] on that thread, so blocking code
 * called from the coroutine (a JDBC call, a Java client, a synchronous Quell call) sees the same
 * deadline and label; when the coroutine suspends, the thread's previous context comes back.
 *
 * Calls made with [executeSuspend], [runSuspend] and [resilient] read the context when they start,
 * as a synchronous call reads the thread's, and run each attempt with this element set to the
 * attempt's own context: the deadline at the attempt's end, the call's criticality.
 *
 * Usually made with [withResilienceContext], [withDeadline] or [withCriticality]; read the one in
 * force with [currentResilienceContext]. Immutable; thread-safe.
 */
public class QuellContext(
  /** The context coroutines holding this element run in. */
  public val context: ResilienceContext,
) : AbstractCoroutineContextElement(Key), ThreadContextElement<ResilienceContext.Scope> {

  /** The key of [QuellContext] in a [CoroutineContext]. */
  public companion object Key : CoroutineContext.Key<QuellContext>

  override fun updateThreadContext(context: CoroutineContext): ResilienceContext.Scope = this.context.open()

  override fun restoreThreadContext(context: CoroutineContext, oldState: ResilienceContext.Scope) {
    oldState.close() // the same thread opened it: restore and update come in pairs, innermost first
  }

  override fun toString(): String = "QuellContext($context)"
}

/**
 * The [ResilienceContext] this coroutine runs in: its [QuellContext] element's, or else the calling
 * thread's ([ResilienceContext.EMPTY] when there is none).
 */
public suspend fun currentResilienceContext(): ResilienceContext =
  coroutineContext[QuellContext]?.context ?: ResilienceContext.current()

/** Runs [block] in [context]: Quell calls inside it, and blocking code they or it call, see it. */
public suspend fun <T> withResilienceContext(context: ResilienceContext, block: suspend () -> T): T =
  withContext(QuellContext(context)) { block() }

/**
 * Runs [block] with a deadline [timeout] from now on [time] (the real clock unless told), or the
 * one already in force if that is sooner. Unlike kotlinx's `withTimeout`, it does not cancel
 * [block]: Quell calls inside give up at the deadline, and so does any downstream that reads it
 * (headers, gRPC).
 */
public suspend fun <T> withDeadline(
  timeout: Duration,
  time: TimeSource = TimeSource.system(),
  block: suspend () -> T,
): T = withResilienceContext(currentResilienceContext().withDeadline(timeout.toJavaDuration(), time), block)

/** Runs [block] labelled [criticality]: Quell calls inside it spend and hedge at that criticality. */
public suspend fun <T> withCriticality(criticality: Criticality, block: suspend () -> T): T =
  withResilienceContext(currentResilienceContext().withCriticality(criticality), block)
