package lookalike;

import dev.quell.Resilience;
import dev.quell.http.ResilientHttpClient;
import dev.quell.okhttp.QuellOkHttp;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/** Quell's clients kept in fields, closed where they are owned, and called once per request. */
public class Clients implements AutoCloseable {
  private static final Resilience SYNC = Resilience.DEFAULT.withName("sync");
  private static final ResilientHttpClient CATALOG = ResilientHttpClient.of(HttpClient.newHttpClient());
  private static final ResilientHttpClient SINGLE = ResilientHttpClient.of(HttpClient.newHttpClient(), Resilience.HTTP.withAttempts(1));
  private static final OkHttpClient OK = new OkHttpClient.Builder().addInterceptor(QuellOkHttp.interceptor()).build();
  private final ResilientHttpClient owned = ResilientHttpClient.of(HttpClient.newHttpClient());

  String item(HttpRequest request) throws Exception {
    return CATALOG.send(request, BodyHandlers.ofString()).body();
  }

  String oncePerLayer(HttpRequest request) throws Exception {
    return SYNC.once().execute(() -> CATALOG.send(request, BodyHandlers.ofString()).body())
        + SYNC.execute(() -> SINGLE.send(request, BodyHandlers.ofString()).body());
  }

  int okhttp(Request request) throws Exception {
    try (Response response = OK.newCall(request).execute()) {
      return response.code();
    }
  }

  String borrowed(HttpRequest request) throws Exception {
    try (ResilientHttpClient client = owned) {
      return client.send(request, BodyHandlers.ofString()).body();
    }
  }

  @Override
  public void close() {
    owned.close();
  }
}
