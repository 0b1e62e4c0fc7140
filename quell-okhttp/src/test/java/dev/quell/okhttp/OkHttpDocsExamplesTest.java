package dev.quell.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.http.Repeatable;
import java.time.Duration;
import java.util.Map;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The OkHttp examples of docs/http.md, verbatim, run against MockWebServer. */
@Timeout(60)
class OkHttpDocsExamplesTest {
  private static final MediaType JSON = MediaType.get("application/json");

  @Test
  void addingTheInterceptor() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")
          .addHeader("Date", "Wed, 21 Oct 2015 07:27:59 GMT").build());
      server.enqueue(new MockResponse.Builder().code(200).body("item 42").build());
      server.start();
      HttpUrl base = server.url("/");

      QuellInterceptor quell = QuellOkHttp.interceptor(Resilience.HTTP.withName("catalog"));
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(quell)                                 // an application interceptor: it retries
          .addNetworkInterceptor(quell.networkInterceptor())     // keeps OkHttp from resending a 503 itself
          .callTimeout(Duration.ofSeconds(5))    // becomes the deadline of each call, retries included
          .build();

      try (Response response = client.newCall(new Request.Builder().url(base.resolve("/items/42")).build()).execute()) {
        assertThat(response.body().string()).isEqualTo("item 42");
      }
      Map<String, RetryBudget> budgets = quell.budgetsByHost();
      assertThat(budgets).hasSize(1);
      assertThat(server.getRequestCount()).isEqualTo(2);
    }
  }

  @Test
  void taggingARequestRepeatable() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().code(200).body("patched").build());
      server.start();
      HttpUrl base = server.url("/");
      String json = "{\"price\":12}";
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(QuellOkHttp.interceptor()).build();

      Request patch = new Request.Builder()
          .url(base.resolve("/items/42"))
          .patch(RequestBody.create(json, JSON))
          .tag(Repeatable.class, Repeatable.YES)   // PATCH is retried only when you say so
          .build();

      try (Response response = client.newCall(patch).execute()) {
        assertThat(response.body().string()).isEqualTo("patched");
      }
    }
  }
}
