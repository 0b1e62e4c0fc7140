package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Races between an answer arriving, its attempt timing out and the caller cancelling. The server's
 * bodies never end, so any response that nobody closed keeps its exchange open for ever: the server
 * going idle at the end proves every response was either handed to the caller (who closed it) or
 * closed by the client, whichever racer won.
 */
@Timeout(120)
class CompletionRaceTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void cancellingAtEveryMomentLeavesNoResponseOpen() throws Exception {
    try (JdkServer server = new JdkServer()) {
      server.otherwise(() -> JdkServer.endless(200));
      ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP);
      SplittableRandom random = new SplittableRandom(3);
      int cancelledFirst = 0;
      int answeredFirst = 0;

      for (int i = 0; i < 150; i++) {
        CompletableFuture<HttpResponse<InputStream>> f =
            client.sendAsync(HttpRequest.newBuilder(server.uri("/race/" + i)).build(), BodyHandlers.ofInputStream());
        int spins = random.nextInt(400_000); // cancel early, mid-exchange, or after the answer
        for (int s = 0; s < spins; s++) {
          Thread.onSpinWait();
        }
        if (f.cancel(true)) {
          cancelledFirst++;
        } else {
          answeredFirst++;
          f.join().body().close();
        }
      }

      assertThat(cancelledFirst + answeredFirst).isEqualTo(150);
      assertThat(server.awaitIdle(30)).as("%s exchanges still writing a body nobody will read", server.inProgress())
          .isTrue();
    }
  }

  @Test
  void answersArrivingAsTheirAttemptTimesOutAreClosed() throws Exception {
    try (JdkServer server = new JdkServer()) {
      server.otherwise(() -> JdkServer.endless(200));
      // an attempt timeout as long as a loopback exchange: answers and timeouts arrive together
      ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP.withAttemptTimeout(Duration.ofMillis(2))
          .withBackoff(Backoff.NONE).withBudget(null));
      List<CompletableFuture<HttpResponse<InputStream>>> calls = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        calls.add(client.sendAsync(HttpRequest.newBuilder(server.uri("/race/" + i)).build(), BodyHandlers.ofInputStream()));
      }
      int answered = 0;
      int timedOut = 0;
      for (CompletableFuture<HttpResponse<InputStream>> f : calls) {
        try {
          f.get(30, TimeUnit.SECONDS).body().close();
          answered++;
        } catch (java.util.concurrent.ExecutionException e) {
          assertThat(e.getCause()).isInstanceOfAny(dev.quell.AttemptTimeoutException.class, java.io.IOException.class);
          timedOut++;
        }
      }

      assertThat(answered + timedOut).isEqualTo(100);
      assertThat(server.awaitIdle(30)).as("%s exchanges still writing a body nobody will read", server.inProgress())
          .isTrue();
    }
  }

  @Test
  void theSameRaceInBlockingSends() throws Exception {
    try (JdkServer server = new JdkServer()) {
      server.otherwise(() -> JdkServer.endless(200));
      ResilientHttpClient client = ResilientHttpClient.of(HTTP, Resilience.HTTP.withAttemptTimeout(Duration.ofMillis(2))
          .withBackoff(Backoff.NONE).withBudget(null));
      int ended = 0;
      for (int i = 0; i < 60; i++) {
        try {
          client.send(HttpRequest.newBuilder(server.uri("/race/" + i)).build(), BodyHandlers.ofInputStream()).body().close();
        } catch (dev.quell.AttemptTimeoutException | java.io.IOException | CompletionException | CancellationException e) {
          // a timed-out call is an outcome too
        }
        ended++;
      }

      assertThat(ended).isEqualTo(60);
      assertThat(server.awaitIdle(30)).as("%s exchanges still open", server.inProgress()).isTrue();
    }
  }
}
