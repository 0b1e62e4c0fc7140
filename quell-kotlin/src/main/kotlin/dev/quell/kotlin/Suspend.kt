package dev.quell.kotlin

import dev.quell.Attempt
import dev.quell.Outcome
import dev.quell.Resilience
import dev.quell.ResilienceContext
import dev.quell.StopReason
import dev.quell.internal.DirectStage
import dev.quell.internal.InPlaceWork
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import java.util.function.BiFunction
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.cancellation.CancellationException
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.launch
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext

/**
 * Runs the suspend function [block] under this policy and returns its value, or throws.
 *
 * The call is Quell's asynchronous driver (`executeAsync`): the core decides every retry, wait,
 * timeout, hedge and refusal, exactly as for a `CompletableFuture`. Each attempt runs [block] as a
 * child of the caller's job (its dispatcher, its context) with a [QuellContext] holding the
 * attempt's deadline and criticality. An attempt the core starts while the caller's thread is
 * starting the call (the first attempt, and a retry that needs no wait) runs on that thread at
 * once, in the caller's coroutine, with a job of its own that is made only if the block asks for
 * it or suspends; other retries and hedges are launched on the caller's dispatcher. Waits between
 * attempts suspend; no thread is blocked.
 *
 * Cancellation is the caller's: cancelling the calling coroutine cancels the attempt in flight and
 * ends the call `CANCELLED`, with nothing charged to the budget or the breaker, and the
 * [CancellationException] is rethrown as is; a `CancellationException` thrown by [block] is never
 * retried or taken for a failure of the dependency. An attempt the core gives up on (its timeout, a
 * hedge that lost) is cancelled; the call returns only once every attempt it started has ended
 * (structured concurrency), so an attempt that ignores cancellation holds the caller up.
 *
 * Throws what `execute` throws: the last attempt's exception unchanged when the failure was
 * permanent or the attempts ran out, `CallRejectedException` when a gate or the budget refused,
 * `DeadlineExceededException` at the deadline.
 */
public suspend fun <T> Resilience.executeSuspend(block: suspend (Attempt) -> T): T {
  val call = SuspendCall(coroutineContext, block)
  call.startInline()
  val result = try {
    executeAsync(call)
  } finally {
    call.endInline()
  }
  if (result === InPlaceWork.ANSWERED) {
    @Suppress("UNCHECKED_CAST") // every attempt answered in place, the last with the call's value
    return call.answerValue() as T
  }
  if (call.endedWith(result)) {
    @Suppress("UNCHECKED_CAST") // the core hands back the value the block returned
    return result.join() as T // the call and all its attempts ended while it started: nothing to wait for
  }
  return call.finish(this, result) // a tail call: the path above keeps no continuation of its own
}

/**
 * As [executeSuspend], reporting how the call ended as an [Outcome] instead of throwing for the
 * work's failures and Quell's refusals. A call that ends `CANCELLED` has no outcome: its
 * [CancellationException] is rethrown, never swallowed.
 */
public suspend fun <T : Any> Resilience.runSuspend(block: suspend (Attempt) -> T?): Outcome<T> {
  val call = SuspendCall(coroutineContext, block)
  call.startInline()
  val result = try {
    runAsync(call)
  } finally {
    call.endInline()
  }
  if (call.endedWith(result)) {
    @Suppress("UNCHECKED_CAST") // the value the block returned, typed as runSuspend's caller expects
    return outcomeOrThrow(result.join()) as Outcome<T>
  }
  @Suppress("UNCHECKED_CAST") // as above
  return call.finishRun(this, result) as Outcome<T>
}

