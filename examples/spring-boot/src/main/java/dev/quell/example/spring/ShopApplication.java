package dev.quell.example.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The shop: {@code GET /stock/{sku}} asks the inventory service through a {@code RestClient} under the
 * policy {@code inventory}, {@code GET /price/{sku}} goes through a {@code @Resilient("pricing")} method.
 * Unless {@code inventory.url} names a service of your own, the shop starts a small, flaky one beside it
 * ({@link InventoryServer}), so the example runs with one command and shows retries.
 */
@SpringBootApplication
public class ShopApplication {
  public static void main(String[] args) {
    SpringApplication.run(ShopApplication.class, args);
  }
}
