package dev.quell.errorprone;

import static dev.quell.errorprone.GrpcStubs.GRPC_CLIENT_INTERCEPTOR_STUB;
import static dev.quell.errorprone.GrpcStubs.GRPC_INTERCEPTOR_STUB;
import static dev.quell.errorprone.GrpcStubs.GRPC_STUB_STUB;

import com.google.errorprone.CompilationTestHelper;
import org.junit.jupiter.api.Test;

/**
 * The guard check on gRPC's interceptor, compiled against the STUBS in {@link GrpcStubs} until quell-grpc
 * lands: the check matches the interceptor by name, so it works as soon as the real type exists.
 */
class QuellGuardPerCallGrpcStubTest {
  private CompilationTestHelper helper() {
    return CompilationTestHelper.newInstance(QuellGuardPerCall.class, getClass())
        .addSourceLines("dev/quell/grpc/ResilienceInterceptor.java", GRPC_INTERCEPTOR_STUB)
        .addSourceLines("io/grpc/ClientInterceptor.java", GRPC_CLIENT_INTERCEPTOR_STUB)
        .addSourceLines("io/grpc/stub/AbstractStub.java", GRPC_STUB_STUB);
  }

  @Test
  void interceptorsBuiltPerCallAreReported() {
    helper().addSourceLines("Calls.java", """
        import dev.quell.Resilience;
        import dev.quell.grpc.ResilienceInterceptor;
        import io.grpc.stub.AbstractStub;
        class Calls {
          static final Resilience POLICY = Resilience.HTTP.withName("inventory");
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
  void anInterceptorKeptInAFieldIsNotReported() {
    helper().addSourceLines("Kept.java", """
        import dev.quell.Resilience;
        import dev.quell.grpc.ResilienceInterceptor;
        import io.grpc.stub.AbstractStub;
        class Kept {
          static final ResilienceInterceptor GRPC = ResilienceInterceptor.of(Resilience.HTTP.withName("inventory"));
          <S extends AbstractStub<S>> String call(S stub) {
            return stub.withInterceptors(GRPC).call("hello");
          }
        }
        """).doTest();
  }
}
