package dev.quell.spring

import dev.quell.CallRejectedException
import dev.quell.Criticality
import dev.quell.ResilienceContext
import dev.quell.TimeSource
import dev.quell.kotlin.currentResilienceContext
import dev.quell.kotlin.test.asTimeSource
import dev.quell.kotlin.withCriticality
import dev.quell.kotlin.withDeadline
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import java.io.IOException
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.cancellation.CancellationException
import kotlin.time.Duration.Companion.milliseconds
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.future.await
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestCoroutineScheduler
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/**
 * `@Resilient` on Kotlin suspend functions, in a real Spring context, through Spring's proxies and
 * quell-kotlin's driver: each attempt calls the function again (its HTTP requests counted where they land,
 * on a loopback server), the budget and the fallback (a suspend function or a plain one), cancellation that
 * stays the caller's, deadline and criticality from the coroutine context, and a minute of backoff on
 * kotlinx-coroutines-test's virtual clock.
 */
class ResilientSuspendTest {
  companion object {
    private val SERVER: Downstream = Downstream.start()

    @JvmStatic
    @AfterAll
    fun stop() = SERVER.close()

    /** One token and no floor: the first failing call's retry spends it, the next retry is refused. */
    private val ONE_TOKEN = arrayOf("quell.policies.prices.budget.fraction=0.1", "quell.policies.prices.budget.minimum-per-second=0")
  }

  private val runner = ApplicationContextRunner()
    .withConfiguration(AutoConfigurations.of(AopAutoConfiguration::class.java, QuellAutoConfiguration::class.java))
    .withBean(MeterRegistry::class.java, { SimpleMeterRegistry() })
    .withUserConfiguration(Beans::class.java)
    .withPropertyValues("quell.defaults.backoff.kind=none", "quell.policies.prices.attempts=3")

  /** A price service over HTTP; open, so that Spring's class proxy can stand in for it. */
  open class Prices {
    private val http: HttpClient = HttpClient.newHttpClient()
    private val invocations = AtomicInteger()
    private val fallbacks = AtomicInteger()
    private val seen = java.util.concurrent.CopyOnWriteArrayList<ResilienceContext>()

    open fun invocations(): Int = invocations.get()
    open fun fallbacks(): Int = fallbacks.get()
    open fun seen(): List<ResilienceContext> = seen

    @Resilient(value = "prices", fallback = "cached")
    open suspend fun price(path: String): String {
      invocations.incrementAndGet()
      val response = http.sendAsync(HttpRequest.newBuilder(URI.create(SERVER.url() + path)).build(),
        HttpResponse.BodyHandlers.ofString()).await()
      if (response.statusCode() >= 500) {
        throw IOException("status ${response.statusCode()}")
      }
      return response.body()
    }

    /** A suspend fallback, for a guard's refusal. */
    private suspend fun cached(path: String, refused: CallRejectedException): String {
      fallbacks.incrementAndGet()
      kotlinx.coroutines.yield()
      return "cached (${refused.reason()})"
    }

    /** A plain fallback, when the attempts ran out. */
    private fun cached(path: String, failed: IOException): String {
      fallbacks.incrementAndGet()
      return "stale (${failed.message})"
    }

    /** Gives up by throwing a CancellationException of its own. */
    @Resilient(value = "prices", fallback = "anything")
    open suspend fun givesUp(): String {
      invocations.incrementAndGet()
      throw CancellationException("gave up")
    }

    private fun anything(failure: Throwable): String {
      fallbacks.incrementAndGet()
      return "fallback for $failure"
    }

    @Resilient("prices")
    open suspend fun context(): String {
      seen.add(currentResilienceContext())
      seen.add(ResilienceContext.current()) // what blocking code called from here sees
      return currentResilienceContext().criticality().name
    }

    @Resilient("prices")
    open suspend fun touch() {
      invocations.incrementAndGet()
    }

    /** Fails once, then answers: the wait between is the policy's backoff. */
    @Resilient("slow")
    open suspend fun slow(): String {
      val call = invocations.incrementAndGet()
      if (call == 1) {
        throw IOException("busy")
      }
      return "answer $call"
    }
  }

