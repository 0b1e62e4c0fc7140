package dev.quell.errorprone;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellBlockingAsyncWorkTest {
  private final CompilationTestHelper helper =
      CompilationTestHelper.newInstance(QuellBlockingAsyncWork.class, getClass());

  @Test
  void blockingInsideAsyncWorkIsReported() {
    helper.addSourceLines("Async.java", """
        import dev.quell.PolicyScope;
        import dev.quell.Resilience;
        import java.net.URI;
        import java.net.http.HttpClient;
        import java.net.http.HttpRequest;
        import java.net.http.HttpResponse;
        import java.util.concurrent.CompletableFuture;
        import java.util.concurrent.CountDownLatch;
        import java.util.concurrent.Future;
        import java.util.concurrent.TimeUnit;
        class Async {
          static final Resilience POLICY = Resilience.DEFAULT.withName("async");
          static final PolicyScope<String> SCOPE = PolicyScope.of(POLICY);
          CompletableFuture<String> sleeps() {
            return POLICY.executeAsync(() -> {
              try {
                // BUG: Diagnostic contains: Thread.sleep blocks inside work given to executeAsync
                Thread.sleep(100);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return CompletableFuture.completedFuture("late");
            });
          }
          CompletableFuture<String> waits(Future<String> other, CompletableFuture<String> cf, CountDownLatch latch) {
            return POLICY.executeAsync(attempt -> {
              try {
                // BUG: Diagnostic contains: CountDownLatch.await
                latch.await();
                // BUG: Diagnostic contains: Future.get
                String a = other.get(1, TimeUnit.SECONDS);
                // BUG: Diagnostic contains: CompletableFuture.join
                return CompletableFuture.completedFuture(a + cf.join());
              } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
              }
            });
          }
          CompletableFuture<String> sends(HttpClient http) {
            return SCOPE.executeAsync("host", () -> {
              try {
                // BUG: Diagnostic contains: HttpClient.send blocks inside work given to executeAsync
                return CompletableFuture.completedFuture(http.send(HttpRequest.newBuilder(URI.create("http://x")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
              } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
              }
            });
          }
          void runAsync(CompletableFuture<String> cf) {
            // BUG: Diagnostic contains: blocks inside work given to runAsync
            POLICY.runAsync(attempt -> CompletableFuture.completedFuture(cf.join())).join();
          }
        }
        """).doTest();
  }

  @Test
  void nonBlockingAsyncWorkIsNotReported() {
    helper.addSourceLines("Async.java", """
        import dev.quell.Resilience;
        import java.net.URI;
        import java.net.http.HttpClient;
        import java.net.http.HttpRequest;
        import java.net.http.HttpResponse;
        import java.util.concurrent.CompletableFuture;
        import java.util.concurrent.ExecutorService;
        class Async {
          static final Resilience POLICY = Resilience.DEFAULT.withName("async");
          CompletableFuture<String> sends(HttpClient http) {
            return POLICY.executeAsync(() -> http.sendAsync(HttpRequest.newBuilder(URI.create("http://x")).build(),
                HttpResponse.BodyHandlers.ofString()).thenApply(HttpResponse::body));
          }
          CompletableFuture<String> offloaded(ExecutorService executor) {
            return POLICY.executeAsync(() -> CompletableFuture.supplyAsync(() -> {
              try {
                Thread.sleep(100); // on the executor: fine
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return "done";
            }, executor));
          }
          String sync(CompletableFuture<String> cf) throws Exception {
            return POLICY.execute(() -> cf.join()); // synchronous work may block
          }
          CompletableFuture<String> afterwards(CompletableFuture<String> cf) {
            return POLICY.executeAsync(() -> cf.thenApply(s -> s + "!")).thenApply(s -> s + cf.join());
          }
        }
        """).doTest();
  }
}
