package dev.quell.kotlin

import dev.quell.Backoff
import dev.quell.Resilience
import dev.quell.ResilienceEvent
import dev.quell.RetryBudget
import dev.quell.StopReason
import dev.quell.test.EventRecorder
import java.io.IOException
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * Many coroutines on a multi-threaded dispatcher against one budget, on the real clock: the budget
 * funds exactly what it holds, every call ends once, and cancellations charge nothing.
 */
class ConcurrentCallsTest {

  @Test
  fun manyCoroutinesAgainstOneBudgetAreFundedExactlyItsTokens() = runBlocking<Unit> {
    val budget = RetryBudget.replenishing(100, Duration.ofHours(1)) // 100 retries, no refill during the test
    val events = EventRecorder()
    val policy = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(budget).withListener(events)
    val firstAttempts = ConcurrentHashMap.newKeySet<Int>()
    val calls = 1000
    val outcomes = (0 until calls).map { i ->
      async(Dispatchers.Default) {
        policy.runSuspend { attempt ->
          yield() // give the other coroutines the threads
          if (firstAttempts.add(i)) throw IOException("fails once")
          attempt.number()
        }
      }
    }.awaitAll()

    val byReason = outcomes.groupingBy { it.stopReason() }.eachCount()
    assertThat(byReason).containsOnlyKeys(StopReason.SUCCEEDED, StopReason.BUDGET_EXHAUSTED)
    assertThat(byReason[StopReason.SUCCEEDED]).`as`("one per token").isEqualTo(100)
    assertThat(byReason[StopReason.BUDGET_EXHAUSTED]).isEqualTo(900)
    assertThat(outcomes.filter { it.isSuccess }.map { it.value() }).containsOnly(2)
    assertThat(outcomes.sumOf { it.attempts() }).isEqualTo(calls + 100)
    assertThat(budget.tokens()).isZero()
    assertThat(events.terminals()).hasSize(calls)
    assertThat(events.count(ResilienceEvent.Type.REJECTED_BY_BUDGET)).isEqualTo(900)
  }

  @Test
  fun manyCancelledCoroutinesChargeNothingAndEndOnceEach() = runBlocking<Unit> {
    val budget = RetryBudget.feedback(10, 0.1)
    val events = EventRecorder()
    val policy = Resilience.DEFAULT.withBudget(budget).withListener(events)
    val started = AtomicInteger()
    val allStarted = CompletableDeferred<Unit>()
    val calls = 500
    val jobs = (0 until calls).map {
      launch(Dispatchers.Default) {
        policy.executeSuspend<String> {
          if (started.incrementAndGet() == calls) allStarted.complete(Unit)
          awaitCancellation()
        }
      }
    }
    allStarted.await()
    jobs.forEach { it.cancelAndJoin() }

    assertThat(budget.tokens()).`as`("a cancellation is no failure of the dependency").isEqualTo(10.0)
    assertThat(events.terminals()).hasSize(calls)
    assertThat(events.terminals().map { it.stopReason().orElseThrow() }).containsOnly(StopReason.CANCELLED)
    assertThat(events.count(ResilienceEvent.Type.RETRYING)).isZero()
  }

  @Test
  fun cancelsRacingAnswersOnManyThreadsEndEachCallOnceAndChargeNothing() = runBlocking<Unit> {
    val budget = RetryBudget.feedback(10, 0.1)
    val events = EventRecorder()
    val policy = Resilience.DEFAULT.withBudget(budget).withListener(events)
    val returned = AtomicInteger()
    val calls = 500
    val jobs = (0 until calls).map { i ->
      // the cancel races the answer, not the start: a job cancelled before it ran never makes a call
      val started = CompletableDeferred<Unit>()
      val call = launch(Dispatchers.Default) {
        policy.executeSuspend { started.complete(Unit); delay((i % 3).toLong()); "v" }
        returned.incrementAndGet()
      }
      launch(Dispatchers.Default) {
        started.await()
        delay(((i + 1) % 3).toLong())
        call.cancel()
      }
      call
    }
    jobs.forEach { it.join() }

    val reasons = events.terminals().map { it.stopReason().orElseThrow() }
    assertThat(reasons).`as`("one terminal event per call").hasSize(calls)
    assertThat(reasons).containsOnly(StopReason.SUCCEEDED, StopReason.CANCELLED)
    assertThat(reasons.count { it == StopReason.SUCCEEDED })
      .`as`("a call can succeed and its caller still be cancelled before it resumes, never the reverse")
      .isGreaterThanOrEqualTo(returned.get())
    assertThat(budget.tokens()).`as`("full, and a cancellation takes nothing").isEqualTo(10.0)
    assertThat(events.count(ResilienceEvent.Type.RETRYING)).isZero()
  }
}
