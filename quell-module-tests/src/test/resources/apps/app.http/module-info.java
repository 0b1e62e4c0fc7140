/** An application on the module path with Quell around java.net.http. */
module app.http {
  requires app.support;
  requires dev.quell.http;
  requires java.net.http;
}
