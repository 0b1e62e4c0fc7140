package dev.quell.kotlin

import dev.quell.Attempt
import dev.quell.Outcome
import dev.quell.Resilience
import dev.quell.ResilienceContext
import dev.quell.StopReason
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlin.coroutines.resumeWithException

/**
 * Runs the suspend function [block] under this policy and returns its value, or throws.
 *
 * The call is Quell's asynchronous driver (`executeAsync`): the core decides every retry, wait,
 * timeout, hedge and refusal, exactly as for a `CompletableFuture`. Each attempt runs [block] as a
 * child coroutine of the caller (its dispatcher, its context) with a [QuellContext] holding the
 * attempt's deadline and criticality. The first attempt starts on the caller's thread without a
 * dispatch; retries and hedges are dispatched on the caller's dispatcher. Waits between attempts
 * suspend; no thread is blocked.
 *
 * Cancellation is the caller's: cancelling the calling coroutine cancels the attempt in flight and
 * ends the call `CANCELLED`, with nothing charged to the budget or the breaker, and the
 * [CancellationException] is rethrown as is; a `CancellationException` thrown by [block] is never
 * retried or taken for a failure of the dependency. An attempt the core gives up on (its timeout, a
 * hedge that lost) is cancelled; the call returns only once every attempt coroutine it started has
 * ended (structured concurrency), so an attempt that ignores cancellation holds the caller up.
 *
 * Throws what `execute` throws: the last attempt's exception unchanged when the failure was
 * permanent or the attempts ran out, `CallRejectedException` when a gate or the budget refused,
 * `DeadlineExceededException` at the deadline.
 */
public suspend fun <T> Resilience.executeSuspend(block: suspend (Attempt) -> T): T = coroutineScope {
  val work = SuspendWork(this, block)
  work.startInline()
  val result = try {
    executeAsync(work)
  } finally {
    work.endInline()
  }
  @Suppress("UNCHECKED_CAST") // the core hands back the value the block returned
  (result.awaitOrDiscard(this@executeSuspend) { it } as T)
}

/**
 * As [executeSuspend], reporting how the call ended as an [Outcome] instead of throwing for the
 * work's failures and Quell's refusals. A call that ends `CANCELLED` has no outcome: its
 * [CancellationException] is rethrown, never swallowed.
 */
public suspend fun <T : Any> Resilience.runSuspend(block: suspend (Attempt) -> T?): Outcome<T> = coroutineScope {
  val work = SuspendWork(this, block)
  work.startInline()
  val result = try {
    runAsync(work)
  } finally {
    work.endInline()
  }
  @Suppress("UNCHECKED_CAST") // the core's outcome carries the value the block returned
  val outcome = result.awaitOrDiscard(this@runSuspend) { it.value() } as Outcome<T>
  if (outcome.stopReason() == StopReason.CANCELLED) {
    val failure = outcome.failure().orElse(null)
    throw failure as? CancellationException ?: CancellationException("call cancelled", failure)
  }
  outcome
}

/**
 * Waits for the call's future as `await()` does (cancelling the waiting coroutine cancels the call),
 * except for the value that completes the future in the same instant as the waiting coroutine is
 * cancelled: the caller gets its [CancellationException], and the value, which nobody will see, goes
 * to the policy's discard hook ([Resilience.discard]) instead of being dropped.
 */
internal suspend fun <V> CompletableFuture<V>.awaitOrDiscard(policy: Resilience, valueOf: (V) -> Any?): V {
  if (isDone && !isCompletedExceptionally && !isCancelled) {
    @Suppress("UNCHECKED_CAST") // completed normally: join returns at once
    return join() as V
  }
  return suspendCancellableCoroutine { waiter ->
    whenComplete { value, failure ->
      if (failure != null) {
        waiter.resumeWithException((failure as? CompletionException)?.cause ?: failure)
      } else {
        waiter.resume(value) { _, unseen, _ -> policy.discard(valueOf(unseen)) }
      }
    }
    waiter.invokeOnCancellation { cancel(false) }
  }
}

/**
 * One call's attempts, as the core's [Resilience.AsyncWork]: each [start] launches an attempt
 * coroutine in [scope] and hands the core a future that a cancel from the core turns into a
 * cancellation of that coroutine.
 */
internal abstract class AttemptLauncher<T>(private val scope: CoroutineScope) : Resilience.AsyncWork<Any> {
  /** The caller's thread while it starts the call: attempts started there and then need no dispatch. */
  @Volatile private var inline: Thread? = null

  fun startInline() {
    inline = Thread.currentThread()
  }

  fun endInline() {
    inline = null
  }

  /** Runs one attempt in its coroutine; completes [result] (at the latest when it returns). */
  abstract suspend fun attempt(attempt: Attempt, result: AttemptFuture<T>)

  override fun start(attempt: Attempt): CompletionStage<Any> {
    val result = AttemptFuture<T>()
    // the core has the attempt's own context current here (deadline at its end, the call's label)
    val context = QuellContext(ResilienceContext.current())
    val undispatched = inline === Thread.currentThread()
    val job = scope.launch(context, if (undispatched) CoroutineStart.UNDISPATCHED else CoroutineStart.DEFAULT) {
      try {
        attempt(attempt, result)
      } catch (t: Throwable) {
        result.completeExceptionally(t) // the core judges it, a CancellationException included
      }
    }
    result.attach(job, needsWatch = !undispatched)
    @Suppress("UNCHECKED_CAST") // the core sees values as objects; a null value is the core's null
    return result as CompletionStage<Any>
  }
}

private class SuspendWork<T>(scope: CoroutineScope, private val block: suspend (Attempt) -> T) :
  AttemptLauncher<T>(scope) {
  override suspend fun attempt(attempt: Attempt, result: AttemptFuture<T>) {
    result.complete(block(attempt))
  }
}

/**
 * An attempt's future as the core sees it. The core's `cancel` cancels the attempt's coroutine and
 * leaves the future to complete when the coroutine has ended, so a value that still arrives reaches
 * the core, which hands it to the policy's discard hook.
 */
internal class AttemptFuture<T> : CompletableFuture<T>() {
  @Volatile private var job: Job? = null
  @Volatile private var cancelRequested = false

  fun attach(job: Job, needsWatch: Boolean) {
    this.job = job
    if (needsWatch) {
      // a coroutine cancelled before it was dispatched never runs its body: end the attempt anyway
      job.invokeOnCompletion { cause -> if (!isDone) completeExceptionally(cause ?: CancellationException("attempt not run")) }
    }
    if (cancelRequested) {
      job.cancel()
    }
  }

  override fun cancel(mayInterruptIfRunning: Boolean): Boolean {
    if (isDone) {
      return false
    }
    cancelRequested = true
    job?.cancel()
    return true
  }
}