  /** What the page's example calls: a price over HTTP, from the loopback server. */
  class PriceClient {
    private val http: HttpClient = HttpClient.newHttpClient()

    suspend fun price(sku: String): String {
      val response = http.sendAsync(HttpRequest.newBuilder(URI.create(SERVER.url() + "/price/" + sku)).build(),
        HttpResponse.BodyHandlers.ofString()).await()
      if (response.statusCode() >= 500) {
        throw IOException("status ${response.statusCode()}")
      }
      return response.body()
    }
  }

  /** The example of docs/spring-boot.md, verbatim between the markers (ResilientReactorTest checks the page). */
  open class DocsPrices(private val client: PriceClient, private val cache: Map<String, String>) {
    // --- begin docs/spring-boot.md: suspend
    @Resilient(value = "prices", fallback = "cachedPrice")
    open suspend fun price(sku: String): String = client.price(sku)

    private suspend fun cachedPrice(sku: String, refused: CallRejectedException): String = cache.getValue(sku)
    // --- end
  }

  @Configuration(proxyBeanMethods = false)
  open class Beans {
    @Bean
    open fun prices(): Prices = Prices()

    @Bean
    open fun docsPrices(): DocsPrices = DocsPrices(PriceClient(), mapOf("sku-1" to "9.99 (cached)"))
  }

  private fun count(meters: MeterRegistry, name: String, vararg tags: String): Double =
    meters.find(name).tags(*tags).counter()?.count() ?: 0.0

  @Test
  fun aSuspendFunctionIsCalledAgainForEachAttempt() {
    SERVER.script("/suspend-ok", Downstream.Answer.status(503), Downstream.Answer.status(502), Downstream.Answer.ok("42"))
    runner.run { context ->
      val prices = context.getBean(Prices::class.java)
      assertThat(runBlocking { prices.price("/suspend-ok") }).isEqualTo("42")
      assertThat(SERVER.seen("/suspend-ok")).hasSize(3)
      assertThat(prices.invocations()).isEqualTo(3)
      assertThat(prices.fallbacks()).isZero()
      runBlocking { prices.touch() } // a function returning Unit
      assertThat(prices.invocations()).isEqualTo(4)
    }
  }

  @Test
  fun retriesAreFundedByTheBudgetAndASuspendFallbackAnswersTheRefusal() {
    SERVER.script("/suspend-down", Downstream.Answer.status(503))
    runner.withPropertyValues(*ONE_TOKEN).run { context ->
      val prices = context.getBean(Prices::class.java)
      val meters = context.getBean(MeterRegistry::class.java)
      assertThat(runBlocking { prices.price("/suspend-down") }).isEqualTo("cached (BUDGET_EXHAUSTED)")
      assertThat(SERVER.seen("/suspend-down")).hasSize(2)
      assertThat(runBlocking { prices.price("/suspend-down") }).isEqualTo("cached (BUDGET_EXHAUSTED)")
      assertThat(SERVER.seen("/suspend-down")).hasSize(3)
      assertThat(count(meters, "quell.calls", "quell.policy", "prices", "quell.outcome", "BUDGET_EXHAUSTED")).isEqualTo(2.0)
      assertThat(count(meters, "quell.fallbacks", "quell.policy", "prices", "quell.outcome", "BUDGET_EXHAUSTED",
        "result", "succeeded")).isEqualTo(2.0)
    }
  }

  @Test
  fun whenTheAttemptsRunOutAPlainFallbackAnswers() {
    SERVER.script("/suspend-exhausted", Downstream.Answer.status(503))
    runner.run { context ->
      val prices = context.getBean(Prices::class.java)
      assertThat(runBlocking { prices.price("/suspend-exhausted") }).isEqualTo("stale (status 503)")
      assertThat(SERVER.seen("/suspend-exhausted")).hasSize(3)
      assertThat(count(context.getBean(MeterRegistry::class.java), "quell.fallbacks", "quell.policy", "prices",
        "quell.outcome", "ATTEMPTS_EXHAUSTED", "result", "succeeded")).isEqualTo(1.0)
    }
  }

