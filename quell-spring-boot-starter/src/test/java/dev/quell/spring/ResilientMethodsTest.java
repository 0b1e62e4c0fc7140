package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.CallRejectedException;
import dev.quell.StopReason;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/** {@link Resilient} on plain and asynchronous methods of real beans, through Spring's proxies. */
@org.junit.jupiter.api.extension.ExtendWith(QuietContextFailures.class)
class ResilientMethodsTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, QuellAutoConfiguration.class))
      .withUserConfiguration(Beans.class)
      .withPropertyValues(
          "quell.defaults.backoff.kind=none",
          "quell.policies.inventory.attempts=3",
          "quell.policies.inventory.breaker.consecutive-failures=100");

  /** A service whose calls fail until the third. */
  public static class InventoryService {
    private final AtomicInteger calls = new AtomicInteger();
    private volatile int failUntil = 3;

    public int calls() {
      return calls.get();
    }

    public void failUntil(int call) {
      failUntil = call;
    }

    @Resilient("inventory")
    public String stock(String sku) throws IOException {
      if (calls.incrementAndGet() < failUntil) {
        throw new IOException("connection reset");
      }
      return sku + ": 42 in stock";
    }

    @Resilient("inventory")
    public CompletableFuture<String> stockLater(String sku) {
      if (calls.incrementAndGet() < failUntil) {
        return CompletableFuture.failedFuture(new IOException("connection reset"));
      }
      return CompletableFuture.completedFuture(sku + ": 42 in stock");
    }

    public String unguarded() throws IOException {
      calls.incrementAndGet();
      throw new IOException("not retried");
    }
  }

  /** Every public method of the class runs through the policy. */
  @Resilient("reports")
  public static class ReportService {
    private final AtomicInteger calls = new AtomicInteger();

    public int calls() {
      return calls.get();
    }

    public CompletionStage<String> monthly() {
      return calls.incrementAndGet() < 2
          ? CompletableFuture.failedFuture(new IOException("busy"))
          : CompletableFuture.completedFuture("report");
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    InventoryService inventoryService() {
      return new InventoryService();
    }

    @Bean
    ReportService reportService() {
      return new ReportService();
    }

    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Test
  void aPlainMethodIsCalledAgainForEachAttempt() {
    runner.run(context -> {
      InventoryService service = context.getBean(InventoryService.class);
      assertThat(service.stock("sku-1")).isEqualTo("sku-1: 42 in stock");
      assertThat(service.calls()).isEqualTo(3);
    });
  }

  @Test
  void yourExceptionComesOutUnchangedWhenTheAttemptsRunOut() {
    runner.run(context -> {
      InventoryService service = context.getBean(InventoryService.class);
      service.failUntil(Integer.MAX_VALUE);
      assertThatThrownBy(() -> service.stock("sku-1")).isExactlyInstanceOf(IOException.class).hasMessage("connection reset");
      assertThat(service.calls()).isEqualTo(3);
      assertThatThrownBy(service::unguarded).hasMessage("not retried");
      assertThat(service.calls()).isEqualTo(4);
    });
  }

  @Test
  void anAsynchronousMethodIsCalledAgainForANewStage() {
    runner.run(context -> {
      InventoryService service = context.getBean(InventoryService.class);
      assertThat(service.stockLater("sku-2").get(10, TimeUnit.SECONDS)).isEqualTo("sku-2: 42 in stock");
      assertThat(service.calls()).isEqualTo(3);
      ReportService reports = context.getBean(ReportService.class);
      assertThat(reports.monthly().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("report");
      assertThat(reports.calls()).isEqualTo(2);
    });
  }

  @Test
  void oneCallIsCountedOnceAndItsAttemptsAreWhatTheBreakerJudges() {
    runner.run(context -> {
      InventoryService service = context.getBean(InventoryService.class);
      service.stock("sku-3");
      MeterRegistry registry = context.getBean(MeterRegistry.class);
      assertThat(registry.get("quell.calls").tag("quell.policy", "inventory").counter().count()).isEqualTo(1.0);
      assertThat(registry.get("quell.attempts").tag("quell.policy", "inventory").counters().stream()
          .mapToDouble(c -> c.count()).sum()).isEqualTo(3.0);
      // the breaker counts attempts, what the dependency saw: two failures and a success, in one window
      var breaker = context.getBean(QuellPolicies.class).policy("inventory").breaker().orElseThrow().metrics();
      assertThat(breaker.calls()).isEqualTo(3);
      assertThat(breaker.failedCalls()).isEqualTo(2);
    });
  }

  @Test
  void theMethodRunsUnderThePolicyInForceAfterAReload() {
    runner.run(context -> {
      InventoryService service = context.getBean(InventoryService.class);
      service.failUntil(Integer.MAX_VALUE);
      TestPropertyValues.of("quell.policies.inventory.attempts=5").applyTo(context);
      context.getBean(QuellPolicies.class).reload();
      assertThatThrownBy(() -> service.stock("sku-4")).isInstanceOf(IOException.class);
      assertThat(service.calls()).isEqualTo(5);
    });
  }

  @Test
  void aRefusalComesOutAsQuellsOwnException() {
    runner.withPropertyValues("quell.policies.inventory.attempts=2", "quell.policies.inventory.budget.fraction=0.1",
            "quell.policies.inventory.budget.minimum-per-second=0")
        .run(context -> {
          InventoryService service = context.getBean(InventoryService.class);
          service.failUntil(Integer.MAX_VALUE);
          assertThatThrownBy(() -> service.stock("a")).isInstanceOf(IOException.class); // spends the one token
          assertThatThrownBy(() -> service.stock("b")).isInstanceOfSatisfying(CallRejectedException.class,
              e -> assertThat(e.reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED));
        });
  }

  /** A publisher that is neither a Mono nor a Flux is not something @Resilient can run. */
  public static class ReactiveService {
    @Resilient("inventory")
    public Publisher<String> stock() {
      return Mono.just("42");
    }
  }

  @Test
  void aPublisherThatIsNotAMonoOrAFluxIsRefusedWhenTheBeanIsMade() {
    runner.withBean(ReactiveService.class).run(context -> {
      assertThat(context).hasFailed();
      assertThat(context.getStartupFailure()).hasStackTraceContaining("@Resilient on " + ReactiveService.class.getName()
          + ".stock() returns org.reactivestreams.Publisher, a reactive type @Resilient does not run")
          .hasStackTraceContaining("Flux.from(publisher)");
    });
  }
}
