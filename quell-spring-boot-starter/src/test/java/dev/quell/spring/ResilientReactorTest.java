package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.quell.CallRejectedException;
import dev.quell.CircuitBreaker;
import dev.quell.Criticality;
import dev.quell.ResilienceContext;
import dev.quell.TimeSource;
import dev.quell.reactor.QuellReactor;
import dev.quell.reactor.ReactorTime;
import dev.quell.spring.internal.EventLog;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * {@code @Resilient} on methods returning {@code Mono} and {@code Flux}, in a real Spring context, through
 * Spring's proxies and quell-reactor's operator: each attempt calls the method again and subscribes to what
 * it returned; the budget, the gates in their order, the fallback, the first-element rule of a stream,
 * cancellation and Reactor's Context. HTTP attempts are counted where they land, on a loopback server.
 */
@org.junit.jupiter.api.extension.ExtendWith(QuietContextFailures.class)
class ResilientReactorTest {
  private static final Downstream SERVER = Downstream.start();

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, QuellAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withUserConfiguration(Beans.class)
      .withPropertyValues(
          "quell.defaults.backoff.kind=none",
          "quell.policies.inventory.attempts=3",
          "quell.policies.inventory.transient-exceptions=" + WebClientResponseException.ServiceUnavailable.class.getName(),
          "quell.policies.feed.attempts=3");

  /** One token and no floor: the first failing call's retry spends it, the next retry is refused. */
  private static final String[] ONE_TOKEN = {
      "quell.policies.inventory.budget.fraction=0.1", "quell.policies.inventory.budget.minimum-per-second=0"};

  @AfterAll
  static void stop() {
    SERVER.close();
  }

  /** The inventory service over HTTP: a plain WebClient (no Quell filter), so every attempt is the method's. */
  public static class Inventory {
    private final WebClient web = WebClient.builder().baseUrl(SERVER.url()).clientConnector(new JdkClientHttpConnector()).build();
    private final AtomicInteger invocations = new AtomicInteger();
    private final AtomicInteger fallbacks = new AtomicInteger();

    // read through the proxy: its own fields are never set
    public int invocations() {
      return invocations.get();
    }

    public int fallbacks() {
      return fallbacks.get();
    }

    @Resilient(value = "inventory", fallback = "cached")
    public Mono<String> stock(String path) {
      invocations.incrementAndGet();
      return web.get().uri(path).retrieve().bodyToMono(String.class);
    }

    Mono<String> cached(String path, CallRejectedException refused) {   // a publisher, for a guard's refusal
      fallbacks.incrementAndGet();
      return Mono.just("cached (" + refused.reason() + ")");
    }

    String cached(String path, WebClientResponseException failed) {      // a plain value, when the attempts ran out
      fallbacks.incrementAndGet();
      return "stale (" + failed.getStatusCode().value() + ")";
    }
  }

  /** In-process publishers, to count invocations exactly and to fail where a test needs it. */
  public static class Feed {
    private final AtomicInteger invocations = new AtomicInteger();
    private final AtomicInteger fallbacks = new AtomicInteger();
    private final List<ResilienceContext> seen = new CopyOnWriteArrayList<>();

    public int invocations() {
      return invocations.get();
    }

    public int fallbacks() {
      return fallbacks.get();
    }

    public List<ResilienceContext> seen() {
      return seen;
    }

    /** Builds its Mono from a value computed at once: only calling the method again makes a new one. */
    @Resilient("feed")
    public Mono<String> eager() {
      int call = invocations.incrementAndGet();
      return call < 3 ? Mono.error(new IOException("reset " + call)) : Mono.just("answer " + call);
    }

    /** Fails before its first element the first time, then fails after two elements. */
    @Resilient(value = "feed", fallback = "quiet")
    public Flux<String> changes() {
      int call = invocations.incrementAndGet();
      return call == 1 ? Flux.error(new IOException("no stream"))
          : Flux.concat(Flux.just("a" + call, "b" + call), Flux.error(new IOException("reset after b" + call)));
    }

    /** Never gets to its first element. */
    @Resilient(value = "feed", fallback = "quiet")
    public Flux<String> silent() {
      invocations.incrementAndGet();
      return Flux.error(new IOException("no stream"));
    }

    Flux<String> quiet(IOException failure) {
      fallbacks.incrementAndGet();
      return Flux.just("from cache");
    }

    /** What the attempt sees of the deadline and criticality, on the thread and in Reactor's Context. */
    @Resilient("feed")
    public Mono<String> context() {
      seen.add(ResilienceContext.current());
      return QuellReactor.currentContext().map(c -> {
        seen.add(c);
        return c.criticality().name();
      });
    }

