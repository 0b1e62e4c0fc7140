package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.quell.Resilience;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The README's quick start, compiled and run against a real server on loopback. */
class QuickStartTest {

  // --- README quick start (copied verbatim into README.md) ---
  static final class InventoryClient {
    // One policy per dependency, kept in a field: its retry budget learns from all its calls.
    private static final Resilience INVENTORY = Resilience.HTTP.withName("inventory");

    private final HttpClient http = HttpClient.newHttpClient();
    private final URI base;

    InventoryClient(URI base) {
      this.base = base;
    }

    String stock(String sku) throws Exception {
      HttpRequest request = HttpRequest.newBuilder(base.resolve("/stock/" + sku)).build();
      HttpResponse<String> response =
          INVENTORY.execute(() -> http.send(request, HttpResponse.BodyHandlers.ofString()));
      return response.body();
    }
  }
  // --- end of quick start ---

  @Test
  void theQuickStartRetriesAFlakyServer() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/stock/", exchange -> {
      boolean fail = requests.incrementAndGet() == 1;
      byte[] body = (fail ? "busy" : "42").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Retry-After", "0");
      exchange.sendResponseHeaders(fail ? 503 : 200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    try {
      InventoryClient client = new InventoryClient(URI.create("http://127.0.0.1:" + server.getAddress().getPort()));
      assertThat(client.stock("sku-1")).isEqualTo("42");
      assertThat(requests).hasValue(2);
    } finally {
      server.stop(0);
    }
  }

}