  @Test
  fun cancellingTheCallerCancelsTheAttemptRetriesNothingAndRunsNoFallback() {
    val release = CountDownLatch(1)
    SERVER.script("/suspend-held", Downstream.Answer.ok("late").heldUntil(release))
    runner.withPropertyValues(*ONE_TOKEN).withPropertyValues("quell.policies.prices.breaker.consecutive-failures=1").run { context ->
      val prices = context.getBean(Prices::class.java)
      val meters = context.getBean(MeterRegistry::class.java)
      var caught: Throwable? = null
      runBlocking {
        val caller = launch(Dispatchers.Default, start = CoroutineStart.UNDISPATCHED) {
          try {
            prices.price("/suspend-held")
          } catch (e: CancellationException) {
            caught = e
            throw e
          }
        }
        withContext(Dispatchers.IO) { SERVER.awaitSeen("/suspend-held", 1, Duration.ofSeconds(10)) }
        caller.cancel()
        caller.join()
      }
      release.countDown()
      assertThat(caught).isInstanceOf(CancellationException::class.java)
      assertThat(SERVER.seen("/suspend-held")).`as`("not retried").hasSize(1)
      // the caller is back as soon as it is cancelled; the call's end is recorded when its attempt has stopped
      await().atMost(Duration.ofSeconds(10)).untilAsserted {
        assertThat(count(meters, "quell.calls", "quell.policy", "prices", "quell.outcome", "CANCELLED")).isEqualTo(1.0)
      }
      assertThat(prices.fallbacks()).isZero()
      val policy = context.getBean(QuellPolicies::class.java).policy("prices")
      assertThat(policy.breaker().orElseThrow().state().name).`as`("the breaker did not count it").isEqualTo("CLOSED")
      assertThat(context.getBean(QuellPolicies::class.java).registry().inFlight().count())
        .`as`("draining does not wait for a call that was cancelled").isZero()
    }
  }

  @Test
  fun aCancellationExceptionTheFunctionThrowsIsNeitherRetriedNorSwallowedNorAFallbacksBusiness() {
    runner.run { context ->
      val prices = context.getBean(Prices::class.java)
      assertThatThrownBy { runBlocking { prices.givesUp() } }
        .isInstanceOf(CancellationException::class.java).hasMessage("gave up")
      assertThat(prices.invocations()).isEqualTo(1)
      assertThat(prices.fallbacks()).isZero()
    }
  }

  @Test
  fun deadlineAndCriticalityComeFromTheCoroutineContextIntoEachAttempt() {
    runner.run { context ->
      val prices = context.getBean(Prices::class.java)
      val answer = runBlocking {
        withCriticality(Criticality.SHEDDABLE) { withDeadline(800.milliseconds) { prices.context() } }
      }
      assertThat(answer).isEqualTo("SHEDDABLE")
      assertThat(prices.seen()).hasSize(2).allSatisfy { c ->
        assertThat(c.criticality()).isEqualTo(Criticality.SHEDDABLE)
        assertThat(c.remaining().orElseThrow()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(800))
      }
    }
  }

  @Test
  fun aMinuteOfBackoffPassesOnTheTestSchedulersVirtualTime() {
    val scheduler = TestCoroutineScheduler()
    runner.withBean(TimeSource::class.java, { scheduler.asTimeSource() })
      .withPropertyValues("quell.policies.slow.backoff.kind=constant", "quell.policies.slow.backoff.delay=1m",
        "quell.policies.slow.deadline=5m", "quell.policies.slow.attempt-timeout=5m")
      .run { context ->
        val prices = context.getBean(Prices::class.java)
        runTest(StandardTestDispatcher(scheduler)) {
          assertThat(prices.slow()).isEqualTo("answer 2")
          assertThat(currentTime).isEqualTo(60_000)
        }
      }
  }

  @Test
  fun thePagesExampleRetriesAndFallsBackAgainstARealServer() {
    SERVER.script("/price/sku-1", Downstream.Answer.status(503))
    runner.withPropertyValues(*ONE_TOKEN).run { context ->
      val prices = context.getBean(DocsPrices::class.java)
      assertThat(runBlocking { prices.price("sku-1") }).isEqualTo("9.99 (cached)")
      assertThat(SERVER.seen("/price/sku-1")).hasSize(2)
    }
  }
}
