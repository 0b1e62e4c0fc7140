package dev.quell.spring.shop;

import dev.quell.spring.QuellRestClientInterceptor;
import dev.quell.spring.QuellWebClientFilter;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/** A small shop that calls an inventory service: the application the integration tests run, for real, on a random port. */
@SpringBootApplication
public class ShopApplication {
  public static void main(String[] args) {
    SpringApplication.run(ShopApplication.class, args);
  }

  /** What the docs show. */
  @RestController
  static class ShopController {
    private final RestClient inventory;
    private final WebClient inventoryAsync;

    ShopController(RestClient.Builder rest, WebClient.Builder web, @Value("${inventory.url}") String inventoryUrl) {
      this.inventory = rest
          .baseUrl(inventoryUrl)
          .defaultRequest(request -> request.attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, "inventory"))
          .build();
      this.inventoryAsync = web
          .baseUrl(inventoryUrl)
          .defaultRequest(request -> request.attribute(QuellWebClientFilter.POLICY_ATTRIBUTE, "inventory"))
          .build();
    }

    @GetMapping("/stock/{sku}")
    String stock(@PathVariable String sku) {
      return inventory.get().uri("/stock/{sku}", sku).retrieve().body(String.class);
    }

    @GetMapping("/stock-async/{sku}")
    Mono<String> stockAsync(@PathVariable String sku) {
      return inventoryAsync.get().uri("/stock/{sku}", sku).retrieve().bodyToMono(String.class);
    }
  }

  /** For the tests: any path of any dependency, under any policy, through either client. */
  @RestController
  static class ProxyController {
    private final RestClient rest;
    private final WebClient web;

    ProxyController(RestClient.Builder rest, WebClient.Builder web) {
      this.rest = rest.build();
      this.web = web.build();
    }

    @GetMapping("/proxy")
    String proxy(@RequestParam String url, @RequestParam String policy) {
      return rest.get().uri(url).attribute(QuellRestClientInterceptor.POLICY_ATTRIBUTE, policy).retrieve().body(String.class);
    }

    @GetMapping("/proxy-async")
    Mono<String> proxyAsync(@RequestParam String url, @RequestParam String policy) {
      return web.get().uri(url).attribute(QuellWebClientFilter.POLICY_ATTRIBUTE, policy).retrieve().bodyToMono(String.class);
    }
  }
}