/** The outcome of a call, unless it ended `CANCELLED`: that is the caller's cancellation, rethrown. */
private fun <T : Any> outcomeOrThrow(outcome: Outcome<T>): Outcome<T> {
  if (outcome.stopReason() == StopReason.CANCELLED) {
    val failure = outcome.failure().orElse(null)
    throw failure as? CancellationException ?: CancellationException("call cancelled", failure)
  }
  return outcome
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
 * One suspend call as the core's [Resilience.AsyncWork]. An attempt the core starts on the caller's
 * thread while the caller is starting the call runs [block] there and then, in the caller's
 * coroutine; any other is launched on the caller's dispatcher, as a child of the caller's job.
 *
 * An attempt run there and then has this object as its continuation while it runs, and when it
 * returns (or throws) without suspending, its answer is handed to the core with no stage at all
 * ([InPlaceWork]) and with no atomic step: the next such attempt of the call reuses this object.
 * Its coroutine context, an [InlineAttempt], is made only if the block asks for it (reads its
 * context, or a suspension reads it) on the caller's thread, or if the block suspends; a block that suspends takes this object for the
 * rest of the call (it resumes it when it ends), and later attempts run there and then get an
 * [InlineAttempt] of their own as their continuation too.
 *
 * Attempts still running when [start] returned are remembered, and [finish] waits for them after
 * the call's end (structured concurrency); a call whose every attempt ended inside [start] keeps no
 * list and needs no wait.
 */
internal class SuspendCall<T>(
  /** The caller's coroutine context: its job is the parent of every attempt, its dispatcher theirs. */
  private val caller: CoroutineContext,
  private val block: suspend (Attempt) -> T,
) : Continuation<Any?>, Resilience.AsyncWork<Any>, InPlaceWork, CoroutineScope {
  override val coroutineContext: CoroutineContext
    get() = caller

  /**
   * The caller's thread while it starts the call. A plain field: only that thread ever finds its
   * own thread here, and it reads its own writes; any other thread sees another thread or null.
   * (A thread this object was handed to while an attempt ran in place sees the caller's thread: the
   * hand-over orders it after the write.)
   */
  private var inline: Thread? = null

  /**
   * Attempts that had not ended when [start] returned ([InlineAttempt]s and launched [Job]s); changed
   * under this object's lock, read without it once the call is over (the core starts nothing after).
   */
  @Volatile private var running: ArrayList<Any>? = null

  /**
   * What the attempt running on this object has made: null while it runs with nothing made, and
   * between attempts that answered in place; its [InlineAttempt] once the block asked for its
   * context on the caller's thread, or suspended (then the attempt keeps this object); an [Early]
   * answer if it resumed this object before its start saw it suspend. Only the caller's thread
   * makes an [InlineAttempt] while the block runs, so an answer without suspending is read back
   * with no atomic step; the block's resume, which may come from anywhere, is the one race.
   */
  @Volatile private var made: Any? = null

  /**
   * True while a block runs on this object, until its start has seen how it ended. Written by the
   * caller's thread only; another thread reads it only to refuse a resume that comes after the
   * block answered (a broken contract), so a stale view costs nothing but that diagnosis.
   */
  private var runningHere = false

  /** The answer of the attempt that last answered in place: its value, or its failure if [failed]. */
  private var answer: Any? = null
  private var failed = false

  fun startInline() {
    inline = Thread.currentThread()
  }

  fun endInline() {
    inline = null
  }

  /** True when [result] is complete with a value and no attempt may still be running. */
  fun endedWith(result: CompletableFuture<*>): Boolean =
    result.isDone && running == null && !result.isCompletedExceptionally

  override fun answerValue(): Any? = if (failed) null else answer

  override fun answerFailure(): Throwable? = if (failed) answer as Throwable else null

  @Suppress("UNCHECKED_CAST") // the core sees values as objects; a null value is the core's null
  override fun start(attempt: Attempt): CompletionStage<Any> {
    if (inline === Thread.currentThread()) {
      return if (made == null) startHere(attempt) else startInline(attempt)
    }
    // the core has the attempt's own context current here (deadline at its end, the call's label)
    val quell = QuellContext(ResilienceContext.current())
    val result = AttemptFuture<T>()
    val job = launch(quell) {
      try {
        result.complete(block(attempt))
      } catch (t: Throwable) {
        result.completeExceptionally(t) // the core judges it, a CancellationException included
      }
    }
    remember(job)
    result.attach(job, needsWatch = true)
    return result as CompletionStage<Any>
  }

  /**
   * Runs [block] there and then with this object as its continuation (see [InlineAttempt.start] for
   * how it is called): an answer without suspending goes to the core with no stage.
   */
  private fun startHere(attempt: Attempt): CompletionStage<Any> {
    runningHere = true
    val answer = try {
      erased<Function2<Attempt, Continuation<Any?>, Any?>>(block).invoke(attempt, this)
    } catch (t: Throwable) {
      return ended(null, t) // the core judges it, a CancellationException included
    }
    return ended(answer, null)
  }

  /** Runs [block] there and then with an [InlineAttempt] of its own (this object is taken). */
  @Suppress("UNCHECKED_CAST") // as in start
  private fun startInline(attempt: Attempt): CompletionStage<Any> {
    val run = InlineAttempt<T>(caller)
    if (run.start(block, attempt)) {
      remember(run) // it resumes run when it ends
    }
    return run as CompletionStage<Any>
  }

  /** The block run on this object returned [value] (perhaps the suspension marker) or threw [failure]. */
  @Suppress("UNCHECKED_CAST") // the core sees values as objects
  private fun ended(value: Any?, failure: Throwable?): CompletionStage<Any> {
    if (failure != null || value !== COROUTINE_SUSPENDED) {
      // answered without suspending: only this thread has made anything for it
      runningHere = false
      val m = made
      if (m != null) {
        if (m is InlineAttempt<*>) { // its context was asked for while it ran
          val attempt = m as InlineAttempt<Any?>
          attempt.started(suspended = false)
          attempt.ended(value, failure) // its job (if made) ends with it; nothing else waits on it
        } // (an Early: the block resumed this object and answered too, breaking the contract: its answer stands)
        MADE.lazySet(this, null) // the next attempt starts with nothing made
      }
      return answered(value, failure)
    }
    while (true) {
      val m = made
      when {
        m is InlineAttempt<*> -> { // its context was asked for while it ran: it is the attempt's stage now
          runningHere = false
          (m as InlineAttempt<Any?>).started(suspended = true) // resumed, this object ends the attempt
          remember(m)
          return m as CompletionStage<Any>
        }
        m is Early -> { // suspended, and resumed before this thread saw it: answered all the same
          runningHere = false
          MADE.lazySet(this, null)
          return answered(m.result.getOrNull(), m.result.exceptionOrNull())
        }
        else -> {
          val attempt = InlineAttempt<Any?>(caller)
          attempt.begin(Thread.currentThread())
          if (MADE.compareAndSet(this, null, attempt)) {
            runningHere = false
            attempt.started(suspended = true)
            remember(attempt)
            return attempt as CompletionStage<Any>
          }
          // resumed meanwhile: look again (this attempt object was never seen)
        }
      }
    }
  }

  private fun answered(value: Any?, failure: Throwable?): CompletionStage<Any> {
    failed = failure != null
    answer = failure ?: value
    return InPlaceWork.ANSWERED
  }

  /**
   * The context of the attempt running on this object: its [InlineAttempt], made when the block
   * first asks on the caller's thread. Anyone else gets the caller's: another thread (the block's
   * own thread makes the attempt's context, and a block that hands this object on to be resumed
   * has it made as it suspends), or stray code asking between attempts.
   */
  override val context: CoroutineContext
    get() {
      while (true) {
        val m = made
        if (m is InlineAttempt<*>) {
          return m
        }
        if (m != null || !runningHere || inline !== Thread.currentThread()) {
          return caller
        }
        val attempt = InlineAttempt<Any?>(caller)
        attempt.begin(Thread.currentThread())
        if (MADE.compareAndSet(this, null, attempt)) {
          return attempt
        }
      }
    }

  /** The block, having suspended, ends: its attempt hears it (or its start does, if it is not past it). */
  @Suppress("UNCHECKED_CAST") // the attempt's continuation takes what the block returns
  override fun resumeWith(result: Result<Any?>) {
    while (true) {
      val m = made
      if (m is InlineAttempt<*>) {
        (m as InlineAttempt<Any?>).resumeWith(result)
        return
      }
      check(m == null && runningHere) { "the attempt's continuation was resumed after the attempt ended" }
      if (MADE.compareAndSet(this, null, Early(result))) {
        return
      }
    }
  }

  private fun remember(attempt: Any) {
    synchronized(this) {
      (running ?: ArrayList<Any>(2).also { running = it }).add(attempt)
    }
  }

  /** Waits for the call's value as [awaitOrDiscard] does, then for every attempt still running. */
  suspend fun finish(policy: Resilience, result: CompletableFuture<Any>): T {
    try {
      @Suppress("UNCHECKED_CAST") // the core hands back the value the block returned
      return result.awaitOrDiscard(policy) { it } as T
    } finally {
      joinAttempts()
    }
  }

  /** As [finish], for [runSuspend]'s outcome. */
  suspend fun finishRun(policy: Resilience, result: CompletableFuture<Outcome<Any>>): Outcome<Any> {
    val outcome = try {
      result.awaitOrDiscard(policy) { it.value() }
    } finally {
      joinAttempts()
    }
    return outcomeOrThrow(outcome)
  }

  /** Waits, even when cancelled (as `coroutineScope` does for its children), for the attempts still running. */
  private suspend fun joinAttempts() {
    val attempts = synchronized(this) { running?.toList() } ?: return
    withContext(NonCancellable) {
      for (a in attempts) {
        when (a) {
          is Job -> a.join()
          is InlineAttempt<*> -> a.awaitEnd()
        }
      }
    }
  }

  /** A block's end that came before its start saw it suspend. */
  private class Early(@JvmField val result: Result<Any?>)

  private companion object {
    private val MADE: AtomicReferenceFieldUpdater<SuspendCall<*>, Any?> =
      AtomicReferenceFieldUpdater.newUpdater(SuspendCall::class.java, Any::class.java, "made")
  }
}

/** [x] as an [F], unchecked: the caller's JVM checkcast is the only check. */
@Suppress("UNCHECKED_CAST")
private fun <F> erased(x: Any): F = x as F

/**
 * An attempt run on the caller's thread while it starts the call: its coroutine context, and the
 * future the core sees once it suspends. Either the call ([SuspendCall]) is the block's
 * continuation and makes this object when the block asks for its context or suspends (the call
 * then hands this object what the block resumes it with), or the call is taken by an earlier
 * attempt still suspended and this object is the block's continuation itself ([start]).
 *
 * As a context it is the caller's, with a [QuellContext] holding the attempt's own
 * [ResilienceContext] and a job of the attempt's own (a child of the caller's) in place of theirs.
 * Both are made only when something asks for them: a suspension that can be cancelled, `isActive`,
 * [currentResilienceContext], or anything that folds the context (a dispatch, `withContext`,
 * `launch`). A block that answers without suspending, as most do once their data is cached, thus
 * costs neither; and a cancel from the core that comes before the job exists is remembered and
 * applied when it is made.
 *
 * The attempt's context is what the core makes current while it starts the attempt, so it can be
 * read only on the starting thread before [started]: it is read then if the block asked for it, or
 * at [started] if the block suspended (a suspended block may be resumed, and ask, anywhere). A
 * thread that asks in between, on a block resumed at once elsewhere without a dispatcher, waits the
 * moment it takes the starting thread to return from the block. After a block that ended without
 * asking, nothing can ask for its attempt's context but stray code, which gets the caller's.
 *
 * As the core's future, the core's `cancel` cancels the job and leaves the future to complete when
 * the block has ended, so that a value that still arrives reaches the core, which hands it to the
 * policy's discard hook.
 */
internal class InlineAttempt<T>(
  /** The caller's coroutine context. */
  private val caller: CoroutineContext,
) : CompletableFuture<T>(), Continuation<T>, CoroutineContext, DirectStage {
  /**
   * The thread starting the block, from [begin] until [started]; then the attempt's [QuellContext]
   * if it was read, else null. Only the starting thread writes it while it holds a thread.
   */
  @Volatile private var starting: Any? = null

  /** Null, the driver's callback ([whenDone]) until it is told, then [TOLD]. */
  @Volatile private var callback: Any? = null
  /** The block's failure, once it ended with one (written before the future completes). */
  private var endFailure: Throwable? = null

  /** Null, the attempt's [CompletableJob], or [CANCEL] (cancelled before any job was made). */
  @JvmField @Volatile internal var job: Any? = null
  /** The context as the standard chain, once something needed it whole. */
  @JvmField @Volatile internal var whole: CoroutineContext? = null

  override val context: CoroutineContext
    get() = this

  /** The block is about to start, or is running, on [thread] (null: it is not known, so no one can read its context there). */
  fun begin(thread: Thread?) {
    STARTING.lazySet(this, thread)
  }

  /**
   * Runs [block] for [attempt] on this thread there and then, with this object as its continuation;
   * true if it suspended (it resumes this object when it ends), false if it has ended.
   *
   * It is called as one suspend function calls another: the intrinsic
   * (startCoroutineUninterceptedOrReturn) would wrap a block that is not a compiled suspend lambda (a
   * function reference, a Java implementation) in a continuation of its own so that it could be
   * intercepted, one more object per attempt; this object needs no interception (it ends the attempt
   * on whatever thread resumes it, as an awaited future's callback does), and a block's own suspend
   * functions intercept their own continuations. (An explicit cast to the function type would check
   * its arity through kotlin.jvm.internal.TypeIntrinsics on every call, a fifth of a success's time;
   * the compiled form of a suspend function type is Function2.)
   */
  fun start(block: suspend (Attempt) -> T, attempt: Attempt): Boolean {
    begin(Thread.currentThread())
    val answer = try {
      erased<Function2<Attempt, Continuation<T>, Any?>>(block).invoke(attempt, this)
    } catch (t: Throwable) {
      started(suspended = false)
      ended(null, t) // the core judges it, a CancellationException included
      return false
    }
    val suspended = answer === COROUTINE_SUSPENDED
    started(suspended)
    if (!suspended) {
      @Suppress("UNCHECKED_CAST") // not the marker: the block's own value
      ended(answer as T, null)
    }
    return suspended
  }

  /**
   * The block ended (returned, threw, or resumed this continuation).
   *
   * Completing the future is the one atomic step (nothing else completes it: the core's `cancel`
   * is overridden). A thread that makes the job, or registers the driver's callback, at the same
   * time writes its field and then reads [isDone]; this one completes the future and then reads
   * their fields; both are volatile, so at least one of the two sees the other, and each side's
   * step is safe to take twice (completing a job) or guarded to happen once (telling the driver).
   */
  fun ended(value: T?, failure: Throwable?) {
    if (failure != null) {
      endFailure = failure
      completeExceptionally(failure)
    } else {
      @Suppress("UNCHECKED_CAST") // a null value is the core's null
      complete(value as T)
    }
    val j = job
    if (j is CompletableJob) {
      j.complete() // (a cancelled job stays cancelled)
    }
    if (callback != null) {
      tell()
    }
  }

  /**
   * The core's driver hears of the attempt's end through [callback], called once, on the thread
   * that ends the block (at once if it has ended): no dependent stage is hung on the future.
   */
  override fun whenDone(callback: BiFunction<Any?, Throwable?, *>) {
    this.callback = callback
    if (isDone) {
      tell()
    }
  }

  /** Calls the driver's callback, once: whoever swaps it for [TOLD] calls it. */
  private fun tell() {
    val cb = callback
    if (cb == null || cb === TOLD || !CALLBACK.compareAndSet(this, cb, TOLD)) {
      return
    }
    val failure = endFailure
    @Suppress("UNCHECKED_CAST") // only whenDone stores anything but TOLD
    // (a failure is kept rather than read from the future, which would throw a new exception)
    (cb as BiFunction<Any?, Throwable?, *>).apply(if (failure == null) getNow(null) else null, failure)
  }

  override fun resumeWith(result: Result<T>) {
    ended(result.getOrNull(), result.exceptionOrNull())
  }

  /** The failure the block ended with (kept, so the driver need not read it from the future). */
  override fun failedWith(): Throwable? = endFailure

  /** Suspends until the block has ended, whatever it ended with. */
  suspend fun awaitEnd() {
    if (isDone) {
      return
    }
    suspendCancellableCoroutine { waiter ->
      whenComplete { _, _ -> waiter.resumeWith(Result.success(Unit)) }
    }
  }

  override fun cancel(mayInterruptIfRunning: Boolean): Boolean {
    while (true) {
      val j = job
      when {
        j is Job -> j.cancel()
        isDone -> return false
        j !== CANCEL && !JOB.compareAndSet(this, null, CANCEL) -> continue
      }
      return true
    }
  }

  private fun attemptJob(): Job {
    while (true) {
      val j = job
      if (j is Job) {
        return j
      }
      val over = isDone
      // after the block's end, a job that is already over: nothing is left to cancel or to wait for
      val made = if (over) Job().also { it.complete() } else Job(caller[Job])
      if (JOB.compareAndSet(this, j, made)) {
        if (j === CANCEL) {
          made.cancel()
        }
        if (!over && isDone) {
          made.complete() // the block ended meanwhile, perhaps before it could see this job (see ended)
        }
        return made
      }
      made.cancel() // another thread changed the state first; this job was never seen: detach it
    }
  }

  /** The block returned from its start: with its value or failure, or [suspended]. */
  fun started(suspended: Boolean) {
    if (starting is QuellContext) {
      return // it was read while the block ran
    }
    if (suspended) {
      starting = QuellContext(ResilienceContext.current()) // suspended: it may be resumed and ask anywhere
    } else {
      STARTING.lazySet(this, null)
    }
  }

  private fun quellContext(): QuellContext? {
    while (true) {
      val s = starting
      if (s is QuellContext) {
        return s
      }
      if (s === Thread.currentThread()) {
        // the core has the attempt's own context current here (deadline at its end, the call's label)
        val made = QuellContext(ResilienceContext.current())
        starting = made
        return made
      }
      if (s == null) {
        return caller[QuellContext] // the block ended without asking (or has not begun); the attempt is over
      }
      Thread.onSpinWait() // the starting thread is returning from the block and reads it now
    }
  }

  private fun wholeContext(): CoroutineContext {
    whole?.let { return it }
    val q = quellContext()
    val made = if (q == null) caller + attemptJob() else caller + attemptJob() + q
    WHOLE.compareAndSet(this, null, made)
    return whole!!
  }

  @Suppress("UNCHECKED_CAST") // each key answers its own element type
  override fun <E : CoroutineContext.Element> get(key: CoroutineContext.Key<E>): E? = when {
    key === Job -> attemptJob() as E
    key === QuellContext -> quellContext() as E
    else -> caller[key]
  }

  override fun <R> fold(initial: R, operation: (R, CoroutineContext.Element) -> R): R =
    wholeContext().fold(initial, operation)

  override fun minusKey(key: CoroutineContext.Key<*>): CoroutineContext = wholeContext().minusKey(key)

  override fun toString(): String = "InlineAttempt[" + (if (isDone) "ended" else "running") + "]"

  private companion object {
    /** The core cancelled the attempt before anyone asked for its job. */
    private val CANCEL = Any()
    /** The driver's callback has been called. */
    private val TOLD = Any()
    private val STARTING: AtomicReferenceFieldUpdater<InlineAttempt<*>, Any?> =
      AtomicReferenceFieldUpdater.newUpdater(InlineAttempt::class.java, Any::class.java, "starting")
    private val CALLBACK: AtomicReferenceFieldUpdater<InlineAttempt<*>, Any?> =
      AtomicReferenceFieldUpdater.newUpdater(InlineAttempt::class.java, Any::class.java, "callback")
    private val JOB: AtomicReferenceFieldUpdater<InlineAttempt<*>, Any?> =
      AtomicReferenceFieldUpdater.newUpdater(InlineAttempt::class.java, Any::class.java, "job")
    private val WHOLE: AtomicReferenceFieldUpdater<InlineAttempt<*>, CoroutineContext?> =
      AtomicReferenceFieldUpdater.newUpdater(InlineAttempt::class.java, CoroutineContext::class.java, "whole")
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
