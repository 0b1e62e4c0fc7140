/** An application on the module path with Quell's gRPC interceptor (grpc-api only, no transport). */
module app.grpc {
  requires app.support;
  requires dev.quell;
  requires dev.quell.grpc;
  requires io.grpc;
}
