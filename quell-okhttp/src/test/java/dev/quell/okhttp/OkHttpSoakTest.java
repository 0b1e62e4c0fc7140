package dev.quell.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import dev.quell.http.RetryMarker;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bounded soak of the interceptor (16 threads × 40 calls, well under 30 s), set up as docs/http.md
 * says (with its network half), against a raw loopback server that answers 200s, 503s (some with
 * {@code Retry-After: 0}), 408s and 429s, resets connections, hangs, and trickles bodies that never end;
 * calls are executed and enqueued, read in full or in part, and some are cancelled in flight.
 * Afterwards:
 * <ul>
 *   <li>every call had exactly one outcome, and the policy reported one terminal event per call;
 *   <li>every request the server saw was a distinct Quell attempt (OkHttp resent nothing by itself), and
 *       their number stays within the budget's bound (docs/retry-budget.md: every first attempt, plus the
 *       bucket's capacity, plus {@code fraction} per success, plus {@code minimumPerSecond} per second);
 *   <li>no connection is left in an exchange at the server, those still open are idle in OkHttp's pool,
 *       and no thread was left behind.
 * </ul>
 */
class OkHttpSoakTest {
  private static final int THREADS = 16;
  private static final int CALLS_PER_THREAD = 40;
  private static final double FRACTION = 0.1;
  private static final double PER_SECOND = 3;

  /** Callbacks OkHttp made to enqueued calls, and the calls enqueued: one each, never two. */
  private final LongAdder callbacks = new LongAdder();
  private final LongAdder enqueuedCalls = new LongAdder();

