package dev.quell.example.spring;

import dev.quell.spring.Resilient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

/**
 * Prices, read with a plain {@code java.net.http} client: {@code @Resilient("pricing")} runs each call
 * under the policy {@code pricing}, calling the method again for each attempt.
 */
@Service
public class PriceService {
  private final HttpClient http = HttpClient.newHttpClient();
  private final URI inventory;

  public PriceService(@Value("${inventory.url}") String inventoryUrl) {
    this.inventory = URI.create(inventoryUrl);
  }

  @Resilient("pricing")
  public String price(String sku) {
    try {
      HttpResponse<String> response = http.send(HttpRequest.newBuilder(inventory.resolve("/price/" + sku)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() >= 500) {
        throw new PricingUnavailableException("pricing answered " + response.statusCode());
      }
      return response.body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
