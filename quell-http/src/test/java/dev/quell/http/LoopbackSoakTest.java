package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.AttemptTimeoutException;
import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bounded soak of {@link ResilientHttpClient} (16 threads × 40 calls, well under 30 s) against a raw
 * loopback server that answers 200s, 503s (some with {@code Retry-After: 0}), 429s, resets connections,
 * hangs, and sends bodies that never end (200s, and 503s that are retried); the callers send blocking and asynchronous, buffering and
 * streaming, and cancel some calls in flight. Afterwards:
 * <ul>
 *   <li>every call had exactly one outcome, and the policy reported exactly one terminal event per call;
 *   <li>the attempts the server counted stay within the budget's bound (docs/retry-budget.md: every first
 *       attempt, plus the bucket's capacity, plus {@code fraction} per success, plus {@code minimumPerSecond}
 *       per second) — the JDK's own resend of a GET whose connection failed before an answer
 *       (docs/http.md) is counted apart, and is at most one per reset;
 *   <li>no connection is left in an exchange at the server, the ones left open are idle in the client's
 *       pool (no more than the calls that ran at once), and no thread was left behind.
 * </ul>
 */
class LoopbackSoakTest {
  private static final int THREADS = 16;
  private static final int CALLS_PER_THREAD = 40;
  private static final double FRACTION = 0.1;
  private static final double PER_SECOND = 3;

