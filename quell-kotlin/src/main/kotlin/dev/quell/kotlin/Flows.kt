package dev.quell.kotlin

import dev.quell.Attempt
import dev.quell.Resilience
import java.util.concurrent.CompletionStage
import java.util.concurrent.ConcurrentLinkedQueue
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.channels.ProducerScope
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.flow.channelFlow
import kotlinx.coroutines.future.await
import kotlinx.coroutines.channels.Channel

/**
 * This flow under [policy], retried only before its first element.
 *
 * Each attempt collects this flow afresh, as a child coroutine of the collector, until it emits its
 * first element or completes. That first element (or, for a flow that completes empty, `null`) is
 * the attempt's answer to the core, which classifies it, retries, waits, times attempts out, hedges
 * and refuses exactly as for any asynchronous call. Once the core accepts an attempt, the call is
 * over and the rest of that attempt's elements pass through as they come: a failure after the first
 * element reaches the collector unchanged and is never retried (as a gRPC server stream or a
 * Reactor `Flux` under Quell behaves), and the deadline and attempt timeout no longer apply.
 * Attempts the core gave up on are cancelled, and nothing they emitted is passed on.
 *
 * Cancelling the collector is the caller's cancellation: the call ends `CANCELLED`, nothing is
 * charged. A call that fails before the first element throws what [executeSuspend] would.
 */
public fun <T> Flow<T>.resilient(policy: Resilience): Flow<T> {
  val upstream = this
  return channelFlow {
    val producer = this
    val ended = coroutineScope {
      val work = FlowWork(this, producer, upstream, oneAtATime = policy.hedge().isEmpty)
      work.startInline()
      val call = try {
        policy.executeAsync(work)
      } finally {
        work.endInline()
      }
      val first = try {
        @Suppress("UNCHECKED_CAST") // the first element the core accepted
        (call.await() as T?)
      } catch (t: Throwable) {
        work.decide(null, won = false)
        throw t
      }
      work.decide(first, won = true)
      work // returned once the winner has streamed to its end: coroutineScope waits for its children
    }
    ended.failureAfterFirst?.let { throw it }
  }.buffer(Channel.RENDEZVOUS)
}

/** The attempts of one collection of a resilient flow. */
private class FlowWork<T>(
  scope: CoroutineScope,
  private val producer: ProducerScope<T>,
  private val upstream: Flow<T>,
  /** No hedging: one attempt in flight at a time, so a new attempt means the earlier answers were turned down. */
  private val oneAtATime: Boolean,
) : AttemptLauncher<T?>(scope) {

  /** Attempts that produced a first element and wait to hear whether they won. */
  private val waiting = ConcurrentLinkedQueue<Waiting<T>>()

  /** What the winning attempt's flow threw after its first element: passed to the collector. */
  @Volatile var failureAfterFirst: Throwable? = null

  private class Waiting<T>(val first: T) {
    val won = CompletableDeferred<Boolean>()
  }

  override fun start(attempt: Attempt): CompletionStage<Any> {
    if (oneAtATime) {
      // the core starts the next attempt only after it judged the last one: its first element was
      // turned down, so its stream stops now rather than at the end of the call. With hedging an
      // answer may still be on its way to the core while another attempt starts: those wait.
      decide(null, won = false)
    }
    return super.start(attempt)
  }

  /**
   * The call ended ([won]: with the value [first]) or moved on: the attempt whose first element the
   * core returned streams on, every other one waiting stops.
   */
  fun decide(first: T?, won: Boolean) {
    var winnerFound = !won
    while (true) {
      val w = waiting.poll() ?: break
      if (!winnerFound && w.first === first) {
        winnerFound = true
        w.won.complete(true)
      } else {
        w.won.complete(false)
      }
    }
  }

  override suspend fun attempt(attempt: Attempt, result: AttemptFuture<T?>) {
    var waiter: Waiting<T>? = null
    try {
      upstream.collect { value ->
        if (waiter == null) {
          val mine = Waiting(value)
          waiter = mine
          waiting.add(mine)
          result.complete(value) // the core judges the first element
          if (!mine.won.await()) {
            throw AttemptLost()
          }
        }
        producer.send(value)
      }
      if (waiter == null) {
        result.complete(null) // completed without an element: an answer like any other
      }
    } catch (lost: AttemptLost) {
      // the core chose another attempt or ended the call: this one stops quietly
    } catch (t: Throwable) {
      val w = waiter
      if (w == null || t is CancellationException) {
        throw t // before the first element the core judges it; a cancellation stays one
      }
      failureAfterFirst = t // after the first element: passes through, never retried
    }
  }

  /**
   * Thrown from the collector of an attempt that lost, to stop its upstream. A cancellation, so
   * that upstream operators let it through.
   */
  private class AttemptLost : CancellationException("attempt not chosen")
}
