package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.CallRejectedException;
import dev.quell.spring.internal.EventLog;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @Resilient(fallback = ...)}, Resilience4j's {@code fallbackMethod}: the fallback answers a failed
 * call, the narrowest one that takes the failure wins, and the call's real outcome — a budget refusal
 * above all — stays in the meters and the events beside the fallback's own.
 */
@org.junit.jupiter.api.extension.ExtendWith(QuietContextFailures.class)
class ResilientFallbackTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, QuellAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withUserConfiguration(Beans.class)
      .withPropertyValues(
          "quell.defaults.backoff.kind=none",
          "quell.policies.inventory.attempts=3",
          // one token and no floor: the first failing call's retry spends it, the second is refused
          "quell.policies.inventory.budget.fraction=0.1",
          "quell.policies.inventory.budget.minimum-per-second=0");

  /** A dependency that fails as it is told to. */
  public static class Dependency {
    final AtomicInteger calls = new AtomicInteger();
    volatile Exception failure = new IOException("inventory is down");

    String stock(String sku) throws Exception {
      calls.incrementAndGet();
      throw failure;
    }
  }

  /** The example of docs/spring-boot.md, compiled here (the page's block must stand in a test source). */
  public static class DocsExample {
    /** The page's client. */
    public interface InventoryClient {
      String stock(String sku) throws IOException;
    }

    private final InventoryClient client;
    private final java.util.Map<String, String> cache;

    public DocsExample(InventoryClient client, java.util.Map<String, String> cache) {
      this.client = client;
      this.cache = cache;
    }

    @Resilient(value = "inventory", fallback = "cachedStock")
    public String stock(String sku) throws IOException {
      return client.stock(sku);
    }

    String cachedStock(String sku, CallRejectedException refused) {   // a guard said no (budget, breaker, limit)
      return cache.get(sku);
    }

    String cachedStock(String sku, IOException failed) {              // the attempts ran out on an IOException
      return cache.get(sku);
    }
  }

  public static class Catalog {
    private final Dependency dependency;

    public Catalog(Dependency dependency) {
      this.dependency = dependency;
    }

    @Resilient(value = "inventory", fallback = "cached")
    public String stock(String sku) throws Exception {
      return dependency.stock(sku);
    }

    String cached(String sku, CallRejectedException refused) {
      return "cached " + sku + " (" + refused.reason() + ")";
    }

    String cached(String sku, IOException failure) {
      return "stale " + sku + " (" + failure.getMessage() + ")";
    }

    String cached(String sku, Throwable failure) {
      if (failure instanceof IllegalArgumentException) {
        throw new IllegalStateException("no cache for " + sku);
      }
      return "unknown " + sku;
    }

    @Resilient(value = "inventory", fallback = "later")
    public CompletableFuture<String> stockLater(String sku) {
      try {
        return CompletableFuture.completedFuture(dependency.stock(sku));
      } catch (Exception e) {
        return CompletableFuture.failedFuture(e);
      }
    }

    CompletableFuture<String> later(String sku) {
      return CompletableFuture.completedFuture("later " + sku);
    }
  }

  public static class Broken {
    @Resilient(value = "inventory", fallback = "missing")
    public String stock(String sku) {
      return sku;
    }

    String missing(int wrong) {
      return "never";
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Dependency dependency() {
      return new Dependency();
    }

    @Bean
    Catalog catalog(Dependency dependency) {
      return new Catalog(dependency);
    }
  }

  static double count(MeterRegistry meters, String name, String... tags) {
    var counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void aFallbackAnswersButTheBudgetRefusalStaysInTheMetersAndEvents() throws Exception {
    runner.run(context -> {
      Catalog catalog = context.getBean(Catalog.class);
      Dependency dependency = context.getBean(Dependency.class);
      MeterRegistry meters = context.getBean(MeterRegistry.class);

      // the budget refused the second retry: the fallback for refusals answers
      assertThat(catalog.stock("sku-1")).isEqualTo("cached sku-1 (BUDGET_EXHAUSTED)");
      assertThat(dependency.calls).hasValue(2); // the second retry was refused: the bucket's one token is spent
      assertThat(catalog.stock("sku-2")).isEqualTo("cached sku-2 (BUDGET_EXHAUSTED)");
      assertThat(dependency.calls).hasValue(3); // no token: no retry at all

      assertThat(count(meters, "quell.calls", "quell.policy", "inventory", "quell.outcome", "BUDGET_EXHAUSTED")).isEqualTo(2);
      assertThat(count(meters, "quell.fallbacks", "quell.policy", "inventory", "quell.outcome", "BUDGET_EXHAUSTED",
          "result", "succeeded")).isEqualTo(2);
      assertThat(context.getBean(EventLog.class).events("inventory")).extracting(EventLog.Entry::type)
          .containsSubsequence("RETRYING", "REJECTED_BY_BUDGET", "FALLBACK_SUCCEEDED", "REJECTED_BY_BUDGET", "FALLBACK_SUCCEEDED");
    });
  }

  @Test
  void theNarrowestFallbackThatTakesTheFailureIsCalledAndWhatItThrowsComesOut() {
    runner.withPropertyValues("quell.policies.inventory.attempts=1").run(context -> {
      Catalog catalog = context.getBean(Catalog.class);
      Dependency dependency = context.getBean(Dependency.class);
      MeterRegistry meters = context.getBean(MeterRegistry.class);

      assertThat(catalog.stock("sku-0")).isEqualTo("stale sku-0 (inventory is down)"); // its attempt failed: no refusal
      dependency.failure = new IllegalStateException("odd");
      assertThat(catalog.stock("sku-3")).isEqualTo("unknown sku-3");

      dependency.failure = new IllegalArgumentException("bad sku");
      assertThatThrownBy(() -> catalog.stock("sku-4")).isInstanceOf(IllegalStateException.class).hasMessage("no cache for sku-4");
      assertThat(count(meters, "quell.fallbacks", "quell.policy", "inventory", "result", "failed")).isEqualTo(1);
      assertThat(context.getBean(EventLog.class).events("inventory")).extracting(EventLog.Entry::type)
          .endsWith("FALLBACK_FAILED");
    });
  }

  @Test
  void anAsynchronousMethodsFallbackCompletesTheFuture() {
    runner.run(context -> {
      Catalog catalog = context.getBean(Catalog.class);
      assertThat(catalog.stockLater("sku-5").get(30, TimeUnit.SECONDS)).isEqualTo("later sku-5");
      assertThat(count(context.getBean(MeterRegistry.class), "quell.fallbacks", "quell.policy", "inventory",
          "result", "succeeded")).isEqualTo(1);
    });
  }

  @Test
  void aFallbackThatCannotBeFoundStopsTheStartUpNamingWhatIsMissing() {
    runner.withBean(Broken.class).run(context -> {
      assertThat(context).hasFailed();
      assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(
          "@Resilient(fallback = \"missing\") on " + Broken.class.getName() + ".stock(): Broken has no method missing(String)"
              + " or missing(String, Throwable) returning String");
    });
  }
}
