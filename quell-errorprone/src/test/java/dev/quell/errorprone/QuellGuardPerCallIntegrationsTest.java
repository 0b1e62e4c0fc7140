package dev.quell.errorprone;

import static com.google.errorprone.BugCheckerRefactoringTestHelper.TestMode.TEXT_MATCH;

import com.google.errorprone.BugCheckerRefactoringTestHelper;
import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

/**
 * The guard check on the real circuit breaker, limiters, policies that own a breaker or a latency
 * histogram, {@code Resilience.once()}, {@code ResilientHttpClient}, OkHttp's interceptor and gRPC's
 * (their real sources, with OkHttp's and gRPC's real types: {@link RealIntegrations}).
 */
class QuellGuardPerCallIntegrationsTest {
  private CompilationTestHelper helper() {
    return RealIntegrations.with(CompilationTestHelper.newInstance(QuellGuardPerCall.class, getClass()));
  }

  @Test
  void breakersAndLimitersBuiltPerCallAreReported() {
    helper().addSourceLines("Guards.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Limiter;
        import dev.quell.Resilience;
        import java.time.Duration;
        class Guards {
          static final Resilience POLICY = Resilience.HTTP.withName("inventory");
          CircuitBreaker.State breaker() {
            // BUG: Diagnostic contains: it never sees more than one call, so it can never open
            return CircuitBreaker.of("inventory").state();
          }
          String policyWithIt() throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            CircuitBreaker breaker = CircuitBreaker.of("inventory", CircuitBreaker.Config.DEFAULT.withMinimumCalls(5));
            return Resilience.NONE.withBreaker(breaker).execute(() -> "x");
          }
          int limiters() {
            // BUG: Diagnostic contains: each call gets a fresh allowance
            Limiter rate = Limiter.rate(100, 10);
            // BUG: Diagnostic contains: QuellGuardPerCall
            int c = Limiter.concurrency(8, Duration.ofMillis(5)).available();
            // BUG: Diagnostic contains: QuellGuardPerCall
            int a = Limiter.adaptive().limit();
            return rate.available() + c + a;
          }
          String limitedPolicy() throws Exception {
            // BUG: Diagnostic contains: limiter
            return Resilience.NONE.withLimiter(Limiter.concurrency(4)).execute(() -> "x");
          }
        }
        """).doTest();
  }

  @Test
  void aPolicyThatOwnsABreakerOrAHistogramIsAGuardWithoutAnAutomaticBudget() {
    helper().addSourceLines("Owned.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Hedge;
        import dev.quell.MeasuredTiming;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        class Owned {
          static final RetryBudget SHARED = RetryBudget.shared("inventory");
          static final CircuitBreaker.Config TRIPS = CircuitBreaker.Config.DEFAULT.withMinimumCalls(5);
          static final Resilience BASE = Resilience.DEFAULT.withBudget(SHARED);
          static final Resilience GUARDED = BASE.withBreaker(TRIPS);
          String breaker() throws Exception {
            // BUG: Diagnostic contains: new circuit breaker of its own (withBreaker(CircuitBreaker.Config))
            return BASE.withBreaker(CircuitBreaker.Config.DEFAULT).execute(() -> "x");
          }
          String oneAttemptStillOwnsIt() throws Exception {
            // BUG: Diagnostic contains: can never open
            return Resilience.NONE.withBreaker(TRIPS).execute(() -> "x");
          }
          String inSettings() throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            return Resilience.NONE.with(s -> s.name("x").breaker(TRIPS)).execute(() -> "x");
          }
          String copyOfAGuard() throws Exception {
            // BUG: Diagnostic contains: new circuit breaker
            return GUARDED.withName("copy").execute(() -> "x");
          }
          String copyOfOnce() throws Exception {
            // BUG: Diagnostic contains: new circuit breaker
            return GUARDED.once().withDeadline(Duration.ofSeconds(1)).execute(() -> "a copy, with a breaker of its own");
          }
          String measured() throws Exception {
            // BUG: Diagnostic contains: new latency histogram of its own
            return BASE.withMeasuredTiming(MeasuredTiming.multipleOfP95(3)).execute(() -> "x");
          }
          String measuredHedge() throws Exception {
            // BUG: Diagnostic contains: the measured timeout or hedge delay is never used
            return BASE.withHedge(Hedge.maxExtraLoad(0.05).withMaxHedges(2)).execute(() -> "x");
          }
        }
        """).doTest();
  }

  @Test
  void sharedLiveStateAndOnceAreNotReported() {
    helper().addSourceLines("Shared.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Hedge;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        class Shared {
          static final RetryBudget SHARED = RetryBudget.shared("inventory");
          static final CircuitBreaker BREAKER = CircuitBreaker.of("inventory");
          static final Resilience PAYMENTS = Resilience.HTTP.withName("payments")
              .withBreaker(CircuitBreaker.Config.DEFAULT).withHedge(Hedge.maxExtraLoad(0.05));
          String liveBreaker() throws Exception {
            return Resilience.DEFAULT.withBudget(SHARED).withBreaker(BREAKER).execute(() -> "shared breaker");
          }
          String fixedHedge() throws Exception {
            return Resilience.DEFAULT.withBudget(SHARED).withHedge(Hedge.after(Duration.ofMillis(40))).execute(() -> "x");
          }
          String breakerTurnedOff() throws Exception {
            return Resilience.DEFAULT.withBudget(SHARED).withBreaker(CircuitBreaker.Config.DEFAULT).withoutBreaker()
                .execute(() -> "x");
          }
          String once() throws Exception {
            return PAYMENTS.once().execute(() -> "the same instance: its breaker, budget and histogram");
          }
          String onceOfAPreset() throws Exception {
            return Resilience.HTTP.once().execute(() -> "x");
          }
        }
        """).doTest();
  }

  @Test
  void httpClientsAndInterceptorsBuiltPerCallAreReported() {
    helper().addSourceLines("Calls.java", """
        import dev.quell.Resilience;
        import dev.quell.http.ResilientHttpClient;
        import dev.quell.okhttp.QuellInterceptor;
        import dev.quell.okhttp.QuellOkHttp;
        import java.net.URI;
        import java.net.http.HttpClient;
        import java.net.http.HttpRequest;
        import java.net.http.HttpResponse.BodyHandlers;
        import okhttp3.OkHttpClient;
        import okhttp3.Request;
        import okhttp3.Response;
        class Calls {
          static final Resilience POLICY = Resilience.HTTP.withName("inventory");
          static final HttpClient JDK = HttpClient.newHttpClient();
          static final ResilientHttpClient CLIENT = ResilientHttpClient.of(JDK, POLICY);
          static final QuellInterceptor QUELL = QuellOkHttp.interceptor(POLICY);
          String http(URI uri) throws Exception {
            HttpRequest request = HttpRequest.newBuilder(uri).build();
            // BUG: Diagnostic contains: its per-host budgets and breakers start fresh
            String a = ResilientHttpClient.of(JDK, POLICY).send(request, BodyHandlers.ofString()).body();
            // BUG: Diagnostic contains: QuellGuardPerCall
            String b = ResilientHttpClient.of(JDK).send(request, BodyHandlers.ofString()).body();
            // BUG: Diagnostic contains: resilient HTTP client
            String c = CLIENT.withScopeKey(r -> "everything").send(request, BodyHandlers.ofString()).body();
            return a + b + c;
          }
          int okhttp(OkHttpClient base, Request request) throws Exception {
            // BUG: Diagnostic contains: OkHttp interceptor
            OkHttpClient client = base.newBuilder().addInterceptor(QuellOkHttp.interceptor(POLICY)).build();
            try (Response r = client.newCall(request).execute()) {
              return r.code();
            }
          }
          int okhttpMaxKeys(OkHttpClient base, Request request) throws Exception {
            // BUG: Diagnostic contains: OkHttp interceptor
            try (Response r = base.newBuilder().addInterceptor(QUELL.withMaxKeys(10)).build().newCall(request).execute()) {
              return r.code();
            }
          }
        }
        """).doTest();
  }

  @Test
  void clientsAndInterceptorsKeptInFieldsOrReturnedAreNotReported() {
    helper().addSourceLines("Kept.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Limiter;
        import dev.quell.Resilience;
        import dev.quell.http.ResilientHttpClient;
        import dev.quell.okhttp.QuellOkHttp;
        import java.net.URI;
        import java.net.http.HttpClient;
        import java.net.http.HttpRequest;
        import java.net.http.HttpResponse.BodyHandlers;
        import okhttp3.OkHttpClient;
        import okhttp3.Request;
        import okhttp3.Response;
        class Kept {
          static final Resilience POLICY = Resilience.HTTP.withName("inventory");
          static final CircuitBreaker BREAKER = CircuitBreaker.of("inventory");
          static final Limiter LIMITER = Limiter.rate(100, 10);
          static final ResilientHttpClient HTTP = ResilientHttpClient.of(HttpClient.newHttpClient(), POLICY);
          private final OkHttpClient client;
          Kept(OkHttpClient base) {
            client = base.newBuilder().addInterceptor(QuellOkHttp.interceptor(POLICY)).build();
          }
          String call(URI uri, Request request) throws Exception {
            try (Response r = client.newCall(request).execute()) {
              return BREAKER.state() + " " + LIMITER.available()
                  + HTTP.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString()).body() + r.code()
                  + HTTP.breakersByHost() + HTTP.budgetsByHost();
            }
          }
          OkHttpClient made(OkHttpClient base) {
            return base.newBuilder().addInterceptor(QuellOkHttp.interceptor(POLICY)).build();
          }
          ResilientHttpClient perTenant(String tenant) {
            return HTTP.withScopeKey(r -> tenant);
          }
        }
        """).doTest();
  }

  @Test
  void grpcInterceptorsBuiltPerCallAreReported() {
    helper().addSourceLines("GrpcCalls.java", """
        import dev.quell.Resilience;
        import dev.quell.grpc.GrpcClassifier;
        import dev.quell.grpc.ResilienceInterceptor;
        import io.grpc.CallOptions;
        import io.grpc.Channel;
        import io.grpc.ClientInterceptors;
        import io.grpc.ManagedChannelBuilder;
        import io.grpc.stub.AbstractStub;
        import java.time.Duration;
        class GrpcCalls {
          static final Resilience POLICY = Resilience.DEFAULT.withName("inventory");
          static final ResilienceInterceptor KEPT = ResilienceInterceptor.perService(POLICY);
          <S extends AbstractStub<S>> CallOptions perService(S stub) {
            // BUG: Diagnostic contains: its per-service budgets and breakers start fresh
            return stub.withInterceptors(ResilienceInterceptor.perService(POLICY)).getCallOptions();
          }
          String perMethod(Channel channel) {
            // BUG: Diagnostic contains: gRPC interceptor
            return ClientInterceptors.intercept(channel, ResilienceInterceptor.perMethod(POLICY)).authority();
          }
          <S extends AbstractStub<S>> CallOptions copies(S stub) {
            // BUG: Diagnostic contains: gRPC interceptor
            CallOptions a = stub.withInterceptors(KEPT.withClassifier(GrpcClassifier.DEFAULT)).getCallOptions();
            // BUG: Diagnostic contains: gRPC interceptor
            CallOptions b = stub.withInterceptors(KEPT.withDeadlineSlack(Duration.ZERO)).getCallOptions();
            return a == b ? a : b;
          }
        }
        """).doTest();
  }

  @Test
  void grpcInterceptorsKeptOrHandedBackAreNotReported() {
    helper().addSourceLines("GrpcKept.java", """
        import dev.quell.Resilience;
        import dev.quell.grpc.ResilienceInterceptor;
        import io.grpc.CallOptions;
        import io.grpc.ManagedChannelBuilder;
        import io.grpc.stub.AbstractStub;
        class GrpcKept {
          static final ResilienceInterceptor QUELL = ResilienceInterceptor.of(Resilience.DEFAULT.withName("payments"));
          <S extends AbstractStub<S>> CallOptions call(S stub) {
            return stub.withInterceptors(QUELL).getCallOptions();
          }
          <S extends AbstractStub<S>> S decorated(S stub) {
            return stub.withInterceptors(ResilienceInterceptor.perService(Resilience.DEFAULT)); // the caller keeps it
          }
          ManagedChannelBuilder<?> channel(ManagedChannelBuilder<?> builder) {
            return ResilienceInterceptor.perService(Resilience.DEFAULT).applyTo(builder); // the channel keeps it
          }
        }
        """).doTest();
  }

  @Test
  void fixHoistsAPolicyThatOwnsABreakerAndNamesItAfterThePolicy() {
    BugCheckerRefactoringTestHelper.newInstance(QuellGuardPerCall.class, getClass())
        .addInputLines("Inventory.java", """
            import dev.quell.CircuitBreaker;
            import dev.quell.Resilience;
            class Inventory {
              String stock(String sku) throws Exception {
                return Resilience.NONE.withName("inventory").withBreaker(CircuitBreaker.Config.DEFAULT).execute(() -> sku);
              }
            }
            """).addOutputLines("Inventory.java", """
            import dev.quell.CircuitBreaker;
            import dev.quell.Resilience;
            class Inventory {
              private static final Resilience INVENTORY = Resilience.NONE.withName("inventory").withBreaker(CircuitBreaker.Config.DEFAULT);
              String stock(String sku) throws Exception {
                return INVENTORY.execute(() -> sku);
              }
            }
            """).doTest(TEXT_MATCH);
  }

  @Test
  void aClientBuiltPerCallInTryWithResourcesIsReportedLikeWithout() {
    helper().addSourceLines("Closing.java", """
        import dev.quell.Resilience;
        import dev.quell.http.ResilientHttpClient;
        import java.net.URI;
        import java.net.http.HttpClient;
        import java.net.http.HttpRequest;
        import java.net.http.HttpResponse.BodyHandlers;
        class Closing {
          static final Resilience POLICY = Resilience.HTTP.withName("inventory");
          static final HttpClient JDK = HttpClient.newHttpClient();
          String declared(HttpRequest request) throws Exception {
            // BUG: Diagnostic contains: its per-host budgets and breakers start fresh
            try (ResilientHttpClient client = ResilientHttpClient.of(JDK, POLICY)) {
              return client.send(request, BodyHandlers.ofString()).body();
            }
          }
          String inferred(HttpRequest request) throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            try (var client = ResilientHttpClient.of(JDK)) {
              return client.send(request, BodyHandlers.ofString()).body();
            }
          }
          String java9(HttpRequest request) throws Exception {
            // BUG: Diagnostic contains: QuellGuardPerCall
            ResilientHttpClient client = ResilientHttpClient.of(HttpClient.newHttpClient(), POLICY);
            try (client) {
              return client.send(request, BodyHandlers.ofString()).body();
            }
          }
          ResilientHttpClient handedOn(java.util.function.Consumer<ResilientHttpClient> sink) {
            try (ResilientHttpClient client = ResilientHttpClient.of(JDK, POLICY)) {
              sink.accept(client); // someone else may keep it: not provably per call
              return null;
            }
          }
        }
        """).doTest();
  }

  @Test
  void fixKeepsTheClientAndDropsTheTryThatOnlyClosedIt() {
    RealIntegrations.with(BugCheckerRefactoringTestHelper.newInstance(QuellGuardPerCall.class, getClass()))
        .addInputLines("Closing.java", """
            import dev.quell.Resilience;
            import dev.quell.http.ResilientHttpClient;
            import java.io.IOException;
            import java.io.StringReader;
            import java.net.http.HttpClient;
            import java.net.http.HttpRequest;
            import java.net.http.HttpResponse.BodyHandlers;
            class Closing {
              static final Resilience POLICY = Resilience.HTTP.withName("inventory");
              static final HttpClient JDK = HttpClient.newHttpClient();

              String only(HttpRequest request) throws Exception {
                try (ResilientHttpClient client = ResilientHttpClient.of(JDK, POLICY)) {
                  return client.send(request, BodyHandlers.ofString()).body();
                }
              }

              String withCatch(HttpRequest request) throws Exception {
                try (ResilientHttpClient client = ResilientHttpClient.of(JDK, POLICY)) {
                  return client.send(request, BodyHandlers.ofString()).body();
                } catch (IOException e) {
                  return "unavailable";
                }
              }

              String withAnother(HttpRequest request) throws Exception {
                try (StringReader reader = new StringReader("x"); ResilientHttpClient client = ResilientHttpClient.of(JDK)) {
                  return client.send(request, BodyHandlers.ofString()).body() + reader.read();
                }
              }
            }
            """).addOutputLines("Closing.java", """
            import dev.quell.Resilience;
            import dev.quell.http.ResilientHttpClient;
            import java.io.IOException;
            import java.io.StringReader;
            import java.net.http.HttpClient;
            import java.net.http.HttpRequest;
            import java.net.http.HttpResponse.BodyHandlers;
            class Closing {
              static final Resilience POLICY = Resilience.HTTP.withName("inventory");
              static final HttpClient JDK = HttpClient.newHttpClient();

              private static final ResilientHttpClient CLIENT = ResilientHttpClient.of(JDK, POLICY);
              private static final ResilientHttpClient CLIENT_2 = ResilientHttpClient.of(JDK, POLICY);
              private static final ResilientHttpClient CLIENT_3 = ResilientHttpClient.of(JDK);
              String only(HttpRequest request) throws Exception {
                {
                  return CLIENT.send(request, BodyHandlers.ofString()).body();
                }
              }

              String withCatch(HttpRequest request) throws Exception {
                try {
                  return CLIENT_2.send(request, BodyHandlers.ofString()).body();
                } catch (IOException e) {
                  return "unavailable";
                }
              }

              String withAnother(HttpRequest request) throws Exception {
                try (StringReader reader = new StringReader("x")) {
                  return CLIENT_3.send(request, BodyHandlers.ofString()).body() + reader.read();
                }
              }
            }
            """).doTest(TEXT_MATCH);
  }
}
