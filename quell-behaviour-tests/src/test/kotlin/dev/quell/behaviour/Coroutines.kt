package dev.quell.behaviour

import dev.quell.Resilience
import dev.quell.kotlin.executeSuspend
import dev.quell.kotlin.runSuspend
import java.time.Duration
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestCoroutineScheduler
import kotlinx.coroutines.test.advanceUntilIdle
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest

/**
 * The Kotlin driver for the Java behaviour tests: one scripted call through `executeSuspend` (or
 * `runSuspend`) inside `runTest`, on [scheduler]'s virtual clock, which is also the policy's
 * (`scheduler.asTimeSource()`, made by the caller so that budgets can be made on it first).
 */
internal object Coroutines {
  @JvmStatic
  fun call(
    scheduler: TestCoroutineScheduler,
    policy: Resilience,
    outcome: Boolean,
    script: Script,
    cancelAtMillis: Long,
    cancelFirst: Boolean,
    r: Ran,
  ) = runTest(StandardTestDispatcher(scheduler)) {
    val start = currentTime
    val call = CompletableDeferred<Job>()
    if (cancelAtMillis >= 0 && cancelFirst) {
      launch {
        delay(cancelAtMillis)
        call.await().cancel()
      }
    }
    val job = launch {
      try {
        if (outcome) {
          val o = policy.runSuspend<Any> { step(script) }
          r.value = o.value()
          r.thrown = o.failure().orElse(null)
          r.reason = o.stopReason()
        } else {
          r.value = policy.executeSuspend { step(script) }
        }
      } catch (e: CancellationException) {
        r.thrown = e
        throw e
      } catch (e: Throwable) {
        r.thrown = e
      } finally {
        r.signals++
        r.elapsed = Duration.ofMillis(currentTime - start)
      }
    }
    call.complete(job)
    if (cancelAtMillis >= 0 && !cancelFirst) {
      runCurrent() // the call is under way: what it set up now comes first
      launch {
        delay(cancelAtMillis - (currentTime - start))
        job.cancel()
      }
    }
    advanceUntilIdle()
  }

  /** Many calls at once on one scheduler: [calls] coroutines, each running [perCall] with its own script. */
  @JvmStatic
  fun many(scheduler: TestCoroutineScheduler, calls: Int, perCall: java.util.function.IntFunction<CallOf>) =
    runTest(StandardTestDispatcher(scheduler)) {
      repeat(calls) { i ->
        val c = perCall.apply(i)
        launch {
          try {
            if (c.outcome) {
              val o = c.policy.runSuspend<Any> { step(c.script) }
              c.ran.value = o.value()
              c.ran.thrown = o.failure().orElse(null)
              c.ran.reason = o.stopReason()
            } else {
              c.ran.value = c.policy.executeSuspend { step(c.script) }
            }
          } catch (e: CancellationException) {
            c.ran.thrown = e
            throw e
          } catch (e: Throwable) {
            c.ran.thrown = e
          } finally {
            c.ran.signals++
            c.ran.attempts = c.script.attempts()
          }
        }
      }
      advanceUntilIdle()
    }

  /** One of many calls: its policy, its dependency, and where to put what it did. */
  class CallOf(val policy: Resilience, val outcome: Boolean, val script: Script, val ran: Ran)

  private suspend fun step(script: Script): Any? {
    val s = script.next()
    if (s.latencyMillis() > 0) {
      try {
        delay(s.latencyMillis())
      } catch (e: CancellationException) {
        script.cancelled.incrementAndGet()
        throw e
      }
    }
    s.failure?.let { throw it }
    return s.value
  }
}
