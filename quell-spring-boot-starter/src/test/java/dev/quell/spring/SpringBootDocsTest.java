package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The examples of docs/spring-boot.md that are not already in other tests, run in a real context. */
class SpringBootDocsTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, QuellAutoConfiguration.class))
      .withUserConfiguration(Beans.class)
      .withPropertyValues("quell.defaults.backoff.kind=none", "quell.policies.inventory.attempts=3",
          "quell.policies.pricing.attempts=4");

  /** What the inventory client does; fails twice, then answers. */
  static final class InventoryClient {
    final AtomicInteger calls = new AtomicInteger();

    String stock(String sku) throws IOException {
      if (calls.incrementAndGet() < 3) {
        throw new IOException("connection reset");
      }
      return sku + ": 7 in stock";
    }

    CompletableFuture<String> stockAsync(String sku) {
      try {
        return CompletableFuture.completedFuture(stock(sku));
      } catch (IOException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
  }

  public static class CatalogService {
    private final InventoryClient client;

    public CatalogService(InventoryClient client) {
      this.client = client;
    }

    @Resilient("inventory")
    public String stock(String sku) throws IOException {
      return client.stock(sku);
    }

    @Resilient("inventory")
    public CompletableFuture<String> stockLater(String sku) {
      return client.stockAsync(sku);
    }
  }

  static class StockService {
    private final Resilience inventory;
    private final InventoryClient client;

    StockService(@Qualifier("inventory") Resilience inventory, InventoryClient client) {
      this.inventory = inventory;
      this.client = client;
    }

    String stock(String sku) throws Exception {
      return inventory.execute(() -> client.stock(sku));
    }
  }

  /** A policy injected by its plain name: the field's name is the policy's. */
  static class ByName {
    @org.springframework.beans.factory.annotation.Autowired
    Resilience inventory;

    @org.springframework.beans.factory.annotation.Autowired
    Resilience pricing;
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    InventoryClient inventoryClient() {
      return new InventoryClient();
    }

    @Bean
    CatalogService catalogService(InventoryClient client) {
      return new CatalogService(client);
    }

    @Bean
    ByName byName() {
      return new ByName();
    }

    @Bean
    StockService stockService(@Qualifier("inventory") Resilience inventory, InventoryClient client) {
      return new StockService(inventory, client);
    }
  }

  @Test
  void aPolicyInjectedByItsNameRetriesAsConfigured() {
    runner.run(context -> {
      assertThat(context.getBean(StockService.class).stock("sku-1")).isEqualTo("sku-1: 7 in stock");
      assertThat(context.getBean(InventoryClient.class).calls).hasValue(3);
    });
  }

  @Test
  void aPolicyLookedUpByNameIsTheSameObject() {
    runner.run(context -> {
      QuellPolicies policies = context.getBean(QuellPolicies.class);
      Resilience inventory = policies.policy("inventory");
      assertThat(inventory).isSameAs(context.getBean("quell.policy.inventory"));
      assertThat(inventory.attempts()).isEqualTo(3);
    });
  }

  @Test
  void aPolicyIsInjectedByItsPlainName() {
    runner.run(context -> {
      ByName byName = context.getBean(ByName.class);
      assertThat(byName.inventory).isSameAs(context.getBean(QuellPolicies.class).policy("inventory"));
      assertThat(byName.pricing.attempts()).isEqualTo(4);
    });
  }

  @Test
  void annotatedMethodsAreCalledAgainForEachAttempt() {
    runner.run(context -> {
      CatalogService catalog = context.getBean(CatalogService.class);
      InventoryClient client = context.getBean(InventoryClient.class);
      assertThat(catalog.stock("sku-2")).isEqualTo("sku-2: 7 in stock");
      assertThat(client.calls).hasValue(3);
      client.calls.set(0);
      assertThat(catalog.stockLater("sku-3").get(30, TimeUnit.SECONDS)).isEqualTo("sku-3: 7 in stock");
      assertThat(client.calls).hasValue(3);
    });
  }
}
