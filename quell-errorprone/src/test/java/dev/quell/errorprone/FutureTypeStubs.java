package dev.quell.errorprone;

/**
 * STUBS, not Quell code: minimal stand-ins for types that are not on main yet (the circuit breaker,
 * the limiters, the HTTP, OkHttp and gRPC integrations) and for the OkHttp and gRPC types they plug
 * into. The checks match these types by fully qualified name, so these stubs exercise the same
 * matchers the real types will meet. When a real type lands, its stub here should be deleted and
 * the test moved onto the real artifact.
 */
final class FutureTypeStubs {
  static final String CIRCUIT_BREAKER_STUB = """
      package dev.quell;
      /** STUB of the coming dev.quell.CircuitBreaker. */
      public final class CircuitBreaker {
        public static CircuitBreaker of(String name) { return new CircuitBreaker(); }
        public boolean tryAcquire() { return true; }
      }
      """;

  static final String LIMITER_STUB = """
      package dev.quell;
      /** STUB of the coming dev.quell.Limiter. */
      public final class Limiter {
        public static Limiter rate(double perSecond, int burst) { return new Limiter(); }
        public static Limiter concurrency(int limit) { return new Limiter(); }
        public static Limiter adaptive() { return new Limiter(); }
        public boolean tryAcquire() { return true; }
      }
      """;

  static final String HTTP_CLIENT_STUB = """
      package dev.quell.http;
      import dev.quell.Resilience;
      import java.net.http.HttpClient;
      /** STUB of the coming dev.quell.http.ResilientHttpClient. */
      public final class ResilientHttpClient {
        public static ResilientHttpClient of(Resilience policy) { return new ResilientHttpClient(); }
        public static ResilientHttpClient wrap(HttpClient client, Resilience policy) { return new ResilientHttpClient(); }
        public String get(String uri) { return uri; }
      }
      """;

  static final String OKHTTP_STUB = """
      package dev.quell.okhttp;
      import dev.quell.Resilience;
      /** STUB of the coming dev.quell.okhttp.QuellOkHttp. */
      public final class QuellOkHttp {
        public static okhttp3.Interceptor interceptor(Resilience policy) { return new okhttp3.Interceptor() {}; }
      }
      """;

  static final String OKHTTP3_INTERCEPTOR_STUB = """
      package okhttp3;
      /** STUB of OkHttp's Interceptor. */
      public interface Interceptor {}
      """;

  static final String OKHTTP3_CLIENT_STUB = """
      package okhttp3;
      /** STUB of OkHttp's client, its builder and a call. */
      public class OkHttpClient {
        public Builder newBuilder() { return new Builder(); }
        public String newCall(String request) { return request; }
        public static final class Builder {
          public Builder addInterceptor(Interceptor interceptor) { return this; }
          public OkHttpClient build() { return new OkHttpClient(); }
        }
      }
      """;

  static final String GRPC_INTERCEPTOR_STUB = """
      package dev.quell.grpc;
      import dev.quell.Resilience;
      /** STUB of the coming dev.quell.grpc.ResilienceInterceptor. */
      public final class ResilienceInterceptor implements io.grpc.ClientInterceptor {
        public ResilienceInterceptor(Resilience policy) {}
        public static ResilienceInterceptor of(Resilience policy) { return new ResilienceInterceptor(policy); }
      }
      """;

  static final String GRPC_CLIENT_INTERCEPTOR_STUB = """
      package io.grpc;
      /** STUB of gRPC's ClientInterceptor. */
      public interface ClientInterceptor {}
      """;

  static final String GRPC_STUB_STUB = """
      package io.grpc.stub;
      /** STUB of gRPC's AbstractStub. */
      public abstract class AbstractStub<S extends AbstractStub<S>> {
        public abstract S withInterceptors(io.grpc.ClientInterceptor... interceptors);
        public String call(String request) { return request; }
      }
      """;

  private FutureTypeStubs() {}
}
