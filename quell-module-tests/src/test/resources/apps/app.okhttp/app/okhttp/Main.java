package app.okhttp;

import app.support.FlakyServer;
import app.support.Friends;
import dev.quell.okhttp.QuellOkHttp;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The interceptor classifies each response through quell-http's ResponseClassifier and the core's
 * HttpClassification: a 503 from a real loopback server is retried, the 200 comes back.
 */
public final class Main {
  public static void main(String[] args) throws Exception {
    Friends.check("dev.quell.okhttp", QuellOkHttp.class);
    try (FlakyServer server = new FlakyServer()) {
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(QuellOkHttp.interceptor()).build();
      try (Response response = client.newCall(new Request.Builder().url(server.uri().toString()).build()).execute()) {
        System.out.println("quell-okhttp on the module path: " + response.code() + " " + response.body().string()
            + " after " + server.requests() + " requests");
      } finally {
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
    }
  }
}
