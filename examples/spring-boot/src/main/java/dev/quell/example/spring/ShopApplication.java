package dev.quell.example.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The shop: {@code GET /stock/{sku}} asks the inventory service through a {@code RestClient} under the
 * policy {@code inventory}, {@code GET /price/{sku}} goes through a {@code @Resilient("pricing")} method.
 * The shop starts a small, flaky inventory service beside it ({@link InventoryServer}), so the example runs
 * with one command and shows retries; to call a service of your own instead, set {@code inventory.url} and
 * {@code inventory.embedded=false}.
 */
@SpringBootApplication
public class ShopApplication {
  public static void main(String[] args) {
    SpringApplication.run(ShopApplication.class, args);
  }
}
