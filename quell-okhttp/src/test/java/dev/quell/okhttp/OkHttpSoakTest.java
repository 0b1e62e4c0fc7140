package dev.quell.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceListener;
import dev.quell.RetryBudget;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Dozens of threads through the interceptor against a MockWebServer that fails in every way it can —
 * 503s, 429s, dropped connections, stalled answers, slow bodies — bounded in count (24 threads × 40
 * calls, sync and enqueued) and in time. Afterwards every call ended once and no connection is in use.
 */
class OkHttpSoakTest {
  private static final int THREADS = 24;
  private static final int CALLS_PER_THREAD = 40;

  @Test
  @Timeout(180)
  void manyThreadsThroughFaultsEndEveryCallOnceAndLeaveNoConnectionInUse() throws Exception {
    SplittableRandom seeded = new SplittableRandom(11);
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          int roll;
          synchronized (seeded) {
            roll = seeded.nextInt(100);
          }
          MockResponse.Builder b = new MockResponse.Builder();
          if (roll < 55) {
            return b.code(200).body("ok").build();
          }
          if (roll < 70) {
            return b.code(503).body("busy").build();
          }
          if (roll < 80) {
            return b.code(429).addHeader("Retry-After", "0").build();
          }
          if (roll < 90) {
            return b.onRequestStart(new SocketEffect.CloseSocket(true, false, false)).build();
          }
          if (roll < 95) {
            return b.onResponseStart(SocketEffect.Stall.INSTANCE).build();
          }
          return b.code(200).body("x".repeat(256)).throttleBody(64, 1, TimeUnit.MILLISECONDS).build(); // a slow body
        }
      });
      server.start();

      LongAdder terminalEvents = new LongAdder();
      LongAdder retries = new LongAdder();
      ResilienceListener count = event -> {
        if (event.type().isTerminal()) {
          terminalEvents.increment();
        } else if (event.type() == ResilienceEvent.Type.RETRYING) {
          retries.increment();
        }
      };
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(QuellOkHttp.interceptor(Resilience.HTTP
              .withAttemptTimeout(Duration.ofMillis(300))
              .withBackoff(Backoff.constant(Duration.ofMillis(2)))
              .withBudget(RetryBudget.of(1.0, 100)) // generous: most faults are retried
              .withListener(count)))
          .build();
      client.dispatcher().setMaxRequests(THREADS * 2);
      client.dispatcher().setMaxRequestsPerHost(THREADS * 2);
      Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();

      ExecutorService callers = Executors.newFixedThreadPool(THREADS);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        done.add(callers.submit(() -> {
          for (int i = 0; i < CALLS_PER_THREAD; i++) {
            Request request = new Request.Builder().url(server.url("/soak/" + thread + "/" + i)).build();
            String outcome = (i & 1) == 0 ? sync(client.newCall(request)) : enqueued(client.newCall(request));
            outcomes.computeIfAbsent(outcome, k -> new AtomicInteger()).incrementAndGet();
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(150, TimeUnit.SECONDS);
      }
      callers.shutdown();
      assertThat(callers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

      int calls = THREADS * CALLS_PER_THREAD;
      assertThat(outcomes.values().stream().mapToInt(AtomicInteger::get).sum()).as("%s", outcomes).isEqualTo(calls);
      assertThat(outcomes.keySet()).as("%s", outcomes).noneMatch(k -> k.startsWith("unexpected"));
      assertThat(terminalEvents.sum()).as("one terminal event per call").isEqualTo(calls);
      assertThat(retries.sum()).as("the faults were retried").isGreaterThan(calls / 4);
      assertThat(client.connectionPool().connectionCount()).as("no connection left in use")
          .isEqualTo(client.connectionPool().idleConnectionCount());
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }

  private static String sync(Call call) {
    try (Response r = call.execute()) {
      r.body().string();
      return Integer.toString(r.code());
    } catch (IOException e) {
      return "io";
    } catch (RuntimeException e) {
      return "unexpected " + e;
    }
  }

  private static String enqueued(Call call) {
    CompletableFuture<String> outcome = new CompletableFuture<>();
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        outcome.complete("io");
      }

      @Override
      public void onResponse(Call c, Response r) throws IOException {
        try (r) {
          r.body().string();
          outcome.complete(Integer.toString(r.code()));
        }
      }
    });
    try {
      return outcome.get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      return "unexpected " + e;
    }
  }
}
