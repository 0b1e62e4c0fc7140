/**
 * What the application modules here share: the friend check and a loopback HTTP server. It does not
 * require dev.quell, so that it never brings the core into an application's module graph by itself.
 */
module app.support {
  requires jdk.httpserver;
  exports app.support;
}