  @Test
  @Timeout(60)
  void faultsHangsResetsAndCancelsEndEveryCallOnceWithinTheBudgetAndLeaveNothingOpen() throws Exception {
    SplittableRandom seeded = new SplittableRandom(7);
    AtomicInteger resets = new AtomicInteger();
    try (RawServer server = new RawServer()) {
      server.otherwise(() -> {
        int roll;
        synchronized (seeded) {
          roll = seeded.nextInt(100);
        }
        if (roll < 50) {
          return RawServer.respond(200, "", "ok");
        }
        if (roll < 62) {
          return RawServer.respond(503, "", "busy");
        }
        if (roll < 70) {
          return RawServer.respond(503, "Retry-After: 0\r\n", "busy");
        }
        if (roll < 76) {
          return RawServer.respond(429, "Retry-After: 0\r\n", "");
        }
        if (roll < 84) {
          resets.incrementAndGet();
          return RawServer.RESET;
        }
        if (roll < 90) {
          return RawServer.HANG;
        }
        if (roll < 94) {
          return RawServer.ENDLESS;
        }
        if (roll < 97) {
          return new RawServer.Endless(503); // retried: a streaming body superseded, and to be closed
        }
        return RawServer.respond(200, "", "ok");
      });

      LongAdder terminalEvents = new LongAdder();
      ResilienceListener countEnds = event -> {
        if (event.type().isTerminal()) {
          terminalEvents.increment();
        }
      };
      RetryBudget budget = RetryBudget.of(FRACTION, PER_SECOND);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      ResilientHttpClient client = ResilientHttpClient.of(http, Resilience.HTTP.withName("soak")
          .withAttemptTimeout(Duration.ofMillis(300))
          .withDeadline(Duration.ofSeconds(3))
          .withBackoff(Backoff.constant(Duration.ofMillis(2)))
          .withBudget(budget)
          .withListener(countEnds));
      // warm up, so the client's own threads exist before the count
      server.then(RawServer.respond(200, "", "ok"));
      client.send(HttpRequest.newBuilder(server.uri("/warm")).build(), BodyHandlers.discarding());
      int warmRequests = server.requests().size();
      int warm2xx = server.answered2xx();
      Map<String, Integer> threadsBefore = Threads.byName();
      terminalEvents.reset();

      Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
      ExecutorService callers = Executors.newFixedThreadPool(THREADS);
      long started = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        done.add(callers.submit(() -> {
          for (int i = 0; i < CALLS_PER_THREAD; i++) {
            String outcome = call(client, server, thread, i);
            outcomes.computeIfAbsent(outcome, k -> new AtomicInteger()).incrementAndGet();
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(40, TimeUnit.SECONDS);
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      callers.shutdown();
      assertThat(callers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

      int calls = THREADS * CALLS_PER_THREAD;
      assertThat(outcomes.values().stream().mapToInt(AtomicInteger::get).sum()).as("%s", outcomes).isEqualTo(calls);
      assertThat(outcomes.keySet()).as("%s", outcomes).noneMatch(k -> k.startsWith("unexpected"));
      assertThat(outcomes).as("%s", outcomes).containsKeys("200", "cancelled", "rejected BUDGET_EXHAUSTED");
      assertThat(terminalEvents.sum()).as("one terminal event per call").isEqualTo(calls);

      // at the server: each attempt once (by path and X-Quell-Attempt), and the JDK's own resends apart
      List<Map<String, String>> seen = server.requests().subList(warmRequests, server.requests().size());
      Set<String> attempts = new HashSet<>();
      for (Map<String, String> request : seen) {
        attempts.add(request.get(":request-line") + " " + request.getOrDefault(RetryMarker.HEADER.toLowerCase(java.util.Locale.ROOT), "1/1"));
      }
      int jdkResends = seen.size() - attempts.size();
      double bound = calls + budget.capacity() + FRACTION * (server.answered2xx() - warm2xx) + PER_SECOND * seconds;
      assertThat(attempts.size()).as("attempts at the server in %.1f s (bound %.0f): %s", seconds, bound, outcomes)
          .isLessThanOrEqualTo((int) Math.floor(bound));
      assertThat(jdkResends).as("the JDK resends a GET at most once per connection that failed before an answer")
          .isLessThanOrEqualTo(resets.get());

      // nothing left open: no exchange at the server, only idle keep-alive connections in the client's pool
      assertThat(awaitNotBusy(server, 10)).as("%s connections still in an exchange", server.busyConnections()).isTrue();
      assertThat(server.openConnections()).as("open connections at the server, all idle in the pool").isLessThanOrEqualTo(THREADS);
      Threads.assertNoGrowth(threadsBefore, Map.of(
          "HttpClient-#-Worker-#", 2 * THREADS, // the JDK client's cached executor keeps idle workers for a while
          "ForkJoinPool.commonPool-worker-#", Runtime.getRuntime().availableProcessors(),
          "quell-timer", 1, "quell-watchdog", 1, // the core's two lazily started daemons, one each
          "raw-server-conn", THREADS), 10); // one per open connection, counted above
    }
  }

  private static boolean awaitNotBusy(RawServer server, long seconds) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (server.busyConnections() > 0) {
      if (System.nanoTime() > end) {
        return false;
      }
      Thread.sleep(20); // the server sees a closed connection only on its next read or write
    }
    return true;
  }

  private static String call(ResilientHttpClient client, RawServer server, int thread, int i) {
    HttpRequest request = HttpRequest.newBuilder(server.uri("/soak/" + thread + "/" + i)).build();
    try {
      switch (i % 4) {
        case 0:
          return Integer.toString(client.send(request, BodyHandlers.ofString()).statusCode());
        case 1: {
          HttpResponse<InputStream> r = client.send(request, BodyHandlers.ofInputStream());
          try (InputStream body = r.body()) {
            body.readNBytes(64); // a caller who reads a little and closes
          }
          return Integer.toString(r.statusCode());
        }
        case 2:
          return Integer.toString(client.sendAsync(request, BodyHandlers.ofString()).get(30, TimeUnit.SECONDS).statusCode());
        default: {
          CompletableFuture<HttpResponse<InputStream>> pending = client.sendAsync(request, BodyHandlers.ofInputStream());
          if ((i & 4) == 0) {
            pending.cancel(true); // at once, or after the first attempt: both must end the call once
          } else {
            try {
              HttpResponse<InputStream> r = pending.get(20, TimeUnit.MILLISECONDS);
              r.body().close();
              return Integer.toString(r.statusCode());
            } catch (java.util.concurrent.TimeoutException stillWaiting) {
              pending.cancel(true);
            }
          }
          try {
            HttpResponse<InputStream> r = pending.get(30, TimeUnit.SECONDS);
            r.body().close(); // it won the race with the cancel
            return Integer.toString(r.statusCode());
          } catch (CancellationException e) {
            return "cancelled";
          }
        }
      }
    } catch (ExecutionException e) {
      return classify(e.getCause());
    } catch (Exception e) {
      return classify(e);
    }
  }

  private static String classify(Throwable t) {
    if (t instanceof CallRejectedException) {
      return "rejected " + ((CallRejectedException) t).reason();
    }
    if (t instanceof DeadlineExceededException || t instanceof AttemptTimeoutException) {
      return t.getClass().getSimpleName();
    }
    if (t instanceof IOException) {
      return "io";
    }
    return "unexpected " + t;
  }
}
