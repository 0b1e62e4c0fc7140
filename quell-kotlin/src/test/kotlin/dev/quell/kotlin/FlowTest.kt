package dev.quell.kotlin

import dev.quell.Backoff
import dev.quell.CallRejectedException
import dev.quell.Resilience
import dev.quell.ResilienceEvent
import dev.quell.RetryBudget
import dev.quell.StopReason
import dev.quell.kotlin.test.asTimeSource
import dev.quell.test.EventRecorder
import java.io.IOException
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.catch
import kotlinx.coroutines.flow.emptyFlow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/** `Flow.resilient`: retried under the policy before the first element, passed through after it. */
class FlowTest {
  private val events = EventRecorder()

  private fun TestScope.policy(): Resilience = Resilience.DEFAULT
    .withBackoff(Backoff.constant(Duration.ofMillis(100)))
    .withBudget(RetryBudget.NONE)
    .withListener(events)
    .withTimeSource(testScheduler.asTimeSource())

  @Test
  fun aFailureBeforeTheFirstElementIsRetriedByCollectingAgain() = runTest {
    val collections = AtomicInteger()
    val source = flow {
      delay(10)
      if (collections.incrementAndGet() == 1) throw IOException("connect failed")
      emit(1); emit(2); emit(3)
    }
    assertThat(source.resilient(policy()).toList()).containsExactly(1, 2, 3)
    assertThat(collections.get()).isEqualTo(2)
    assertThat(currentTime).isEqualTo(10 + 100 + 10)
    assertThat(events.terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED)
  }

  @Test
  fun aFailureAfterTheFirstElementPassesThroughAndIsNeverRetried() = runTest {
    val collections = AtomicInteger()
    val failure = IOException("stream broke")
    val source = flow {
      collections.incrementAndGet()
      emit(1)
      emit(2)
      throw failure
    }
    val seen = mutableListOf<Int>()
    var caught: Throwable? = null
    source.resilient(policy()).catch { caught = it }.collect { seen.add(it) }
    assertThat(seen).containsExactly(1, 2)
    assertThat(caught).isSameAs(failure)
    assertThat(collections.get()).isEqualTo(1)
    assertThat(events.terminals()).hasSize(1)
    assertThat(events.terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED)
  }

  @Test
  fun aFlowThatNeverEmitsTimesOutAndIsRetriedLikeAnyAttempt() = runTest {
    val collections = AtomicInteger()
    val source = flow {
      if (collections.incrementAndGet() < 3) awaitCancellation()
      emit("late")
    }
    val p = policy().withAttemptTimeout(500.milliseconds)
    assertThat(source.resilient(p).toList()).containsExactly("late")
    assertThat(collections.get()).isEqualTo(3)
    assertThat(currentTime).isEqualTo(2 * 500 + 2 * 100)
  }

  @Test
  fun anEmptyFlowIsAnAnswerAndCompletes() = runTest {
    assertThat(emptyFlow<Int>().resilient(policy()).toList()).isEmpty()
    assertThat(events.terminal().type()).isEqualTo(ResilienceEvent.Type.SUCCEEDED)
  }

  @Test
  fun aRefusedRetryFailsTheFlowWithTheCoresRejection() = runTest {
    val time = testScheduler.asTimeSource()
    val budget = RetryBudget.of(0.1, 0.0, time)
    while (budget.trySpend()) { /* empty */ }
    val source = flow<Int> { throw IOException("down") }
    val thrown = runCatching { source.resilient(policy().withTimeSource(time).withBudget(budget)).toList() }
    assertThat(thrown.exceptionOrNull()).isInstanceOf(CallRejectedException::class.java)
    assertThat((thrown.exceptionOrNull() as CallRejectedException).reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED)
  }

  @Test
  fun aCollectorThatStopsEarlyCancelsTheStreamAndChargesNothing() = runTest {
    val budget = RetryBudget.feedback(10, 0.1)
    val source = flow {
      var i = 0
      while (true) {
        emit(i++)
        delay(10)
      }
    }
    assertThat(source.resilient(policy().withBudget(budget)).take(3).toList()).containsExactly(0, 1, 2)
    assertThat(budget.tokens()).isEqualTo(10.0)
    assertThat(events.terminals()).hasSize(1)
  }

  @Test
  fun aFirstElementTheClassifierRejectsIsRetriedAndNeverPassedOn() = runTest {
    val busy = dev.quell.Classifier.rules().onResult({ it == "busy" }, dev.quell.Verdict.TRANSIENT)
    val collections = AtomicInteger()
    val source = flow {
      if (collections.incrementAndGet() == 1) emit("busy") else emit("ok")
      emit("more")
    }
    assertThat(source.resilient(policy().withClassifier(busy)).toList()).containsExactly("ok", "more")
    assertThat(collections.get()).isEqualTo(2)
  }

  @Test
  fun aHedgedFlowStreamsTheWinnerOnlyAndCancelsTheLoser() = runTest {
    val loserCancelled = AtomicInteger()
    val collections = AtomicInteger()
    val source = flow {
      val n = collections.incrementAndGet()
      try {
        delay(if (n == 1) 1000 else 50)
        emit("first-$n")
        emit("second-$n")
      } catch (e: kotlin.coroutines.cancellation.CancellationException) {
        loserCancelled.incrementAndGet()
        throw e
      }
    }
    val p = policy().withHedge(100.milliseconds)
    assertThat(source.resilient(p).toList()).containsExactly("first-2", "second-2")
    assertThat(loserCancelled.get()).isEqualTo(1)
    assertThat(currentTime).isEqualTo(150)
  }
}
