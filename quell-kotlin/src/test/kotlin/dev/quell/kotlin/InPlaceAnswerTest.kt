package dev.quell.kotlin

import dev.quell.Attempt
import dev.quell.Backoff
import dev.quell.Resilience
import dev.quell.RetryBudget
import java.io.IOException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.Continuation
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.suspendCoroutineUninterceptedOrReturn
import kotlin.coroutines.resume
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test

/**
 * Attempts that answer while the core starts them, on the real clock (the core's in-place lane and
 * its retry loop): the call is their continuation, handed to the core with no stage, and reused by
 * the call's next attempt. The blocks here are function references to suspend functions, which
 * (unlike suspend lambdas) make no continuation of their own and never ask for their context
 * unless they say so, so each path of the call's own continuation is taken.
 */
class InPlaceAnswerTest {
  private val policy = Resilience.DEFAULT.withName("in-place-kotlin").withBackoff(Backoff.NONE)
    .withBudget(RetryBudget.NONE)

  private val calls = AtomicInteger()

  private suspend fun answers(attempt: Attempt): String = "value ${attempt.number()}"

  private suspend fun failsOnce(attempt: Attempt): String {
    calls.incrementAndGet()
    if (attempt.number() == 1) {
      throw IOException("first attempt fails")
    }
    return "value ${attempt.number()}"
  }

  @Test
  fun aBlockThatAnswersAtOnceGivesTheCallItsValue() = runBlocking<Unit> {
    assertThat(policy.executeSuspend(::answers)).isEqualTo("value 1")
    assertThat(policy.runSuspend(::answers).value()).isEqualTo("value 1")
  }

  @Test
  fun aFailureAnsweredAtOnceIsRetriedOnTheSameCall() = runBlocking<Unit> {
    assertThat(policy.executeSuspend(::failsOnce)).isEqualTo("value 2")
    assertThat(calls.get()).isEqualTo(2)
    val outcome = policy.runSuspend(::failsOnce)
    assertThat(outcome.value()).isEqualTo("value 2")
    assertThat(outcome.attempts()).isEqualTo(2)
  }

  private val contexts = ArrayList<kotlin.coroutines.CoroutineContext>()

  private suspend fun asksThenFailsOnce(attempt: Attempt): Int {
    contexts.add(currentCoroutineContext()) // the attempt's context is made now, for this attempt only
    if (attempt.number() == 1) {
      throw IOException("first attempt fails")
    }
    return attempt.number()
  }

  @Test
  fun eachAttemptThatAsksGetsAContextOfItsOwnEndedWithIt() = runBlocking<Unit> {
    val caller = coroutineContext[Job]!!
    assertThat(policy.executeSuspend(::asksThenFailsOnce)).isEqualTo(2)
    assertThat(contexts).hasSize(2)
    assertThat(contexts[0]).isNotSameAs(contexts[1])
    val jobs = contexts.map { it[Job]!! }
    assertThat(jobs[0]).isNotSameAs(jobs[1])
    assertThat(jobs).allMatch { it.isCompleted && !it.isCancelled }
    assertThat(caller.children.toList()).doesNotContainAnyElementsOf(jobs)
  }

  private val resumer = Executors.newSingleThreadExecutor()

  /** Suspends with the call's own continuation, resumed on another thread, perhaps before the block has returned. */
  private suspend fun resumedElsewhere(attempt: Attempt): String = suspendCoroutineUninterceptedOrReturn { c ->
    resumer.execute { c.resume("resumed ${attempt.number()}") }
    COROUTINE_SUSPENDED
  }

  @Test
  fun aBlockResumedElsewhereBeforeOrAfterItsStartSeesItSuspendEndsTheCallOnce() = runBlocking<Unit> {
    try {
      repeat(2_000) {
        assertThat(policy.executeSuspend(::resumedElsewhere)).isEqualTo("resumed 1")
      }
    } finally {
      resumer.shutdown()
    }
  }

  private val kept = AtomicReference<Continuation<String>>()

  /** Keeps its continuation and answers anyway: resuming it later breaks the coroutine contract. */
  private suspend fun keepsItsContinuation(attempt: Attempt): String = suspendCoroutineUninterceptedOrReturn { c ->
    kept.set(c)
    "answered ${attempt.number()}"
  }

  @Test
  fun resumingTheContinuationOfAnAttemptThatAnsweredIsRefused() = runBlocking<Unit> {
    assertThat(policy.executeSuspend(::keepsItsContinuation)).isEqualTo("answered 1")
    assertThat(kept.get()).`as`("the call's own continuation").isInstanceOf(SuspendCall::class.java)
    assertThatThrownBy { kept.get().resume("again") }.isInstanceOf(IllegalStateException::class.java)
    assertThat(policy.executeSuspend(::answers)).`as`("later calls are not disturbed").isEqualTo("value 1")
  }

  private val elsewhere = Executors.newSingleThreadExecutor()
  private val seenElsewhere = AtomicReference<kotlin.coroutines.CoroutineContext>()

  /** Has another thread read its continuation's context while it runs, then answers without suspending. */
  private suspend fun contextReadElsewhere(attempt: Attempt): String = suspendCoroutineUninterceptedOrReturn { c ->
    seenElsewhere.set(elsewhere.submit<kotlin.coroutines.CoroutineContext> { c.context }.get(10, TimeUnit.SECONDS))
    "answered ${attempt.number()}"
  }

  @Test
  fun anotherThreadReadingTheContextWhileTheBlockRunsGetsTheCallersAndHoldsNothingUp() = runBlocking<Unit> {
    try {
      assertThat(policy.executeSuspend(::contextReadElsewhere)).isEqualTo("answered 1")
      // only the block's own thread makes the attempt's context; another thread, mid-attempt, gets the
      // caller's (its job is the caller's job: nothing was made that would wait to be ended)
      assertThat(seenElsewhere.get()[Job]).isSameAs(coroutineContext[Job])
      assertThat(policy.executeSuspend(::answers)).`as`("the call's next attempt is not disturbed").isEqualTo("value 1")
    } finally {
      elsewhere.shutdown()
    }
  }

  @Test
  fun manyCallersOnManyThreadsRetryingInPlaceEachEndOnce() = runBlocking<Unit> {
    val budget = RetryBudget.of(1.0, 100.0) // 1,000 tokens: a second charge per call would empty it within the run
    val p = Resilience.DEFAULT.withName("in-place-kotlin-many").withBackoff(Backoff.NONE).withBudget(budget)
    val go = CountDownLatch(1)
    val perCaller = 2_000
    val values = (1..4).map {
      async(Dispatchers.Default) {
        go.await(10, TimeUnit.SECONDS)
        var n = 0
        repeat(perCaller) {
          if (p.executeSuspend(::failsOnceEach) == "second") {
            n++
          }
        }
        n
      }
    }
    go.countDown()
    assertThat(values.awaitAll()).containsOnly(perCaller)
    assertThat(budget.tokens()).`as`("each retry charged once, each success credited once").isEqualTo(budget.capacity())
  }

  private suspend fun failsOnceEach(attempt: Attempt): String {
    if (attempt.number() == 1) {
      throw IOException("first attempt fails")
    }
    return "second"
  }
}
