package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.quell.RetryBudget;
import dev.quell.spring.internal.PolicyRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.imperative.ImperativeHttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.reactive.ReactiveHttpClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

/**
 * A bounded soak through the clients Spring wires (the RestClient on the {@code jdk} factory, the
 * WebClient on Reactor Netty) against a dependency on loopback that answers, fails with 503, hangs past
 * the attempt timeout and resets connections at random, while callers interrupt and cancel calls:
 *
 * <ul>
 *   <li>every call ends exactly once (a value, an exception, or a cancellation), and nothing is left
 *       counted in flight;
 *   <li>the retries the dependency counts stay within the token bucket's documented bound
 *       (docs/retry-budget.md: retries ≤ fraction × successes + minimum-per-second × elapsed + capacity);
 *   <li>connections and threads do not grow with the calls: the second half of the soak ends with no
 *       more of either than the first.
 * </ul>
 */
class SpringSoakTest {
  // Reactor Netty warns of every connection the dependency resets on purpose
  private static final String NETTY_CLIENT = "reactor.netty.http.client";

  @org.junit.jupiter.api.BeforeAll
  static void quietResets() {
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(NETTY_CLIENT)).setLevel(ch.qos.logback.classic.Level.ERROR);
  }

  @org.junit.jupiter.api.AfterAll
  static void loudAgain() {
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(NETTY_CLIENT)).setLevel(null);
  }

  private static final Duration HALF = Duration.ofSeconds(4);
  private static final int REST_THREADS = 6;
  private static final int WEB_CONCURRENCY = 6;
  private static final double FRACTION = 0.1;
  private static final double FLOOR = 3;

  /** The dependency: a fixed mix of answers and faults, counting what reaches it. */
  static final class FaultyDependency implements AutoCloseable {
    final HttpServer server;
    final ExecutorService executor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "soak-dependency");
      t.setDaemon(true);
      return t;
    });
    final AtomicLong requests = new AtomicLong();
    final AtomicLong retries = new AtomicLong();
    /** Requests the HTTP library sent again on its own (same call, same attempt): not Quell's, not funded. */
    final AtomicLong resent = new AtomicLong();
    final java.util.Set<String> attempts = ConcurrentHashMap.newKeySet();
    final AtomicLong successes = new AtomicLong();
    final Map<String, AtomicLong> faults = new ConcurrentHashMap<>();

    FaultyDependency() throws IOException {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 100);
      server.createContext("/", this::handle);
      server.setExecutor(executor);
      server.start();
    }

    int port() {
      return server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
      requests.incrementAndGet();
      String attempt = exchange.getRequestHeaders().getFirst("X-Quell-Attempt");
      String call = exchange.getRequestHeaders().getFirst("X-Call-Id");
      if (!attempts.add(call + "#" + attempt)) {
        resent.incrementAndGet();
        faults.computeIfAbsent("resent by " + (call != null && call.startsWith("web-") ? "Reactor Netty" : "the JDK client"),
            k -> new AtomicLong()).incrementAndGet();
      } else if (attempt != null && !attempt.startsWith("1/")) {
        retries.incrementAndGet();
      }
      int roll = java.util.concurrent.ThreadLocalRandom.current().nextInt(100);
      try (exchange) {
        if (roll < 55) {
          answer(exchange, 200, "ok");
          successes.incrementAndGet();
        } else if (roll < 75) {
          faults.computeIfAbsent("503", k -> new AtomicLong()).incrementAndGet();
          answer(exchange, 503, "busy");
        } else if (roll < 85) {
          faults.computeIfAbsent("hang", k -> new AtomicLong()).incrementAndGet();
          Thread.sleep(1_000); // past the attempt timeout: the client gives up first
          answer(exchange, 200, "too late");
        } else if (roll < 95) {
          faults.computeIfAbsent("reset", k -> new AtomicLong()).incrementAndGet();
          // closed without an answer
        } else {
          Thread.sleep(50);
          answer(exchange, 200, "slow");
          successes.incrementAndGet();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (IOException clientGone) {
        // the client gave up on this attempt
      }
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }

    @Override
    public void close() {
      server.stop(0);
      executor.shutdownNow();
    }
  }

  /** How the calls ended, by kind; and how many ended at all. */
  static final class Ledger {
    final AtomicInteger started = new AtomicInteger();
    final AtomicInteger ended = new AtomicInteger();
    final AtomicInteger endedTwice = new AtomicInteger();
    final Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();

    void end(AtomicInteger once, String outcome) {
      if (once.incrementAndGet() > 1) {
        endedTwice.incrementAndGet();
      }
      ended.incrementAndGet();
      outcomes.computeIfAbsent(outcome, k -> new AtomicInteger()).incrementAndGet();
    }
  }

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(HttpClientAutoConfiguration.class, ImperativeHttpClientAutoConfiguration.class,
          ReactiveHttpClientAutoConfiguration.class, RestClientAutoConfiguration.class, WebClientAutoConfiguration.class,
          QuellAutoConfiguration.class, QuellHttpAutoConfiguration.class))
      .withPropertyValues(
          "spring.http.clients.imperative.factory=jdk",
          "quell.policies.soak.attempts=3",
          "quell.policies.soak.attempt-timeout=150ms",
          "quell.policies.soak.deadline=800ms",
          "quell.policies.soak.backoff.base=5ms",
          "quell.policies.soak.backoff.max=50ms",
          "quell.policies.soak.budget.fraction=" + FRACTION,
          "quell.policies.soak.budget.minimum-per-second=" + FLOOR);

  @Test
  void faultsHangsResetsAndCancellationsEveryCallEndsOnceRetriesStayInBudgetNothingLeaks() throws Exception {
    try (FaultyDependency dependency = new FaultyDependency()) {
      runner.run(context -> {
        long start = System.nanoTime();
        PolicyRegistry registry = context.getBean(QuellPolicies.class).registry();
        String url = "http://127.0.0.1:" + dependency.port() + "/stock";
        RestClient rest = context.getBean(RestClient.Builder.class).build();
        WebClient web = context.getBean(WebClient.Builder.class).build();
        Ledger ledger = new Ledger();

        int[] afterFirst = soak(rest, web, url, ledger, registry, dependency);
        int[] afterSecond = soak(rest, web, url, ledger, registry, dependency);
        double elapsedSeconds = (System.nanoTime() - start) / 1e9;

        Files.writeString(Path.of("target/spring-soak.txt"), String.format(Locale.ROOT,
            "soak %.1f s: %d calls %s; dependency saw %d requests, %d retries by Quell, %d resent by the HTTP libraries,"
                + " %d successes, faults %s; connections %d then %d, threads %d then %d%n", elapsedSeconds, ledger.started.get(),
            ledger.outcomes, dependency.requests.get(), dependency.retries.get(), dependency.resent.get(),
            dependency.successes.get(), dependency.faults, afterFirst[0], afterSecond[0],
            afterFirst[1], afterSecond[1]));

        // every call ended, once, and nothing is counted in flight
        assertThat(ledger.started.get()).isGreaterThan(200);
        assertThat(ledger.ended).hasValue(ledger.started.get());
        assertThat(ledger.endedTwice).hasValue(0);
        assertThat(registry.inFlight().count()).isZero();
        assertThat(ledger.outcomes).containsKeys("value", "cancelled");
        assertThat(dependency.faults).containsKeys("503", "hang", "reset");

        // the retries the dependency saw, within the bucket's documented bound
        RetryBudget budget = registry.hostPolicies("soak").get("127.0.0.1:" + dependency.port()).budget();
        double capacity = Math.max(1, 10 * FLOOR);
        assertThat(budget.capacity()).isEqualTo(capacity);
        double bound = FRACTION * dependency.successes.get() + FLOOR * elapsedSeconds + capacity;
        // (a request the JDK client or Reactor Netty sends again by itself on a pooled connection the dependency
        // closed is not a retry of Quell's and is not funded: it is counted apart, and docs/spring-boot.md says so)
        assertThat((double) dependency.retries.get()).as("Quell's retries the dependency saw (bound %.1f; %s)", bound,
            ledger.outcomes).isLessThanOrEqualTo(bound);
        assertThat(dependency.retries.get()).as("the budget did fund retries").isPositive();

        // connections and threads do not grow with the calls
        if (afterFirst[0] >= 0) {
          assertThat(afterSecond[0]).as("connections open to the dependency").isLessThanOrEqualTo(
              Math.max(afterFirst[0] + 2, 2 * (REST_THREADS + WEB_CONCURRENCY)));
        }
        // (the JDK client's worker pool and Reactor's event loops grow with concurrency, never with calls)
        assertThat(afterSecond[1]).as("live threads (%s)", threadNames()).isLessThanOrEqualTo(
            afterFirst[1] + REST_THREADS + WEB_CONCURRENCY);
        // Quell's own threads are the core's two, one each, whatever the calls
        assertThat(threadNames().stream().filter(n -> n.toLowerCase(Locale.ROOT).contains("quell")).toList())
            .doesNotHaveDuplicates().isSubsetOf("quell-timer", "quell-watchdog");
      });
    }
  }

  /**
   * One half of the soak: RestClient callers (one in five interrupted while they wait) and WebClient calls
   * (one in five cancelled). Returns, once everything settled, the connections open to the dependency (-1
   * when the platform does not tell) and the live threads.
   */
  private static int[] soak(RestClient rest, WebClient web, String url, Ledger ledger, PolicyRegistry registry,
      FaultyDependency dependency) throws Exception {
    long end = System.nanoTime() + HALF.toNanos();
    List<Thread> callers = new ArrayList<>();
    for (int i = 0; i < REST_THREADS; i++) {
      Thread caller = new Thread(() -> {
        while (System.nanoTime() < end) {
          AtomicInteger once = new AtomicInteger();
          ledger.started.incrementAndGet();
          try {
            rest.get().uri(url).header("X-Call-Id", "rest-" + ledger.started.get() + "-" + Thread.currentThread().getName())
                .attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "soak").retrieve().body(String.class);
            ledger.end(once, "value");
          } catch (RuntimeException e) {
            ledger.end(once, e.getClass().getSimpleName());
          }
          Thread.interrupted(); // an interrupt meant for the call just ended
        }
      }, "soak-rest-" + i);
      callers.add(caller);
      caller.start();
    }
    Thread interrupter = new Thread(() -> {
      Random random = new Random(42);
      while (System.nanoTime() < end) {
        try {
          Thread.sleep(20 + random.nextInt(60));
        } catch (InterruptedException e) {
          return;
        }
        callers.get(random.nextInt(callers.size())).interrupt();
      }
    }, "soak-interrupter");
    interrupter.start();

    Semaphore slots = new Semaphore(WEB_CONCURRENCY);
    Random random = new Random(7);
    while (System.nanoTime() < end) {
      slots.acquire();
      AtomicInteger once = new AtomicInteger();
      ledger.started.incrementAndGet();
      Disposable d = web.get().uri(url).header("X-Call-Id", "web-" + ledger.started.get()).attribute(QuellWebClientFilter.POLICY_ATTRIBUTE, "soak").retrieve().bodyToMono(String.class)
          .doOnCancel(() -> ledger.end(once, "cancelled"))
          .doFinally(signal -> slots.release())
          .subscribe(v -> ledger.end(once, "value"), e -> ledger.end(once, e.getClass().getSimpleName()),
              () -> {
                if (once.get() == 0) {
                  ledger.end(once, "empty");
                }
              });
      if (random.nextInt(5) == 0) {
        Thread.sleep(random.nextInt(40));
        d.dispose();
      }
    }
    for (Thread caller : callers) {
      caller.join(TimeUnit.SECONDS.toMillis(30));
    }
    interrupter.interrupt();
    interrupter.join();
    assertThat(slots.tryAcquire(WEB_CONCURRENCY, 30, TimeUnit.SECONDS)).as("every WebClient call ended").isTrue();
    slots.release(WEB_CONCURRENCY);
    // the hung answers end (1 s) and the connections they held close
    long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (registry.inFlight().count() > 0 && System.nanoTime() < settle) {
      Thread.sleep(10);
    }
    Thread.sleep(1_200);
    return new int[] {connectionsTo(dependency.port()), Thread.activeCount()};
  }

  static List<String> threadNames() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName).sorted().toList();
  }

  /** ESTABLISHED TCP connections whose remote port is {@code port}, from /proc/net; -1 where there is none. */
  static int connectionsTo(int port) throws IOException {
    int count = 0;
    boolean any = false;
    String hexPort = String.format(Locale.ROOT, "%04X", port);
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path path = Path.of(table);
      if (!Files.isReadable(path)) {
        continue;
      }
      any = true;
      for (String line : Files.readAllLines(path)) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 3 && f[2].endsWith(":" + hexPort) && f[3].equals("01")) {
          count++;
        }
      }
    }
    return any ? count : -1;
  }
}