    /** Fails once, then answers: the wait between is the policy's backoff. */
    @Resilient("slow")
    public Mono<String> slow() {
      int call = invocations.incrementAndGet();
      return call == 1 ? Mono.error(new IOException("busy")) : Mono.just("answer " + call);
    }
  }

  /** The example of docs/spring-boot.md, verbatim between the markers (thePageShowsTheseExamplesVerbatim). */
  public static class DocsExample {
    private final WebClient web = WebClient.builder().baseUrl(SERVER.url()).clientConnector(new JdkClientHttpConnector()).build();
    private final Map<String, String> cache = Map.of("sku-1", "7 in stock (cached)");

    // --- begin docs/spring-boot.md: mono and flux
    @Resilient(value = "inventory", fallback = "cachedStock")
    public Mono<String> stock(String sku) {
      return web.get().uri("/stock/{sku}", sku).retrieve().bodyToMono(String.class);
    }

    Mono<String> cachedStock(String sku, CallRejectedException refused) {   // a Mono, or a plain String
      return Mono.justOrEmpty(cache.get(sku));
    }

    @Resilient("inventory")
    public Flux<String> changes(String sku) {
      return web.get().uri("/changes/{sku}", sku).retrieve().bodyToFlux(String.class);
    }
    // --- end
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Inventory inventory() {
      return new Inventory();
    }

    @Bean
    DocsExample docsExample() {
      return new DocsExample();
    }

    @Bean
    Feed feed() {
      return new Feed();
    }
  }

