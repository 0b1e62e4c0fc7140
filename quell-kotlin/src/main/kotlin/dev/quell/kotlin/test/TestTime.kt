package dev.quell.kotlin.test

import dev.quell.TimeSource
import java.util.Random
import java.util.concurrent.atomic.AtomicInteger
import java.util.random.RandomGenerator
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestCoroutineScheduler

/**
 * This test scheduler's virtual clock as Quell's [TimeSource], so that a policy's waits, timeouts,
 * deadlines and hedges run on the same clock as `runTest`'s `delay`: a minute of backoff passes in
 * milliseconds, the same way every time.
 *
 * ```
 * @Test fun retriesAfterBackoff() = runTest {
 *   val policy = Resilience.DEFAULT.withTimeSource(testScheduler.asTimeSource())
 *   policy.executeSuspend { flaky() }
 * }
 * ```
 *
 * The clock is the scheduler's `currentTime`, whole milliseconds, so timers are rounded up to the
 * next millisecond (never early). Timers run as coroutines on the scheduler, in its order. Jitter is
 * drawn from a [Random] seeded with [seed], so a run repeats exactly. [TimeSource.sleep] (used only
 * by synchronous calls) advances the scheduler; do not call it from a coroutine on that scheduler.
 *
 * In `dev.quell.kotlin.test`, the one place quell-kotlin uses kotlinx-coroutines-test, which is an
 * optional dependency: a test that calls this brings kotlinx-coroutines-test itself.
 */
public fun TestCoroutineScheduler.asTimeSource(seed: Long = 42): TimeSource = SchedulerTime(this, seed)

private class SchedulerTime(private val scheduler: TestCoroutineScheduler, seed: Long) : TimeSource {
  private val timers = CoroutineScope(StandardTestDispatcher(scheduler) + SupervisorJob())
  private val random = Random(seed)

  override fun nanoTime(): Long = scheduler.currentTime * NANOS_PER_MILLI

  override fun sleep(nanos: Long) {
    scheduler.advanceTimeBy(millisRoundedUp(nanos))
    scheduler.runCurrent()
  }

  override fun schedule(task: Runnable, delayNanos: Long): TimeSource.Scheduled {
    val timer = Timer(task)
    val millis = millisRoundedUp(delayNanos)
    timer.job = timers.launch {
      delay(millis)
      timer.fire()
    }
    return timer
  }

  override fun random(): RandomGenerator = random

  override fun toString(): String = "TestCoroutineScheduler time at ${scheduler.currentTime} ms"

  private class Timer(private val task: Runnable) : TimeSource.Scheduled {
    private val state = AtomicInteger() // 0 pending, 1 ran, 2 cancelled
    @Volatile var job: kotlinx.coroutines.Job? = null

    fun fire() {
      if (state.compareAndSet(0, 1)) {
        task.run()
      }
    }

    override fun cancel(): Boolean {
      if (!state.compareAndSet(0, 2)) {
        return false
      }
      job?.cancel()
      return true
    }
  }

  private companion object {
    const val NANOS_PER_MILLI = 1_000_000L

    fun millisRoundedUp(nanos: Long): Long =
      if (nanos <= 0) 0 else (nanos / NANOS_PER_MILLI) + (if (nanos % NANOS_PER_MILLI == 0L) 0 else 1)
  }
}
