package dev.quell.kotlin

import dev.quell.AttemptTimeoutException
import dev.quell.Backoff
import dev.quell.CallRejectedException
import dev.quell.Classifier
import dev.quell.Criticality
import dev.quell.DeadlineExceededException
import dev.quell.Resilience
import dev.quell.ResilienceContext
import dev.quell.ResilienceEvent
import dev.quell.RetryBudget
import dev.quell.StopReason
import dev.quell.Verdict
import dev.quell.kotlin.test.asTimeSource
import dev.quell.test.EventRecorder
import java.io.IOException
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.cancellation.CancellationException
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * The core's behaviour (PolicyBehaviourTest in quell-test) through the coroutine driver, on
 * kotlinx-coroutines-test's virtual clock: every wait, timeout and deadline below is virtual, and
 * each test asserts the virtual time it took.
 */
class SuspendBehaviourTest {
  private val events = EventRecorder()

  private fun TestScope.policy(): Resilience = Resilience.DEFAULT
    .withBackoff(Backoff.constant(Duration.ofMillis(100)))
    .withBudget(RetryBudget.NONE)
    .withListener(events)
    .withTimeSource(testScheduler.asTimeSource())

  private fun terminal(): ResilienceEvent = events.terminal() // asserts there is exactly one

  @Test
  fun aSuccessfulFirstAttemptEndsTheCall() = runTest {
    val outcome = policy().runSuspend { "v" }
    assertThat(outcome.value()).isEqualTo("v")
    assertThat(outcome.stopReason()).isEqualTo(StopReason.SUCCEEDED)
    assertThat(outcome.attempts()).isEqualTo(1)
    assertThat(terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED)
  }

  @Test
  fun aTransientFailureIsRetriedAfterTheBackoff() = runTest {
    val calls = AtomicInteger()
    val value = policy().executeSuspend { attempt ->
      delay(10)
      if (calls.incrementAndGet() == 1) throw IOException("down")
      "v${attempt.number()}"
    }
    assertThat(value).isEqualTo("v2")
    assertThat(currentTime).isEqualTo(10 + 100 + 10)
    assertThat(terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED)
  }

