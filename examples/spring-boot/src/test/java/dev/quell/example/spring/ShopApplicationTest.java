package dev.quell.example.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example as a user runs it (its own application.yml, its flaky inventory service beside it), on
 * free loopback ports: the shop's answers come through the retries, and the actuator shows the policies.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ShopApplicationTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  @DynamicPropertySource
  static void inventoryPort(DynamicPropertyRegistry registry) throws IOException {
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = free.getLocalPort();
      registry.add("inventory.port", () -> port);
    }
  }

  @LocalServerPort
  int port;

  HttpResponse<String> get(String path) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(30))
        .build();
    return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void everyAnswerComesThroughAlthoughTheInventoryFailsOneRequestInThree() throws Exception {
    for (int i = 0; i < 6; i++) {
      HttpResponse<String> stock = get("/stock/sku-" + i);
      assertThat(stock.statusCode()).isEqualTo(200);
      assertThat(stock.body()).isEqualTo("sku-" + i + ": 7 in stock");
      HttpResponse<String> price = get("/price/sku-" + i);
      assertThat(price.statusCode()).isEqualTo(200);
      assertThat(price.body()).isEqualTo("sku-" + i + ": 12.50 EUR");
    }
    String scrape = get("/actuator/prometheus").body();
    assertThat(scrape)
        .containsPattern("quell_attempts_total\\{[^}]*kind=\"retry\"[^}]*"
            + "quell_policy=\"inventory:127.0.0.1:[0-9]+\"[^}]*} [1-9]")
        .containsPattern("quell_attempts_total\\{[^}]*kind=\"retry\"[^}]*quell_policy=\"pricing\"[^}]*} [1-9]");
  }

  @Test
  void theActuatorEndpointListsTheConfiguredPolicies() throws Exception {
    HttpResponse<String> quell = get("/actuator/quell");
    assertThat(quell.statusCode()).isEqualTo(200);
    assertThat(quell.body()).contains("\"inventory\"", "\"pricing\"");
  }
}
