package dev.quell.kotlin

import dev.quell.Backoff
import dev.quell.Resilience
import dev.quell.ResilienceConfigurationException
import java.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test

/** The DSL and the kotlin.time overloads build exactly the policies the Java API builds. */
class ConfigurationTest {

  @Test
  fun theDslBuildsTheSamePolicyAsTheJavaApi() {
    val dsl = resilience {
      name = "inventory"
      attempts = 4
      deadline = 2.seconds
      attemptTimeout = 500.milliseconds
      backoff = exponentialBackoff(transientBase = 50.milliseconds)
      hedge(after = 80.milliseconds, maxHedges = 2)
    }
    val java = Resilience.DEFAULT.withName("inventory").withAttempts(4).withDeadline(Duration.ofSeconds(2))
      .withAttemptTimeout(Duration.ofMillis(500))
      .withBackoff(Backoff.exponential(Duration.ofMillis(50), Duration.ofSeconds(1), 2.0, Duration.ofSeconds(30)))
      .withHedge(dev.quell.Hedge.after(Duration.ofMillis(80)).withMaxHedges(2))
    assertThat(dsl).isEqualTo(java)
  }

  @Test
  fun kotlinDurationsAreAcceptedWhereJavaTakesJavaTimeDurations() {
    val p = Resilience.DEFAULT.withDeadline(3.seconds).withAttemptTimeout(250.milliseconds)
    assertThat(p.deadline()).contains(Duration.ofSeconds(3))
    assertThat(p.attemptTimeout()).contains(Duration.ofMillis(250))
    assertThat(p.withDeadline(kotlin.time.Duration.INFINITE).deadline()).isEmpty()
    assertThat(p.withHedge(10.milliseconds).hedge().flatMap { it.delay() }).contains(Duration.ofMillis(10))
    assertThat(constantBackoff(1.seconds)).isEqualTo(Backoff.constant(Duration.ofSeconds(1)))
  }

  @Test
  fun invalidSettingsThrowTheCoresConfigurationExceptionNamingTheParameter() {
    assertThatThrownBy { resilience { attempts = 0 } }
      .isInstanceOf(ResilienceConfigurationException::class.java)
      .hasMessageContaining("attempts").hasMessageContaining("0")
    assertThatThrownBy { resilience { deadline = (-1).seconds } }
      .isInstanceOf(ResilienceConfigurationException::class.java)
      .hasMessageContaining("deadline")
  }
}
