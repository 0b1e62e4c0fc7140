package dev.quell.kotlin

import dev.quell.AttemptTimeoutException
import dev.quell.Backoff
import dev.quell.Resilience
import dev.quell.ResilienceContext
import dev.quell.RetryBudget
import dev.quell.kotlin.test.asTimeSource
import java.time.Duration
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.Continuation
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine
import kotlinx.coroutines.async
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.test.advanceTimeBy
import kotlinx.coroutines.test.runCurrent
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * The attempt that runs in place on the caller's thread (the first, and a retry that needs no
 * wait): its job and its context exist when asked for, behave as a launched attempt's would, and
 * the call waits for it as `coroutineScope` would, on kotlinx-coroutines-test's virtual clock.
 */
class InlineAttemptTest {
  private fun TestScope.policy(): Resilience = Resilience.DEFAULT
    .withBackoff(Backoff.NONE)
    .withBudget(RetryBudget.NONE)
    .withTimeSource(testScheduler.asTimeSource())

  @Test
  fun aBlockThatNeverSuspendsSeesTheAttemptsContextNotTheCallers() = runTest {
    val time = testScheduler.asTimeSource()
    val p = policy().withTimeSource(time).withAttemptTimeout(800.milliseconds)
    val (coroutine, thread) = withDeadline(5.seconds, time) {
      p.executeSuspend { currentResilienceContext().remaining() to ResilienceContext.current().remaining() }
    }
    assertThat(coroutine).`as`("the attempt's end, not the caller's 5 s").contains(Duration.ofMillis(800))
    assertThat(thread).contains(Duration.ofMillis(800))
  }

  @Test
  fun theAttemptsJobIsAChildOfTheCallersAndEndsWithTheBlock() = runTest {
    val caller = coroutineContext[Job]!!
    var attemptJob: Job? = null
    val value = policy().executeSuspend {
      val job = currentCoroutineContext()[Job]!! // (inside runTest, coroutineContext is the test scope's)
      attemptJob = job
      assertThat(job).isNotSameAs(caller)
      assertThat(caller.children.toList()).contains(job)
      "v"
    }
    assertThat(value).isEqualTo("v")
    assertThat(attemptJob!!.isCompleted).isTrue()
    assertThat(attemptJob.isCancelled).isFalse()
    assertThat(caller.children.toList()).doesNotContain(attemptJob)
  }

  @Test
  fun aTimeoutThatComesBeforeTheJobIsMadeCancelsTheJobWhenItIsMade() = runTest {
    val p = policy().withAttempts(1).withAttemptTimeout(100.milliseconds)
    var suspended: Continuation<Unit>? = null
    var activeWhenResumed: Boolean? = null
    val call = async {
      p.runSuspend {
        suspendCoroutine { suspended = it } // a suspension that never asks for a job (a plain callback)
        activeWhenResumed = currentCoroutineContext().isActive // asks now: the job is made, cancelled
        "late"
      }
    }
    runCurrent()
    advanceTimeBy(150) // the attempt times out while suspended: the core's cancel comes before any job
    runCurrent()
    suspended!!.resume(Unit)
    val outcome = call.await()
    assertThat(activeWhenResumed).isFalse()
    assertThat(outcome.failure()).containsInstanceOf(AttemptTimeoutException::class.java)
  }

  @Test
  fun theCallReturnsOnlyOnceAnInlineAttemptThatOutlivedItsTimeoutHasEnded() = runTest {
    val p = policy().withAttempts(1).withAttemptTimeout(100.milliseconds)
    val blockEnded = AtomicBoolean()
    val outcome = p.runSuspend {
      withContext(NonCancellable) { delay(1000) } // ignores the cancel its timeout sends
      blockEnded.set(true)
      "late"
    }
    assertThat(outcome.failure()).containsInstanceOf(AttemptTimeoutException::class.java)
    assertThat(blockEnded.get()).`as`("the attempt ended before runSuspend returned").isTrue()
    assertThat(currentTime).isEqualTo(1000)
  }

  @Test
  fun aJobAskedForAfterTheBlockEndedIsAlreadyOver() = runTest {
    val caller = coroutineContext[Job]!!
    var leaked: kotlin.coroutines.CoroutineContext? = null
    // the real clock: the core's first-attempt lane, where the call is its own attempt and answers at once
    val value = Resilience.DEFAULT.executeSuspend {
      leaked = currentCoroutineContext() // the block keeps its context but never asks for its job
      "ok"
    }
    assertThat(value).isEqualTo("ok")
    val job = leaked!![Job]!!
    assertThat(job).isNotSameAs(caller)
    assertThat(job.isCompleted).`as`("made after the block's end: nothing left to wait for").isTrue()
    assertThat(caller.children.toList()).doesNotContain(job)
  }

  @Test
  fun aRetryInPlaceRunsInAnAttemptOfItsOwnAndEachKeepsItsContext() = runTest {
    val contexts = ArrayList<kotlin.coroutines.CoroutineContext>()
    val seen = ArrayList<ResilienceContext>()
    val p = policy().withAttemptTimeout(800.milliseconds)
    val value = p.executeSuspend { attempt ->
      contexts.add(currentCoroutineContext())
      seen.add(currentResilienceContext()) // read while the attempt runs: kept with its context
      if (attempt.number() == 1) {
        throw java.io.IOException("first attempt fails")
      }
      attempt.number()
    }
    assertThat(value).isEqualTo(2)
    assertThat(contexts).hasSize(2)
    assertThat(contexts[0]).isNotSameAs(contexts[1])
    assertThat(contexts[0][Job]).isNotSameAs(contexts[1][Job])
    assertThat(contexts[0][Job]!!.isCompleted).isTrue()
    assertThat(contexts[1][Job]!!.isCompleted).isTrue()
    assertThat(contexts[0][QuellContext]!!.context).`as`("the first attempt's own, asked again after the call").isSameAs(seen[0])
    assertThat(contexts[1][QuellContext]!!.context).isSameAs(seen[1])
  }
}
