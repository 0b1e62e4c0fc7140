package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Dozens of client threads against one loopback server that fails in every way it can — 503s with
 * finite and endless bodies, 429s, dropped connections — bounded in count (32 threads × 40 calls) and
 * in time (every wait has a generous timeout). Afterwards: every call ended exactly once, and no body
 * was left open (the server has no exchange still writing).
 */
class LoopbackSoakTest {
  private static final int THREADS = 32;
  private static final int CALLS_PER_THREAD = 40;

  @Test
  @Timeout(180)
  void manyThreadsThroughFaultsEndEveryCallOnceAndLeaveNoBodyOpen() throws Exception {
    SplittableRandom seeded = new SplittableRandom(7);
    try (JdkServer server = new JdkServer()) {
      server.otherwise(() -> {
        int roll;
        synchronized (seeded) {
          roll = seeded.nextInt(100);
        }
        if (roll < 55) {
          return JdkServer.status(200, "ok");
        }
        if (roll < 70) {
          return JdkServer.status(503, "busy");
        }
        if (roll < 78) {
          return JdkServer.endless(503); // a slow body: a buffering handler times out on it
        }
        if (roll < 88) {
          return JdkServer.status(429, "", "Retry-After", "0");
        }
        return JdkServer.drop();
      });

      LongAdder terminalEvents = new LongAdder();
      LongAdder retries = new LongAdder();
      ResilienceListener countEnds = event -> {
        if (event.type().isTerminal()) {
          terminalEvents.increment();
        } else if (event.type() == dev.quell.ResilienceEvent.Type.RETRYING) {
          retries.increment();
        }
      };
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      ResilientHttpClient client = ResilientHttpClient.of(http, Resilience.HTTP
          .withAttemptTimeout(Duration.ofMillis(500))
          .withBackoff(Backoff.constant(Duration.ofMillis(2)))
          // generous, so that most failures are retried and the superseded-body path runs hundreds of times
          .withBudget(RetryBudget.of(1.0, 100))
          .withListener(countEnds));
      Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
      AtomicInteger unexpected = new AtomicInteger();

      ExecutorService callers = Executors.newFixedThreadPool(THREADS);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        done.add(callers.submit(() -> {
          for (int i = 0; i < CALLS_PER_THREAD; i++) {
            String outcome = call(client, server, thread, i);
            outcomes.computeIfAbsent(outcome, k -> new AtomicInteger()).incrementAndGet();
            if (outcome.startsWith("unexpected")) {
              unexpected.incrementAndGet();
            }
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
      assertThat(unexpected).as("%s", outcomes).hasValue(0);
      assertThat(terminalEvents.sum()).as("one terminal event per call").isEqualTo(calls);
      assertThat(outcomes.get("200")).as("%s", outcomes).isNotNull();
      assertThat(retries.sum()).as("the faults were retried").isGreaterThan(calls / 4);
      assertThat(server.awaitIdle(30)).as("no response body left open: %s still writing", server.inProgress()).isTrue();
    }
  }

  private static String call(ResilientHttpClient client, JdkServer server, int thread, int i) {
    HttpRequest request = HttpRequest.newBuilder(server.uri("/soak/" + thread + "/" + i)).build();
    boolean async = (i & 1) == 0;
    boolean streaming = (i & 2) == 0;
    try {
      HttpResponse<?> r;
      if (streaming) {
        r = async ? client.sendAsync(request, BodyHandlers.ofInputStream()).get(60, TimeUnit.SECONDS)
            : client.send(request, BodyHandlers.ofInputStream());
        try (InputStream body = (InputStream) r.body()) {
          body.readNBytes(64); // a caller who reads a little and closes
        }
      } else {
        r = async ? client.sendAsync(request, BodyHandlers.ofString()).get(60, TimeUnit.SECONDS)
            : client.send(request, BodyHandlers.ofString());
      }
      return Integer.toString(r.statusCode());
    } catch (java.util.concurrent.ExecutionException e) {
      return classify(e.getCause());
    } catch (Exception e) {
      return classify(e);
    }
  }

  private static String classify(Throwable t) {
    if (t instanceof CallRejectedException) {
      return "rejected " + ((CallRejectedException) t).reason();
    }
    if (t instanceof DeadlineExceededException || t instanceof dev.quell.AttemptTimeoutException) {
      return t.getClass().getSimpleName();
    }
    if (t instanceof IOException) {
      return "io";
    }
    return "unexpected " + t;
  }
}
