package dev.quell.kotlin

import dev.quell.CallRejectedException
import dev.quell.Criticality
import dev.quell.Outcome
import dev.quell.Resilience
import dev.quell.ResilienceContext
import dev.quell.StopReason
import dev.quell.kotlin.test.asTimeSource
import java.io.IOException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/** The examples of docs/kotlin.md, compiled and run; each section of the page mirrors one test. */
class KotlinDocsExamplesTest {

  // a stand-in for a suspend client: fails the first call of each id, then answers
  private val failedOnce = HashSet<String>()
  private suspend fun fetchPrice(id: String): Int {
    delay(20)
    if (failedOnce.add(id)) throw IOException("connection reset")
    return 42
  }
  private val logged = mutableListOf<String>()
  private fun log(message: String) { logged += message }
  private fun blockingInventoryLookup(id: String): Int =
    ResilienceContext.current().remaining().map { if (it.isZero) 0 else 7 }.orElse(7) + id.length * 0

  @Test
  fun executeSuspend() = runTest {
    val time = testScheduler.asTimeSource()
    // --- docs: executeSuspend
    val prices = resilience {
      name = "prices"
      attempts = 3
      deadline = 2.seconds
      attemptTimeout = 500.milliseconds
      timeSource = time // tests only: the virtual clock of runTest
    }

    val price: Int = prices.executeSuspend { fetchPrice("sku-1") }
    // --- end
    assertThat(price).isEqualTo(42)
  }

  @Test
  fun runSuspend() = runTest {
    val prices = Resilience.DEFAULT.withName("prices").withTimeSource(testScheduler.asTimeSource())
    // --- docs: runSuspend
    val outcome: Outcome<Int> = prices.runSuspend { attempt ->
      if (attempt.isRetry) delay(10) // the attempt knows its number, timeout and time left
      fetchPrice("sku-2")
    }
    when (outcome.stopReason()) {
      StopReason.SUCCEEDED -> log("price ${outcome.value()} after ${outcome.attempts()} attempts")
      StopReason.BUDGET_EXHAUSTED -> log("the dependency is struggling; retry after ${outcome.retryAfter()}")
      else -> log("failed: ${outcome.failure()}")
    }
    // --- end
    assertThat(outcome.attempts()).isEqualTo(2)
    assertThat(logged).containsExactly("price 42 after 2 attempts")
  }

  @Test
  fun contextElement() = runTest {
    val time = testScheduler.asTimeSource()
    val inventory = Resilience.DEFAULT.withTimeSource(time)
    // --- docs: context
    val stock = withDeadline(800.milliseconds, time) {   // time: the real clock unless given
      withCriticality(Criticality.SHEDDABLE) {
        inventory.executeSuspend {
          // blocking code called from here sees ResilienceContext.current(): 800 ms, SHEDDABLE
          blockingInventoryLookup("sku-3")
        }
      }
    }
    // --- end
    assertThat(stock).isEqualTo(7)
  }

  @Test
  fun flows() = runTest {
    val time = testScheduler.asTimeSource()
    val calls = AtomicInteger()
    fun priceUpdates(): Flow<Int> = flow {
      if (calls.incrementAndGet() == 1) throw IOException("connect failed") // before the first element: retried
      emit(41); emit(42)
    }
    // --- docs: flow
    val updates: Flow<Int> = priceUpdates().resilient(Resilience.DEFAULT.withTimeSource(time))
    // --- end
    assertThat(updates.toList()).containsExactly(41, 42)
  }

  @Test
  fun virtualTime() = runTest {
    // --- docs: virtual time
    val policy = Resilience.DEFAULT
      .withDeadline(5.minutes)
      .withAttempts(4)
      .withBackoff(constantBackoff(20.seconds))
      .withTimeSource(testScheduler.asTimeSource())

    val outcome = policy.runSuspend<String> { throw IOException("down") }

    assertThat(outcome.attempts()).isEqualTo(4)
    assertThat(currentTime).isEqualTo(60_000) // a minute of backoff, in milliseconds of real time
    // --- end
  }

  @Test
  fun budgetRefusal() = runTest {
    val time = testScheduler.asTimeSource()
    val budget = dev.quell.RetryBudget.of(0.1, 0.0, time)
    while (budget.trySpend()) { /* a budget another call has spent */ }
    val policy = Resilience.DEFAULT.withBudget(budget).withTimeSource(time)
    // --- docs: refusal
    try {
      policy.executeSuspend { fetchPrice("sku-4") }
    } catch (e: CallRejectedException) {
      // the budget refused the retry: e.reason() == BUDGET_EXHAUSTED, e.retryAfter() says when to come back
      assertThat(e.reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED)
    }
    // --- end
  }
}
