/**
 * Quell's core: {@code dev.quell} is the whole public API. {@code dev.quell.internal} holds the seams
 * Quell's own modules share (telemetry observers, the budget tracker); it is exported to them alone,
 * so on the module path no other code can reach it.
 */
@SuppressWarnings("module") // the friends below are optional: each exists only when its module is on the path
module dev.quell {
  requires static org.jspecify;
  requires static java.net.http; // only Classifier.HTTP looks at HttpResponse, and only when one is there
  // Flight Recorder events (docs/jfr.md), when the runtime has the module: a trimmed image without it
  // runs as before and records nothing (internal.jfr.QuellJfr links no jdk.jfr type)
  requires static jdk.jfr;

  exports dev.quell;
  exports dev.quell.internal to
      dev.quell.micrometer,
      dev.quell.opentelemetry,
      dev.quell.slf4j,
      dev.quell.sim,
      dev.quell.http,
      dev.quell.okhttp,
      dev.quell.grpc,
      dev.quell.reactor,
      dev.quell.kotlin,
      dev.quell.spring;
}
