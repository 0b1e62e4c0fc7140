package dev.quell.errorprone;

/**
 * STUBS of the gRPC integration, which is not on main yet: a minimal {@code dev.quell.grpc.ResilienceInterceptor}
 * and the two gRPC types it plugs into. The checks match the interceptor by fully qualified name, so these
 * exercise the same matchers the real type will meet. When quell-grpc lands, delete this file and move
 * {@link QuellGuardPerCallGrpcStubTest} onto the real types, as was done for the breaker, the limiters and
 * the HTTP clients ({@link QuellGuardPerCallIntegrationsTest}).
 */
final class GrpcStubs {
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

  private GrpcStubs() {}
}
