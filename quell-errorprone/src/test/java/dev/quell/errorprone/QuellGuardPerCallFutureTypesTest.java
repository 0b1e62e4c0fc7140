package dev.quell.errorprone;

import static dev.quell.errorprone.FutureTypeStubs.CIRCUIT_BREAKER_STUB;
import static dev.quell.errorprone.FutureTypeStubs.GRPC_CLIENT_INTERCEPTOR_STUB;
import static dev.quell.errorprone.FutureTypeStubs.GRPC_INTERCEPTOR_STUB;
import static dev.quell.errorprone.FutureTypeStubs.GRPC_STUB_STUB;
import static dev.quell.errorprone.FutureTypeStubs.HTTP_CLIENT_STUB;
import static dev.quell.errorprone.FutureTypeStubs.LIMITER_STUB;
import static dev.quell.errorprone.FutureTypeStubs.OKHTTP3_CLIENT_STUB;
import static dev.quell.errorprone.FutureTypeStubs.OKHTTP3_INTERCEPTOR_STUB;
import static dev.quell.errorprone.FutureTypeStubs.OKHTTP_STUB;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

/**
 * The guard check on the types that are not on main yet, compiled against the STUBS in
 * {@link FutureTypeStubs}: the check matches them by name, so it works as soon as they land.
 */
class QuellGuardPerCallFutureTypesTest {
  private CompilationTestHelper helper() {
    return CompilationTestHelper.newInstance(QuellGuardPerCall.class, getClass())
        .addSourceLines("dev/quell/CircuitBreaker.java", CIRCUIT_BREAKER_STUB)
        .addSourceLines("dev/quell/Limiter.java", LIMITER_STUB)
        .addSourceLines("dev/quell/http/ResilientHttpClient.java", HTTP_CLIENT_STUB)
        .addSourceLines("dev/quell/okhttp/QuellOkHttp.java", OKHTTP_STUB)
        .addSourceLines("okhttp3/Interceptor.java", OKHTTP3_INTERCEPTOR_STUB)
        .addSourceLines("okhttp3/OkHttpClient.java", OKHTTP3_CLIENT_STUB)
        .addSourceLines("dev/quell/grpc/ResilienceInterceptor.java", GRPC_INTERCEPTOR_STUB)
        .addSourceLines("io/grpc/ClientInterceptor.java", GRPC_CLIENT_INTERCEPTOR_STUB)
        .addSourceLines("io/grpc/stub/AbstractStub.java", GRPC_STUB_STUB);
  }

  @Test
  void breakersLimitersClientsAndInterceptorsBuiltPerCallAreReported() {
    helper().addSourceLines("Calls.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Limiter;
        import dev.quell.Resilience;
        import dev.quell.grpc.ResilienceInterceptor;
        import dev.quell.http.ResilientHttpClient;
        import dev.quell.okhttp.QuellOkHttp;
        import io.grpc.stub.AbstractStub;
        import java.net.http.HttpClient;
        import okhttp3.OkHttpClient;
        class Calls {
          static final Resilience POLICY = Resilience.HTTP.withName("inventory");
          static final HttpClient JDK = HttpClient.newHttpClient();
          boolean breaker() {
            // BUG: Diagnostic contains: it never sees more than one call, so it can never open
            return CircuitBreaker.of("inventory").tryAcquire();
          }
          boolean limiters() {
            // BUG: Diagnostic contains: each call gets a fresh allowance
            Limiter rate = Limiter.rate(100, 10);
            // BUG: Diagnostic contains: QuellGuardPerCall
            boolean c = Limiter.concurrency(8).tryAcquire();
            // BUG: Diagnostic contains: QuellGuardPerCall
            boolean a = Limiter.adaptive().tryAcquire();
            return rate.tryAcquire() && c && a;
          }
          String http() {
            // BUG: Diagnostic contains: its per-host budgets and breakers start fresh
            String a = ResilientHttpClient.of(POLICY).get("/a");
            // BUG: Diagnostic contains: QuellGuardPerCall
            String b = ResilientHttpClient.wrap(JDK, POLICY).get("/b");
            return a + b;
          }
          String okhttp(OkHttpClient base) {
            // BUG: Diagnostic contains: OkHttp interceptor
            OkHttpClient client = base.newBuilder().addInterceptor(QuellOkHttp.interceptor(POLICY)).build();
            return client.newCall("/stock");
          }
          <S extends AbstractStub<S>> String grpc(S stub) {
            // BUG: Diagnostic contains: per-service budgets
            String a = stub.withInterceptors(new ResilienceInterceptor(POLICY)).call("hello");
            // BUG: Diagnostic contains: QuellGuardPerCall
            return a + stub.withInterceptors(ResilienceInterceptor.of(POLICY)).call("again");
          }
          <S extends AbstractStub<S>> S grpcKept(S stub) {
            return stub.withInterceptors(new ResilienceInterceptor(POLICY)); // the caller keeps the stub
          }
        }
        """).doTest();
  }

  @Test
  void theSameGuardsKeptInFieldsAreNotReported() {
    helper().addSourceLines("Kept.java", """
        import dev.quell.CircuitBreaker;
        import dev.quell.Limiter;
        import dev.quell.Resilience;
        import dev.quell.grpc.ResilienceInterceptor;
        import dev.quell.http.ResilientHttpClient;
        import dev.quell.okhttp.QuellOkHttp;
        import okhttp3.OkHttpClient;
        class Kept {
          static final Resilience POLICY = Resilience.HTTP.withName("inventory");
          static final CircuitBreaker BREAKER = CircuitBreaker.of("inventory");
          static final Limiter LIMITER = Limiter.rate(100, 10);
          static final ResilientHttpClient HTTP = ResilientHttpClient.of(POLICY);
          static final ResilienceInterceptor GRPC = ResilienceInterceptor.of(POLICY);
          private final OkHttpClient client;
          Kept(OkHttpClient base) {
            client = base.newBuilder().addInterceptor(QuellOkHttp.interceptor(POLICY)).build();
          }
          String call() {
            return BREAKER.tryAcquire() + " " + LIMITER.tryAcquire() + HTTP.get("/a") + client.newCall("/b") + GRPC;
          }
          OkHttpClient made(OkHttpClient base) {
            return base.newBuilder().addInterceptor(QuellOkHttp.interceptor(POLICY)).build();
          }
        }
        """).doTest();
  }
}
