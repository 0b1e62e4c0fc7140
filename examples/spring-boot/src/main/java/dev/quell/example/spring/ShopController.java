package dev.quell.example.spring;

import dev.quell.spring.QuellRestClientInterceptor;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/** The shop's answers, each from the inventory service. */
@RestController
class ShopController {
  private final RestClient inventory;
  private final PriceService prices;

  ShopController(RestClient.Builder rest, @Value("${inventory.url}") String inventoryUrl, PriceService prices) {
    this.inventory = rest
        .baseUrl(inventoryUrl)
        .defaultRequest(request -> request.attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "inventory"))
        .build();
    this.prices = prices;
  }

  /** Through the RestClient: the starter's interceptor runs the call under the policy {@code inventory}. */
  @GetMapping("/stock/{sku}")
  @org.jspecify.annotations.Nullable String stock(@PathVariable String sku) { // (an empty body reads as null)
    return inventory.get().uri("/stock/{sku}", sku).retrieve().body(String.class);
  }

  /** Through a {@code @Resilient} method. */
  @GetMapping("/price/{sku}")
  String price(@PathVariable String sku) {
    return prices.price(sku);
  }
}
