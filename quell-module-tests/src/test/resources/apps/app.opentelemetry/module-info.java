/** An application on the module path with OpenTelemetry metrics for its policy. */
module app.opentelemetry {
  requires app.support;
  requires dev.quell;
  requires dev.quell.opentelemetry;
  requires io.opentelemetry.api;
}
