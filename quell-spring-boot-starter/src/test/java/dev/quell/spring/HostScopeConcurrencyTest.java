package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import dev.quell.http.internal.ResponseClassifier;
import dev.quell.spring.internal.PolicyRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The per-host copies the HTTP clients use, asked for by many threads at once: every thread gets the same
 * copy of a host, and a copy's budget and breaker are the ones the registry shows; the number of hosts
 * kept stays at quell.http.client.max-hosts however many arrive.
 */
class HostScopeConcurrencyTest {
  private static final ResponseClassifier.Access NO_RESPONSES = new ResponseClassifier.Access() {
    @Override
    public int status(Object result) {
      return -1;
    }

    @Override
    public @Nullable String header(Object result, String name) {
      return null;
    }
  };

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(QuellAutoConfiguration.class))
      .withPropertyValues("quell.policies.inventory.breaker.failure-rate=0.5");

  @Test
  void manyThreadsAskingForTheSameHostsGetOneCopyEach() {
    runner.run(context -> {
      PolicyRegistry registry = context.getBean(QuellPolicies.class).registry();
      int threads = 8;
      int hosts = 40;
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        CountDownLatch start = new CountDownLatch(1);
        Map<String, Set<Resilience>> seen = new ConcurrentHashMap<>();
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          long seed = t;
          done.add(pool.submit(() -> {
            List<Integer> order = new ArrayList<>();
            for (int h = 0; h < hosts; h++) {
              order.add(h);
            }
            Collections.shuffle(order, new Random(seed));
            start.await();
            for (int round = 0; round < 5; round++) {
              for (int h : order) {
                String host = "h" + h + ".example:8080";
                Resilience p = registry.hostPolicy("inventory", host, NO_RESPONSES);
                seen.computeIfAbsent(host, k -> Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>())))
                    .add(p);
              }
            }
            return null;
          }));
        }
        start.countDown();
        for (Future<?> f : done) {
          f.get(60, TimeUnit.SECONDS);
        }
        assertThat(seen).hasSize(hosts);
        Map<String, Resilience> kept = registry.hostPolicies("inventory");
        assertThat(kept).hasSize(hosts);
        seen.forEach((host, copies) -> {
          assertThat(copies).as("copies of %s", host).hasSize(1);
          Resilience copy = copies.iterator().next();
          assertThat(kept.get(host)).isSameAs(copy);
          assertThat(copy.name()).isEqualTo("inventory:" + host);
          assertThat(copy.breaker()).isPresent();
        });
        // and each host has a budget and a breaker of its own
        Set<Object> budgets = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<Object> breakers = Collections.newSetFromMap(new IdentityHashMap<>());
        kept.values().forEach(p -> {
          budgets.add(p.budget());
          breakers.add(p.breaker().orElseThrow());
        });
        assertThat(budgets).hasSize(hosts);
        assertThat(breakers).hasSize(hosts);
      } finally {
        pool.shutdownNow();
      }
    });
  }

  @Test
  void theHostsKeptStayBoundedWhileManyThreadsBringNewOnes() {
    runner.withPropertyValues("quell.http.client.max-hosts=16").run(context -> {
      PolicyRegistry registry = context.getBean(QuellPolicies.class).registry();
      int threads = 8;
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int thread = t;
          done.add(pool.submit(() -> {
            start.await();
            for (int h = 0; h < 200; h++) {
              Resilience p = registry.hostPolicy("inventory", "t" + thread + "-h" + h + ".example", NO_RESPONSES);
              assertThat(p.name()).isEqualTo("inventory:t" + thread + "-h" + h + ".example");
            }
            return null;
          }));
        }
        start.countDown();
        for (Future<?> f : done) {
          f.get(60, TimeUnit.SECONDS);
        }
        assertThat(registry.hostPolicies("inventory")).hasSize(16);
      } finally {
        pool.shutdownNow();
      }
    });
  }
}