  static double count(MeterRegistry meters, String name, String... tags) {
    var counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void aMonoIsRetriedByResubscribingUntilItAnswers() {
    SERVER.script("/mono-ok", Downstream.Answer.status(503), Downstream.Answer.ok("42"));
    runner.run(context -> {
      Inventory inventory = context.getBean(Inventory.class);
      Mono<String> call = inventory.stock("/mono-ok");
      assertThat(inventory.invocations()).as("nothing runs before the subscription").isEqualTo(0);
      assertThat(SERVER.seen("/mono-ok")).isEmpty();

      assertThat(call.block(Duration.ofSeconds(10))).isEqualTo("42");
      assertThat(SERVER.seen("/mono-ok")).hasSize(2);
      assertThat(inventory.invocations()).as("the method is called again for each attempt").isEqualTo(2);
      assertThat(context.getBean(QuellPolicies.class).registry().inFlight().count()).as("the call left the in-flight count").isZero();
      assertThat(inventory.fallbacks()).isEqualTo(0);
    });
  }

  @Test
  void aMonoIsRetriedUnderTheBudgetAndTheFallbackAnswersTheRefusalWhichStaysInTheMeters() {
    SERVER.script("/mono-down", Downstream.Answer.status(503));
    runner.withPropertyValues(ONE_TOKEN).run(context -> {
      Inventory inventory = context.getBean(Inventory.class);
      MeterRegistry meters = context.getBean(MeterRegistry.class);

      // the first call's retry spends the one token; its second retry is refused
      assertThat(inventory.stock("/mono-down").block(Duration.ofSeconds(10))).isEqualTo("cached (BUDGET_EXHAUSTED)");
      assertThat(SERVER.seen("/mono-down")).hasSize(2);
      // no token: no retry at all
      assertThat(inventory.stock("/mono-down").block(Duration.ofSeconds(10))).isEqualTo("cached (BUDGET_EXHAUSTED)");
      assertThat(SERVER.seen("/mono-down")).hasSize(3);

      assertThat(count(meters, "quell.calls", "quell.policy", "inventory", "quell.outcome", "BUDGET_EXHAUSTED")).isEqualTo(2);
      assertThat(count(meters, "quell.fallbacks", "quell.policy", "inventory", "quell.outcome", "BUDGET_EXHAUSTED",
          "result", "succeeded")).isEqualTo(2);
      assertThat(context.getBean(EventLog.class).events("inventory")).extracting(EventLog.Entry::type)
          .containsSubsequence("RETRYING", "REJECTED_BY_BUDGET", "FALLBACK_SUCCEEDED", "REJECTED_BY_BUDGET", "FALLBACK_SUCCEEDED");
    });
  }

  @Test
  void whenTheAttemptsRunOutAPlainValueFallbackAnswersAndTheOutcomeIsTheCalls() {
    SERVER.script("/mono-exhausted", Downstream.Answer.status(503));
    runner.withPropertyValues("quell.policies.inventory.budget.kind=none").run(context -> {
      Inventory inventory = context.getBean(Inventory.class);
      MeterRegistry meters = context.getBean(MeterRegistry.class);

      assertThat(inventory.stock("/mono-exhausted").block(Duration.ofSeconds(10))).isEqualTo("stale (503)");
      assertThat(SERVER.seen("/mono-exhausted")).hasSize(3);
      assertThat(count(meters, "quell.calls", "quell.policy", "inventory", "quell.outcome", "ATTEMPTS_EXHAUSTED")).isEqualTo(1);
      assertThat(count(meters, "quell.fallbacks", "quell.policy", "inventory", "quell.outcome", "ATTEMPTS_EXHAUSTED",
          "result", "succeeded")).isEqualTo(1);
      EventLog.Entry fallback = context.getBean(EventLog.class).events("inventory").stream()
          .filter(e -> e.type().equals("FALLBACK_SUCCEEDED")).findFirst().orElseThrow();
      assertThat(fallback.attempt()).isEqualTo(3);
    });
  }

  @Test
  void theGatesAreAskedInTheirFixedOrderTheOpenBreakerBeforeTheEmptyBudget() {
    SERVER.script("/mono-breaker", Downstream.Answer.status(503));
    runner.withPropertyValues(ONE_TOKEN).withPropertyValues("quell.policies.inventory.breaker.consecutive-failures=2",
        "quell.policies.inventory.breaker.break-duration=1m").run(context -> {
      Inventory inventory = context.getBean(Inventory.class);
      // attempt 1 fails, its retry spends the token, attempt 2 fails and opens the breaker: the budget cannot
      // fund the next retry, and the gate that refuses it first is the breaker, which the fallback is told
      assertThat(inventory.stock("/mono-breaker").block(Duration.ofSeconds(10))).isEqualTo("cached (DEPENDENCY_UNAVAILABLE)");
      assertThat(SERVER.seen("/mono-breaker")).hasSize(2);
      assertThat(inventory.stock("/mono-breaker").block(Duration.ofSeconds(10))).isEqualTo("cached (DEPENDENCY_UNAVAILABLE)");
      assertThat(SERVER.seen("/mono-breaker")).as("an open breaker lets nothing through").hasSize(2);
    });
  }

  @Test
  void aCancelledSubscriptionCancelsTheAttemptChargesNothingAndRunsNoFallback() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    SERVER.script("/mono-held", Downstream.Answer.ok("late").heldUntil(release));
    runner.withPropertyValues(ONE_TOKEN).withPropertyValues("quell.policies.inventory.breaker.consecutive-failures=1",
        "quell.policies.inventory.breaker.break-duration=1m").run(context -> {
      Inventory inventory = context.getBean(Inventory.class);
      MeterRegistry meters = context.getBean(MeterRegistry.class);
      var policy = context.getBean(QuellPolicies.class).policy("inventory");
      double utilization = policy.budget().utilization();

      Disposable subscription = inventory.stock("/mono-held").subscribe(
          value -> { throw new AssertionError("a cancelled call answered " + value); },
          failure -> { throw new AssertionError("a cancelled call failed", failure); });
      SERVER.awaitSeen("/mono-held", 1, Duration.ofSeconds(10));
      subscription.dispose();
      release.countDown();

      await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
          assertThat(count(meters, "quell.calls", "quell.policy", "inventory", "quell.outcome", "CANCELLED")).isEqualTo(1));
      assertThat(inventory.fallbacks()).isEqualTo(0);
      assertThat(count(meters, "quell.fallbacks", "quell.policy", "inventory")).isEqualTo(0);
      // nothing charged: the breaker (one failure opens it) did not count the attempt, the budget is as it was
      assertThat(policy.breaker().orElseThrow().state()).isEqualTo(CircuitBreaker.State.CLOSED);
      assertThat(policy.budget().utilization()).isEqualTo(utilization);
      assertThat(SERVER.seen("/mono-held")).as("the cancelled call was not retried").hasSize(1);
      assertThat(context.getBean(QuellPolicies.class).registry().inFlight().count())
          .as("draining does not wait for a call that was cancelled").isZero();
    });
  }

  @Test
  void eachAttemptCallsTheMethodAgainSoAnEagerMonoIsNotReplayed() {
    runner.run(context -> {
      Feed feed = context.getBean(Feed.class);
      StepVerifier.create(feed.eager()).expectNext("answer 3").verifyComplete();
      assertThat(feed.invocations()).isEqualTo(3);
    });
  }

  @Test
  void aFluxIsRetriedOnlyBeforeItsFirstElementAndAFailureAfterItPassesThroughWithoutTheFallback() {
    runner.run(context -> {
      Feed feed = context.getBean(Feed.class);
      StepVerifier.create(feed.changes())
          .expectNext("a2", "b2")
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IOException.class).hasMessage("reset after b2"))
          .verify(Duration.ofSeconds(10));
      assertThat(feed.invocations()).as("retried once before the first element, never after").isEqualTo(2);
      assertThat(feed.fallbacks()).as("elements were delivered: the fallback does not append to them").isEqualTo(0);
    });
  }

  @Test
  void aFluxThatNeverGetsToItsFirstElementEndsInItsFallback() {
    runner.run(context -> {
      Feed feed = context.getBean(Feed.class);
      StepVerifier.create(feed.silent()).expectNext("from cache").verifyComplete();
      assertThat(feed.invocations()).isEqualTo(3);
      assertThat(feed.fallbacks()).isEqualTo(1);
    });
  }

  @Test
  void deadlineAndCriticalityTravelInReactorsContextIntoEachAttempt() {
    runner.run(context -> {
      Feed feed = context.getBean(Feed.class);
      ResilienceContext inbound = ResilienceContext.EMPTY.withDeadline(Duration.ofMillis(800))
          .withCriticality(Criticality.SHEDDABLE);
      StepVerifier.create(feed.context().contextWrite(QuellReactor.withContext(inbound)))
          .expectNext("SHEDDABLE")
          .verifyComplete();
      assertThat(feed.seen()).hasSize(2).allSatisfy(c -> {
        assertThat(c.criticality()).isEqualTo(Criticality.SHEDDABLE);
        assertThat(c.remaining().orElseThrow()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(800));
      });
    });
  }

  @Test
  void aMinuteOfBackoffPassesOnReactorsVirtualTime() {
    VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
    runner.withBean(TimeSource.class, () -> ReactorTime.of(scheduler))
        .withPropertyValues("quell.policies.slow.backoff.kind=constant", "quell.policies.slow.backoff.delay=1m",
            "quell.policies.slow.deadline=5m", "quell.policies.slow.attempt-timeout=5m")
        .run(context -> {
          Feed feed = context.getBean(Feed.class);
          StepVerifier.withVirtualTime(feed::slow, () -> scheduler, Long.MAX_VALUE)
              .expectSubscription()
              .expectNoEvent(Duration.ofSeconds(59))
              .then(() -> assertThat(feed.invocations()).isEqualTo(1))
              .thenAwait(Duration.ofSeconds(1))
              .expectNext("answer 2")
              .verifyComplete();
        });
  }

  @Test
  void thePagesExampleRetriesAndFallsBackAgainstARealServer() {
    SERVER.script("/stock/sku-1", Downstream.Answer.status(503));
    SERVER.script("/changes/sku-1", Downstream.Answer.status(503), Downstream.Answer.ok("12\n11\n10"));
    runner.withPropertyValues(ONE_TOKEN).run(context -> {
      DocsExample example = context.getBean(DocsExample.class);
      assertThat(example.stock("sku-1").block(Duration.ofSeconds(10))).isEqualTo("7 in stock (cached)");
      assertThat(SERVER.seen("/stock/sku-1")).hasSize(2);
    });
    runner.run(context -> {
      DocsExample example = context.getBean(DocsExample.class);
      assertThat(example.changes("sku-1").collectList().block(Duration.ofSeconds(10))).containsExactly("12", "11", "10");
      assertThat(SERVER.seen("/changes/sku-1")).hasSize(2);
    });
  }

  @Test
  void thePageShowsTheseExamplesVerbatim() throws IOException {
    String page = Files.readString(ConfigurationMetadataTest.docs());
    String section = page.substring(page.indexOf("#### Mono, Flux and Kotlin suspend functions"),
        page.indexOf("#### From Resilience4j's `@Retry` on a `Mono`"));
    String java = normalized(Files.readString(Path.of("src/test/java/dev/quell/spring/ResilientReactorTest.java")));
    String kotlin = normalized(Files.readString(Path.of("src/test/kotlin/dev/quell/spring/ResilientSuspendTest.kt")));
    assertThat(blocks(section, "java")).hasSize(1).allSatisfy(block -> assertThat(java)
        .as("docs/spring-boot.md shows this example, which this test does not run:%n%s", block).contains(normalized(block)));
    assertThat(blocks(section, "kotlin")).hasSize(1).allSatisfy(block -> assertThat(kotlin)
        .as("docs/spring-boot.md shows this example, which ResilientSuspendTest does not run:%n%s", block).contains(normalized(block)));
  }

  private static List<String> blocks(String markdown, String language) {
    List<String> blocks = new ArrayList<>();
    StringBuilder current = null;
    for (String line : markdown.split("\n", -1)) {
      if (current == null && line.trim().equals("```" + language)) {
        current = new StringBuilder();
      } else if (current != null && line.trim().equals("```")) {
        blocks.add(current.toString());
        current = null;
      } else if (current != null) {
        current.append(line).append('\n');
      }
    }
    return blocks;
  }

  private static String normalized(String text) {
    return text.lines().map(String::trim).filter(l -> !l.isEmpty()).collect(Collectors.joining("\n", "\n", "\n"));
  }
}
