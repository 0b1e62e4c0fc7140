/** An application on the module path with Quell's OkHttp interceptor. */
module app.okhttp {
  requires app.support;
  requires dev.quell.okhttp;
  requires okhttp3;
}