  @Test
  @Timeout(60)
  void faultsHangsResetsAndCancelsEndEveryCallOnceWithinTheBudgetAndLeaveNothingOpen() throws Exception {
    SplittableRandom seeded = new SplittableRandom(11);
    try (RawServer server = new RawServer()) {
      server.otherwise(() -> {
        int roll;
        synchronized (seeded) {
          roll = seeded.nextInt(100);
        }
        if (roll < 50) {
          return RawServer.respond(200, "", "ok");
        }
        if (roll < 60) {
          return RawServer.respond(503, "", "busy");
        }
        if (roll < 66) {
          return RawServer.respond(503, "Retry-After: 0\r\n", "busy");
        }
        if (roll < 72) {
          return RawServer.respond(408, "", "");
        }
        if (roll < 76) {
          return RawServer.respond(429, "Retry-After: 0\r\n", "");
        }
        if (roll < 84) {
          return RawServer.RESET;
        }
        if (roll < 90) {
          return RawServer.HANG;
        }
        if (roll < 94) {
          return RawServer.ENDLESS; // read in full, it is cut off at the deadline
        }
        if (roll < 97) {
          return new RawServer.Endless(503); // retried: a superseded body, to be closed
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
      QuellInterceptor quell = QuellOkHttp.interceptor(Resilience.HTTP.withName("soak")
          .withAttemptTimeout(Duration.ofMillis(300))
          .withDeadline(Duration.ofSeconds(2))
          .withBackoff(Backoff.constant(Duration.ofMillis(2)))
          .withBudget(budget)
          .withListener(countEnds));
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(quell)
          .addNetworkInterceptor(quell.networkInterceptor())
          .build();
      client.dispatcher().setMaxRequests(THREADS * 2);
      client.dispatcher().setMaxRequestsPerHost(THREADS * 2);
      ScheduledExecutorService cancels = Executors.newSingleThreadScheduledExecutor();
      // warm up, so OkHttp's own threads exist before the count
      server.then(RawServer.respond(200, "", "ok"));
      sync(client.newCall(new Request.Builder().url(server.uri("/warm").toString()).build()), true);
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
            Call call = client.newCall(new Request.Builder().url(server.uri("/soak/" + thread + "/" + i).toString()).build());
            if (i % 5 == 4) {
              cancels.schedule(call::cancel, (i * 7L) % 50, TimeUnit.MILLISECONDS); // sometimes at once, sometimes mid-call
            }
            boolean readAll = (i & 2) == 0;
            String outcome = (i & 1) == 0 ? sync(call, readAll) : enqueued(call, readAll);
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
      cancels.shutdown();
      assertThat(callers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(cancels.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

      int calls = THREADS * CALLS_PER_THREAD;
      assertThat(outcomes.values().stream().mapToInt(AtomicInteger::get).sum()).as("%s", outcomes).isEqualTo(calls);
      assertThat(outcomes.keySet()).as("%s", outcomes).noneMatch(k -> k.startsWith("unexpected"));
      assertThat(outcomes).as("%s", outcomes).containsKeys("200", "cancelled", "rejected BUDGET_EXHAUSTED");
      assertThat(terminalEvents.sum()).as("one terminal event per call").isEqualTo(calls);
      assertThat(callbacks.sum()).as("one callback per enqueued call").isEqualTo(enqueuedCalls.sum());

      List<Map<String, String>> seen = server.requests().subList(warmRequests, server.requests().size());
      Set<String> attempts = new HashSet<>();
      for (Map<String, String> request : seen) {
        attempts.add(request.get(":request-line") + " " + request.getOrDefault(RetryMarker.HEADER.toLowerCase(Locale.ROOT), "1/1"));
      }
      assertThat(seen).as("OkHttp resent nothing by itself: every request is a distinct Quell attempt").hasSize(attempts.size());
      double bound = calls + budget.capacity() + FRACTION * (server.answered2xx() - warm2xx) + PER_SECOND * seconds;
      assertThat(seen.size()).as("requests at the server in %.1f s (bound %.0f): %s", seconds, bound, outcomes)
          .isLessThanOrEqualTo((int) Math.floor(bound));

      assertThat(awaitNotBusy(server, 10)).as("%s connections still in an exchange", server.busyConnections()).isTrue();
      assertThat(client.connectionPool().connectionCount()).as("no connection in use at the client")
          .isEqualTo(client.connectionPool().idleConnectionCount());
      assertThat(server.openConnections()).as("open at the server: only OkHttp's idle ones")
          .isLessThanOrEqualTo(client.connectionPool().idleConnectionCount());
      Threads.assertNoGrowth(threadsBefore, Map.of(
          "OkHttp Dispatcher", 2 * THREADS, // OkHttp's cached dispatcher keeps idle threads for 60 s
          "OkHttp TaskRunner", 4, "Okio Watchdog", 1, // OkHttp's and okio's own daemons
          // a TaskRunner thread takes the name of the task it runs: the pool's idle-connection closer
          "OkHttp ConnectionPool connection closer", 1,
          "quell-timer", 1, "quell-watchdog", 1, // the core's two lazily started daemons, one each
          "raw-server-conn", 2 * THREADS), 10); // one per open connection, counted above
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
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

  private static String read(Response r, boolean readAll) throws IOException {
    try (r) {
      if (readAll) {
        r.body().string();
      } else {
        r.body().source().request(64); // a caller who reads a little and closes
      }
      return Integer.toString(r.code());
    }
  }

  private static String sync(Call call, boolean readAll) {
    try {
      return read(call.execute(), readAll);
    } catch (IOException e) {
      return io(call, e);
    } catch (RuntimeException e) {
      return "unexpected " + e;
    }
  }

  /** What kind of failure: a cancel, one of Quell's refusals, a timeout, or the transport's own. */
  private static String io(Call call, IOException e) {
    if (call.isCanceled()) {
      return "cancelled";
    }
    if (e.getCause() instanceof dev.quell.CallRejectedException) {
      return "rejected " + ((dev.quell.CallRejectedException) e.getCause()).reason();
    }
    return e instanceof java.net.SocketTimeoutException ? "timeout" : "io";
  }

  private String enqueued(Call call, boolean readAll) {
    CompletableFuture<String> outcome = new CompletableFuture<>();
    enqueuedCalls.increment();
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        callbacks.increment();
        outcome.complete(io(c, e));
      }

      @Override
      public void onResponse(Call c, Response r) {
        callbacks.increment();
        String result;
        try {
          result = read(r, readAll);
        } catch (IOException e) {
          result = io(c, e);
        }
        outcome.complete(result);
      }
    });
    try {
      return outcome.get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      return "unexpected " + e;
    }
  }
}
