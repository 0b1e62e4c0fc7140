package dev.quell.errorprone;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

class QuellNestedRetryTest {
  private final CompilationTestHelper helper = CompilationTestHelper.newInstance(QuellNestedRetry.class, getClass());

  @Test
  void aRetryingCallInsideARetryingAttemptIsReported() {
    helper.addSourceLines("Layers.java", """
        import dev.quell.PolicyScope;
        import dev.quell.Resilience;
        import java.util.concurrent.CompletableFuture;
        class Layers {
          static final Resilience FRONT = Resilience.DEFAULT.withName("front").withAttempts(4);
          static final Resilience BACK = Resilience.DEFAULT.withName("back");
          static final PolicyScope<String> HOSTS = PolicyScope.of(Resilience.HTTP.withAttempts(2));
          String call() throws Exception {
            return FRONT.execute(() -> {
              String prefix = "x";
              // BUG: Diagnostic contains: together up to 4 × 3 = 12 attempts
              return prefix + BACK.execute(() -> "inner");
            });
          }
          String scoped() throws Exception {
            // BUG: Diagnostic contains: together up to 2 × 4 = 8 attempts
            return HOSTS.execute("host", () -> FRONT.run(() -> "inner").value());
          }
          CompletableFuture<String> async() {
            // BUG: Diagnostic contains: QuellNestedRetry
            return FRONT.executeAsync(() -> BACK.executeAsync(() -> CompletableFuture.completedFuture("x")));
          }
          String local() throws Exception {
            Resilience outer = Resilience.HTTP.withName("local");
            // BUG: Diagnostic contains: QuellNestedRetry
            return outer.execute(() -> Resilience.DEFAULT.execute(() -> "inner"));
          }
        }
        """).doTest();
  }

  @Test
  void singleAttemptLayersUnknownPoliciesAndOtherThreadsAreNotReported() {
    helper.addSourceLines("Fine.java", """
        import dev.quell.Resilience;
        import java.util.concurrent.CompletableFuture;
        import java.util.concurrent.ExecutorService;
        class Fine {
          static final Resilience FRONT = Resilience.DEFAULT.withName("front");
          static final Resilience ONCE = Resilience.DEFAULT.withAttempts(1);
          String oneLayerRetries() throws Exception {
            return FRONT.execute(() -> ONCE.execute(() -> "inner"))
                + ONCE.execute(() -> FRONT.execute(() -> "inner"))
                + FRONT.execute(() -> FRONT.once().execute(() -> "inner: the same policy, one attempt"))
                + FRONT.once().execute(() -> FRONT.execute(() -> "outer: one attempt"));
          }
          String unknown(Resilience injected) throws Exception {
            return FRONT.execute(() -> injected.execute(() -> "inner"));
          }
          @org.junit.jupiter.api.Test
          void nestingOnPurpose() throws Exception {
            FRONT.execute(() -> FRONT.execute(() -> "a test of nested retries"));
          }
          String sequential() throws Exception {
            return FRONT.execute(() -> "a") + FRONT.execute(() -> "b");
          }
          CompletableFuture<String> elsewhere(ExecutorService executor) {
            return FRONT.executeAsync(() -> CompletableFuture.supplyAsync(() -> {
              try {
                return FRONT.execute(() -> "runs on the executor, not inside the attempt");
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            }, executor));
          }
        }
        """).doTest();
  }

  @Test
  void aRequestThroughQuellsOwnClientsInsideARetryingAttemptIsReported() {
    RealIntegrations.with(CompilationTestHelper.newInstance(QuellNestedRetry.class, getClass()))
        .addSourceLines("Catalog.java", """
        import dev.quell.Resilience;
        import dev.quell.http.ResilientHttpClient;
        import dev.quell.okhttp.QuellOkHttp;
        import java.net.http.HttpClient;
        import java.net.http.HttpRequest;
        import java.net.http.HttpResponse.BodyHandlers;
        import okhttp3.OkHttpClient;
        import okhttp3.Request;
        class Catalog {
          static final Resilience SYNC = Resilience.DEFAULT.withName("sync");
          static final ResilientHttpClient CATALOG = ResilientHttpClient.of(HttpClient.newHttpClient());
          static final ResilientHttpClient ONCE = ResilientHttpClient.of(HttpClient.newHttpClient(), Resilience.HTTP.withAttempts(1));
          static final OkHttpClient OK = new OkHttpClient.Builder().addInterceptor(QuellOkHttp.interceptor(Resilience.HTTP.withAttempts(2))).build();
          static final OkHttpClient PLAIN = new OkHttpClient();
          String sync(HttpRequest request) throws Exception {
            // BUG: Diagnostic contains: This request goes through CATALOG, one of Quell's clients, which retries it: up to 3 attempts inside each attempt of the call on line 17, which makes up to 3: together up to 3 × 3 = 9 attempts
            return SYNC.execute(() -> CATALOG.send(request, BodyHandlers.ofString()).body());
          }
          String tenant(HttpRequest request) throws Exception {
            // BUG: Diagnostic contains: QuellNestedRetry
            return SYNC.execute(() -> CATALOG.withMaxKeys(10).send(request, BodyHandlers.ofString()).body());
          }
          int okhttp(Request request) throws Exception {
            // BUG: Diagnostic contains: 3 × 2 = 6 attempts
            return SYNC.execute(() -> OK.newCall(request).execute().code());
          }
          String fine(HttpRequest request, Request okRequest) throws Exception {
            String a = SYNC.once().execute(() -> CATALOG.send(request, BodyHandlers.ofString()).body());
            String b = SYNC.execute(() -> ONCE.send(request, BodyHandlers.ofString()).body());
            int c = SYNC.execute(() -> PLAIN.newCall(okRequest).execute().code());
            String d = CATALOG.send(request, BodyHandlers.ofString()).body();
            return a + b + c + d;
          }
        }
        """).doTest();
  }
}
