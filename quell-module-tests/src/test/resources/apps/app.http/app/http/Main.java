package app.http;

import app.support.FlakyServer;
import app.support.Friends;
import dev.quell.http.ResilientHttpClient;
import dev.quell.http.RetryAfter;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;

/**
 * RetryAfter reads the core's HttpClassification, and ResilientHttpClient classifies each response
 * with it: a 503 from a real loopback server is retried, the 200 comes back.
 */
public final class Main {
  public static void main(String[] args) throws Exception {
    Friends.check("dev.quell.http", ResilientHttpClient.class);
    long seconds = RetryAfter.parse("7", Instant.EPOCH).orElseThrow().toSeconds();
    try (FlakyServer server = new FlakyServer()) {
      ResilientHttpClient client = ResilientHttpClient.of(HttpClient.newHttpClient());
      HttpResponse<String> response = client.send(HttpRequest.newBuilder(server.uri()).build(),
          HttpResponse.BodyHandlers.ofString());
      System.out.println("quell-http on the module path: " + response.statusCode() + " " + response.body()
          + " after " + server.requests() + " requests; Retry-After 7 is " + seconds + " s");
    }
  }
}
