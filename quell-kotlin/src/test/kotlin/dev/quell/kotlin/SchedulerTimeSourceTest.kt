package dev.quell.kotlin

import dev.quell.kotlin.test.asTimeSource
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/** The TestCoroutineScheduler adapter: its clock, its timers, their cancellation, its jitter. */
class SchedulerTimeSourceTest {

  @Test
  fun theClockIsTheSchedulersAndTimersRunWhenItReachesThem() = runTest {
    val time = testScheduler.asTimeSource()
    val fired = mutableListOf<Long>()
    time.schedule({ fired.add(currentTime) }, TimeUnit.MILLISECONDS.toNanos(300))
    time.schedule({ fired.add(currentTime) }, TimeUnit.MILLISECONDS.toNanos(100))
    time.schedule({ fired.add(currentTime) }, 1) // rounded up to the next millisecond, never early
    delay(1000)
    assertThat(fired).containsExactly(1L, 100L, 300L)
    assertThat(time.nanoTime()).isEqualTo(TimeUnit.SECONDS.toNanos(1))
  }

  @Test
  fun aCancelledTimerNeverRunsAndOnlyTheFirstCancelReportsIt() = runTest {
    val time = testScheduler.asTimeSource()
    var ran = false
    val timer = time.schedule({ ran = true }, TimeUnit.MILLISECONDS.toNanos(100))
    assertThat(timer.cancel()).isTrue()
    assertThat(timer.cancel()).isFalse()
    delay(200)
    assertThat(ran).isFalse()
    val done = time.schedule({}, 0)
    delay(1)
    assertThat(done.cancel()).`as`("it already ran").isFalse()
  }

  @Test
  fun jitterRepeatsForTheSameSeed() = runTest {
    val a = testScheduler.asTimeSource(7).random()
    val b = testScheduler.asTimeSource(7).random()
    assertThat(List(5) { a.nextLong() }).isEqualTo(List(5) { b.nextLong() })
  }
}