  @Test
  fun aMinuteOfBackoffRunsOnTheVirtualClock() = runTest {
    val started = System.nanoTime()
    val p = policy().withAttempts(4).withDeadline(Duration.ofMinutes(5)).withBackoff(constantBackoff(20.seconds))
    val outcome = p.runSuspend<String> { throw IOException("down") }
    assertThat(outcome.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED)
    assertThat(outcome.attempts()).isEqualTo(4)
    assertThat(currentTime).isEqualTo(1.minutes.inWholeMilliseconds)
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20))
  }

  @Test
  fun aPermanentFailureIsNotRetriedAndIsRethrownUnchanged() = runTest {
    val failure = IllegalArgumentException("bad request")
    val calls = AtomicInteger()
    val thrown = runCatching { policy().executeSuspend<String> { calls.incrementAndGet(); throw failure } }
    assertThat(thrown.exceptionOrNull()).isSameAs(failure)
    assertThat(calls.get()).isEqualTo(1)
    assertThat(terminal().type()).isEqualTo(ResilienceEvent.Type.NOT_RETRIED)
  }

  @Test
  fun whenAttemptsRunOutTheLastFailureIsRethrownUnchanged() = runTest {
    val last = IOException("third")
    val calls = AtomicInteger()
    val thrown = runCatching {
      policy().executeSuspend<String> { if (calls.incrementAndGet() < 3) throw IOException("early") else throw last }
    }
    assertThat(thrown.exceptionOrNull()).isSameAs(last)
    assertThat(currentTime).isEqualTo(200)
  }

  @Test
  fun anAttemptThatOutlivesItsTimeoutIsCancelledAndRetried() = runTest {
    val cancelled = AtomicInteger()
    val calls = AtomicInteger()
    val p = policy().withAttemptTimeout(1.seconds)
    val value = p.executeSuspend { attempt ->
      if (calls.incrementAndGet() == 1) {
        try {
          awaitCancellation()
        } catch (e: CancellationException) {
          cancelled.incrementAndGet()
          throw e
        }
      }
      "v${attempt.number()}"
    }
    assertThat(value).isEqualTo("v2")
    assertThat(cancelled.get()).`as`("the timed-out attempt's coroutine was cancelled").isEqualTo(1)
    assertThat(currentTime).isEqualTo(1000 + 100)
  }

  @Test
  fun attemptsThatAllTimeOutEndWithTheTimeout() = runTest {
    val p = policy().withAttemptTimeout(1.seconds)
    val thrown = runCatching { p.executeSuspend<String> { awaitCancellation() } }.exceptionOrNull()
    assertThat(thrown).isInstanceOf(AttemptTimeoutException::class.java)
    assertThat(currentTime).isEqualTo(3 * 1000 + 2 * 100)
  }

  @Test
  fun theDeadlineCapsTheCallAndItsAttempts() = runTest {
    val p = policy().withDeadline(300.milliseconds).withAttemptTimeout(1.seconds)
    val thrown = runCatching { p.executeSuspend<String> { awaitCancellation() } }.exceptionOrNull()
    assertThat(thrown).isInstanceOf(DeadlineExceededException::class.java)
      .hasCauseInstanceOf(AttemptTimeoutException::class.java)
    assertThat(currentTime).isEqualTo(300)
    assertThat(terminal().type()).isEqualTo(ResilienceEvent.Type.DEADLINE_EXCEEDED)
  }

  @Test
  fun aDelayThatWouldCrossTheDeadlineFailsNowInsteadOfWaiting() = runTest {
    val p = policy().withDeadline(1.seconds).withBackoff(constantBackoff(5.seconds))
    val thrown = runCatching { p.executeSuspend<String> { delay(10); throw IOException("down") } }.exceptionOrNull()
    assertThat(thrown).isInstanceOf(DeadlineExceededException::class.java)
    assertThat(currentTime).isEqualTo(10)
  }

  @Test
  fun aRefusedRetryServesTheGuardedPauseThenRejects() = runTest {
    val time = testScheduler.asTimeSource()
    val budget = RetryBudget.of(0.1, 0.0, time) // one token, no floor
    assertThat(budget.trySpend()).isTrue()
    val failure = IOException("down")
    val p = policy().withTimeSource(time).withBudget(budget)
    val thrown = runCatching { p.executeSuspend<String> { throw failure } }.exceptionOrNull()
    assertThat(thrown).isInstanceOf(CallRejectedException::class.java).hasCause(failure)
    assertThat((thrown as CallRejectedException).reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED)
    assertThat(thrown.attempts()).isEqualTo(1)
    assertThat(currentTime).`as`("the 100 ms guarded pause").isEqualTo(100)
    assertThat(terminal().type()).isEqualTo(ResilienceEvent.Type.REJECTED_BY_BUDGET)
  }

  @Test
  fun aServersRetryAfterWinsOverTheBackoff() = runTest {
    val throttling = Classifier.rules()
      .onFailure({ it.message == "slow down" }, Verdict.throttled(Duration.ofSeconds(2)))
    val p = policy().withClassifier(throttling).withDeadline(10.minutes)
    val calls = AtomicInteger()
    val value = p.executeSuspend { if (calls.incrementAndGet() == 1) throw IOException("slow down") else "v" }
    assertThat(value).isEqualTo("v")
    assertThat(events.ofType(ResilienceEvent.Type.RETRYING).map { it.delay().orElseThrow() })
      .containsExactly(Duration.ofSeconds(2))
    assertThat(currentTime).isEqualTo(2000)
  }

  @Test
  fun aResultTheClassifierRejectsIsRetriedAndReturnedWhenRetryingIsOver() = runTest {
    val busy = Classifier.rules().onResult({ it == "busy" }, Verdict.TRANSIENT)
    val outcome = policy().withClassifier(busy).runSuspend { "busy" }
    assertThat(outcome.stopReason()).isEqualTo(StopReason.ATTEMPTS_EXHAUSTED)
    assertThat(outcome.attempts()).isEqualTo(3)
    assertThat(outcome.value()).isEqualTo("busy")
  }

  @Test
  fun successesCreditTheBudgetAndRetriesSpendIt() = runTest {
    val time = testScheduler.asTimeSource()
    val budget = RetryBudget.of(0.5, 0.0, time)
    while (budget.trySpend()) { /* empty it: capacity 1 */ }
    val p = policy().withTimeSource(time).withBudget(budget)
    p.executeSuspend { "a" }
    p.executeSuspend { "b" }
    assertThat(budget.tokens()).isEqualTo(1.0)
    val calls = AtomicInteger()
    p.executeSuspend { if (calls.incrementAndGet() == 1) throw IOException("once") else "c" }
    assertThat(budget.tokens()).`as`("spent one, then the success deposited half").isEqualTo(0.5)
  }

  // ---------------------------------------------------------------- cancellation

  @Test
  fun cancellingTheCallerCancelsTheAttemptEndsTheCallCancelledAndChargesNothing() = runTest {
    val budget = RetryBudget.feedback(10, 0.1)
    val p = policy().withBudget(budget).withAttemptTimeout(1.minutes)
    val attemptCancelled = CompletableDeferred<Throwable>()
    val call = launch {
      p.executeSuspend<String> {
        try {
          awaitCancellation()
        } catch (e: CancellationException) {
          attemptCancelled.complete(e)
          throw e
        }
      }
    }
    delay(500)
    call.cancel()
    call.join()
    assertThat(attemptCancelled.isCompleted).isTrue()
    assertThat(budget.tokens()).`as`("nothing charged").isEqualTo(10.0)
    assertThat(events.terminals()).hasSize(1)
    assertThat(terminal().stopReason()).contains(StopReason.CANCELLED)
    assertThat(events.count(ResilienceEvent.Type.RETRYING)).isZero()
    assertThat(currentTime).isEqualTo(500)
  }

  @Test
  fun cancellingTheCallerDuringTheBackoffEndsTheCallAndStartsNoAttempt() = runTest {
    val calls = AtomicInteger()
    val p = policy().withBackoff(constantBackoff(10.seconds))
    val call = launch { p.executeSuspend<String> { calls.incrementAndGet(); throw IOException("down") } }
    delay(5.seconds)
    call.cancel()
    call.join()
    delay(1.minutes)
    assertThat(calls.get()).isEqualTo(1)
    assertThat(events.terminals()).hasSize(1)
    assertThat(terminal().stopReason()).contains(StopReason.CANCELLED)
  }

  @Test
  fun aCancellationExceptionFromTheBlockIsRethrownAsIsAndNeverRetried() = runTest {
    val budget = RetryBudget.feedback(10, 0.1)
    val mine = CancellationException("stop")
    val calls = AtomicInteger()
    val thrown = runCatching {
      policy().withBudget(budget).executeSuspend<String> { calls.incrementAndGet(); throw mine }
    }.exceptionOrNull()
    assertThat(thrown).isSameAs(mine)
    assertThat(calls.get()).isEqualTo(1)
    assertThat(budget.tokens()).isEqualTo(10.0)
    assertThat(terminal().stopReason()).contains(StopReason.CANCELLED)
  }

  @Test
  fun runSuspendNeverSwallowsACancellation() = runTest {
    val mine = CancellationException("stop")
    val thrown = runCatching { policy().runSuspend<String> { throw mine } }.exceptionOrNull()
    assertThat(thrown).isSameAs(mine)
  }

  @Test
  fun aCancelRacingTheAnswerEndsTheCallExactlyOnce() = runTest {
    // the caller is cancelled at the very moment the attempt answers: one terminal event, whichever wins
    repeat(50) { i ->
      events.clear()
      val p = policy()
      val call = async { p.runSuspend { delay(100); "v" } }
      launch(start = CoroutineStart.UNDISPATCHED) {
        delay(100)
        if (i % 2 == 0) call.cancel()
      }
      runCatching { call.await() }
      assertThat(events.terminals()).hasSize(1)
      val reason = events.terminal().stopReason().orElseThrow()
      assertThat(reason).isIn(StopReason.SUCCEEDED, StopReason.CANCELLED)
    }
  }

  // ---------------------------------------------------------------- hedging

  @Test
  fun aHedgeWinsAndTheLoserIsCancelledBeforeTheCallReturns() = runTest {
    val loserCancelled = AtomicInteger()
    val p = policy().withHedge(100.milliseconds)
    val value = p.executeSuspend { attempt ->
      if (!attempt.isHedge()) {
        try {
          delay(1000)
          "primary"
        } catch (e: CancellationException) {
          loserCancelled.incrementAndGet()
          throw e
        }
      } else {
        delay(50)
        "hedge"
      }
    }
    assertThat(value).isEqualTo("hedge")
    assertThat(loserCancelled.get()).`as`("the loser ended before executeSuspend returned").isEqualTo(1)
    assertThat(currentTime).isEqualTo(150)
    assertThat(events.count(ResilienceEvent.Type.HEDGE_STARTED)).isEqualTo(1)
    assertThat(terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED)
  }

  @Test
  fun sheddableWorkIsNeverHedged() = runTest {
    val p = policy().withHedge(100.milliseconds).withBudget(RetryBudget.feedback(10, 0.1)).withAmbientCriticality(true)
    val attempts = AtomicInteger()
    val value = withCriticality(Criticality.SHEDDABLE) {
      p.executeSuspend { attempts.incrementAndGet(); delay(1000); "primary" }
    }
    assertThat(value).isEqualTo("primary")
    assertThat(attempts.get()).isEqualTo(1)
  }

  // ---------------------------------------------------------------- context

  @Test
  fun theAttemptsContextIsTheCurrentContextInsideTheAttempt() = runTest {
    val time = testScheduler.asTimeSource()
    val p = policy().withTimeSource(time).withAttemptTimeout(800.milliseconds)
    val (criticality, remaining) = withDeadline(2.seconds, time) {
      withCriticality(Criticality.SHEDDABLE_PLUS) {
        p.executeSuspend {
          delay(100) // suspends and resumes: the element puts the context back on the thread
          ResilienceContext.current().let { it.criticality() to it.remaining() }
        }
      }
    }
    assertThat(criticality).isEqualTo(Criticality.SHEDDABLE_PLUS)
    assertThat(remaining).`as`("the attempt's end: 800 ms after it started, 100 ms ago").contains(Duration.ofMillis(700))
    assertThat(ResilienceContext.current().hasDeadline()).`as`("restored when the coroutine left").isFalse()
  }

  @Test
  fun blockingCodeOnAnotherThreadSeesTheAttemptsContext() = runBlocking<Unit> {
    // the real clock: a pool thread and a virtual clock that runTest moves while it idles do not mix
    val p = Resilience.DEFAULT.withAttemptTimeout(Duration.ofSeconds(20)).withListener(events)
    val seen = withCriticality(Criticality.SHEDDABLE_PLUS) {
      p.executeSuspend {
        withContext(Dispatchers.IO) { // blocking code on a pool thread
          Thread.currentThread() to ResilienceContext.current().let { it.criticality() to it.remaining() }
        }
      }
    }
    val (thread, context) = seen
    assertThat(thread).isNotSameAs(Thread.currentThread())
    assertThat(context.first).isEqualTo(Criticality.SHEDDABLE_PLUS)
    assertThat(context.second).hasValueSatisfying {
      assertThat(it).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(20))
    }
    assertThat(ResilienceContext.current().hasCriticality()).isFalse()
  }

  @Test
  fun theAmbientDeadlineFromTheCoroutineBoundsTheCall() = runTest {
    val time = testScheduler.asTimeSource()
    val p = policy().withTimeSource(time).withoutAttemptTimeout()
    val thrown = runCatching {
      withDeadline(250.milliseconds, time) { p.executeSuspend<String> { awaitCancellation() } }
    }.exceptionOrNull()
    assertThat(thrown).isInstanceOf(DeadlineExceededException::class.java)
    assertThat(currentTime).isEqualTo(250)
  }

  @Test
  fun theAttemptKnowsItsNumberAndTimeout() = runTest {
    val p = policy().withAttemptTimeout(2.seconds).withDeadline(5.seconds)
    val calls = AtomicInteger()
    val seen = p.executeSuspend { attempt ->
      if (calls.incrementAndGet() == 1) throw IOException("once")
      attempt
    }
    assertThat(seen.number()).isEqualTo(2)
    assertThat(seen.timeout()).isEqualTo(Duration.ofSeconds(2))
  }
}
