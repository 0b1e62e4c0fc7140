package dev.quell.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.quell.spring.Downstream.Answer;
import dev.quell.spring.drain.DrainApp;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Shutdown, as a platform does it: the application runs in a JVM of its own and gets SIGTERM while calls
 * are in flight; the test watches from outside, as its clients and its dependency. (Draining is
 * process-wide and one-way, so it cannot be tried inside the test JVM.)
 */
class DrainingOnShutdownTest {
  private static final Duration WAIT = Duration.ofSeconds(120);
  private final HttpClient client = HttpClient.newHttpClient();
  private final Downstream dependency = Downstream.start();
  private Child app;

  @AfterEach
  void stop() {
    if (app != null) {
      app.process.destroyForcibly();
    }
    dependency.close();
  }

  /** The application in its own JVM, its output collected line by line. */
  static final class Child {
    final Process process;
    final List<String> lines = new ArrayList<>();

    Child(String... args) throws IOException {
      List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", System.getProperty("java.class.path"), DrainApp.class.getName()));
      // the defaults, unless an argument sets the same property (a property given twice reads as "a,b")
      for (String fallback : List.of("--server.address=127.0.0.1", "--server.port=0", "--spring.main.banner-mode=off",
          "--spring.http.clients.imperative.factory=jdk", "--quell.draining.grace=60s", "--quell.defaults.backoff.kind=none")) {
        String key = fallback.substring(0, fallback.indexOf('=') + 1);
        if (List.of(args).stream().noneMatch(a -> a.startsWith(key))) {
          command.add(fallback);
        }
      }
      command.addAll(List.of(args));
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
      Thread reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line; (line = in.readLine()) != null; ) {
            synchronized (lines) {
              lines.add(line);
              lines.notifyAll();
            }
          }
        } catch (IOException ignored) {
          // the process ended
        }
      }, "child-output");
      reader.setDaemon(true);
      reader.start();
    }

    /** Waits for a line matching {@code pattern}; returns its match. */
    Matcher await(String pattern) throws InterruptedException {
      Pattern p = Pattern.compile(pattern);
      long end = System.nanoTime() + WAIT.toNanos();
      synchronized (lines) {
        for (int seen = 0; ; ) {
          for (; seen < lines.size(); seen++) {
            Matcher m = p.matcher(lines.get(seen));
            if (m.find()) {
              return m;
            }
          }
          long left = end - System.nanoTime();
          if (left <= 0 || !process.isAlive() && seen == lines.size()) {
            throw new AssertionError("no line matching " + pattern + (process.isAlive() ? "" : " (exited with " + process.exitValue() + ")")
                + " in:\n" + String.join("\n", lines));
          }
          TimeUnit.NANOSECONDS.timedWait(lines, Math.min(left, TimeUnit.SECONDS.toNanos(1)));
        }
      }
    }

    String log() {
      synchronized (lines) {
        return String.join("\n", lines);
      }
    }

    int port() throws InterruptedException {
      return Integer.parseInt(await("Tomcat started on port (\\d+)").group(1));
    }
  }

  CompletableFuture<HttpResponse<String>> get(int port, String pathAndQuery) {
    return client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  void awaitSeen(String path, int count) throws InterruptedException {
    dependency.awaitSeen(path, count, WAIT);
  }

  @Test
  void inboundRequestsFinishWithWorkingRetriesThenWhatIsLeftDrains() throws Exception {
    CountDownLatch releaseInbound = new CountDownLatch(1);
    CountDownLatch releaseBackground = new CountDownLatch(1);
    dependency.script("/inbound", Answer.status(503).heldUntil(releaseInbound), Answer.ok("inbound done"));
    dependency.script("/background", Answer.status(503).heldUntil(releaseBackground), Answer.ok("never asked"));
    app = new Child("--downstream.url=" + dependency.url(), "--server.shutdown=graceful");
    int port = app.port();

    CompletableFuture<HttpResponse<String>> inbound = get(port, "/proxy?path=/inbound");
    assertThat(get(port, "/background?path=/background").get(WAIT.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(202);
    awaitSeen("/inbound", 1);
    awaitSeen("/background", 1);

    app.process.toHandle().destroy(); // SIGTERM (Process.destroy() would also close the pipe we read its output from)
    app.await("Commencing graceful shutdown");
    releaseInbound.countDown(); // the in-flight request's first attempt fails: its retry must still go out

    HttpResponse<String> answer = inbound.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.body()).isEqualTo("inbound done");
    assertThat(dependency.seen("/inbound")).hasSize(2);

    app.await("quell.draining: began, grace PT1M, 1 calls and requests in flight"); // after the graceful wait
    releaseBackground.countDown(); // the background call's attempt fails: no retry now
    app.await("background call ended: DRAINING after 1 attempts");
    assertThat(app.process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(dependency.seen("/background")).hasSize(1);
  }

  @Test
  void withoutAGracefulWaitClientsSeeTheDrainingAnswers() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    dependency.script("/slow", Answer.status(503).heldUntil(release), Answer.ok("never asked"));
    app = new Child("--downstream.url=" + dependency.url(), "--server.shutdown=immediate");
    int port = app.port();

    CompletableFuture<HttpResponse<String>> inFlight = get(port, "/proxy?path=/slow");
    awaitSeen("/slow", 1);

    app.process.toHandle().destroy(); // SIGTERM (Process.destroy() would also close the pipe we read its output from)
    app.await("quell.draining: began");

    // a new request is answered at once, without reaching the handler, and told to go elsewhere
    HttpResponse<String> newcomer = get(port, "/proxy?path=/new").get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(newcomer.statusCode()).isEqualTo(503);
    assertThat(newcomer.headers().firstValue("Connection")).contains("close");
    assertThat(JsonPath.<String>read(newcomer.body(), "$.reason")).isEqualTo("DRAINING");
    assertThat(dependency.seen("/new")).isEmpty();

    // the request in flight gets its answer: its attempt failed and no retry may start now
    release.countDown();
    HttpResponse<String> drained = inFlight.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(drained.statusCode()).isEqualTo(503);
    assertThat(JsonPath.<String>read(drained.body(), "$.reason")).isEqualTo("DRAINING");
    assertThat(dependency.seen("/slow")).hasSize(1);
    assertThat(app.process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
  }

  /**
   * Regression: with {@code server.shutdown=immediate}, requests still in flight when the grace ran out got
   * a dropped connection instead of their 503 (between 0 and 11 of 12 a run): the drain phase let the web
   * server stop while the calls it had just ended were writing their answers. Five shutdowns of twelve
   * requests each; every one of the sixty must be a 503 DRAINING.
   */
  @RepeatedTest(5)
  void requestsInFlightWhenTheGraceEndsAllGetTheirDrainingAnswer() throws Exception {
    int requests = 12;
    CountDownLatch never = new CountDownLatch(1); // the dependency never answers: the grace ends every call
    dependency.script("/hang", Answer.status(200).heldUntil(never));
    app = new Child("--downstream.url=" + dependency.url(), "--server.shutdown=immediate", "--quell.draining.grace=3s");
    int port = app.port();

    List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      inFlight.add(get(port, "/proxy?path=/hang"));
    }
    awaitSeen("/hang", requests);

    app.process.toHandle().destroy(); // SIGTERM
    app.await("quell.draining: began, grace PT3S");

    List<String> answers = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> request : inFlight) {
      try {
        HttpResponse<String> r = request.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        answers.add(r.statusCode() + " " + (r.statusCode() == 503 ? JsonPath.<String>read(r.body(), "$.reason") : r.body()));
      } catch (ExecutionException e) {
        answers.add("dropped: " + e.getCause());
      }
    }
    assertThat(answers).as("what each of the requests in flight got (the application's log:%n%s)", app.log())
        .containsOnly("503 DRAINING");
    assertThat(dependency.seen("/hang")).hasSize(requests); // and no retry went out
    assertThat(app.process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
  }
}
