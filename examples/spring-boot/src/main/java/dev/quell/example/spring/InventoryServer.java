package dev.quell.example.spring;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * A small, flaky inventory service on its own loopback port ({@code inventory.port}), started beside the
 * shop unless {@code inventory.embedded=false}: one answer in {@code inventory.fail-every} (3) on each path
 * is a 503, so the shop's retries have something to do. A real HTTP server, so the shop's calls really leave it.
 */
@Component
@ConditionalOnBooleanProperty(name = "inventory.embedded", matchIfMissing = true)
class InventoryServer implements DisposableBean {
  private static final Log LOG = LogFactory.getLog(InventoryServer.class);

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final int failEvery;

  InventoryServer(@Value("${inventory.port}") int port, @Value("${inventory.fail-every:3}") int failEvery)
      throws IOException {
    this.failEvery = failEvery;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
    AtomicLong stock = new AtomicLong();
    AtomicLong price = new AtomicLong();
    server.createContext("/stock/", exchange -> answer(exchange, "/stock/", "%s: 7 in stock", stock));
    server.createContext("/price/", exchange -> answer(exchange, "/price/", "%s: 12.50 EUR", price));
    server.setExecutor(executor);
    server.start();
    LOG.info("inventory service (flaky: 1 in " + failEvery + " answers is a 503) on http://127.0.0.1:"
        + server.getAddress().getPort());
  }

  private void answer(HttpExchange exchange, String prefix, String format, AtomicLong requests) throws IOException {
    try (exchange) {
      String sku = exchange.getRequestURI().getPath().substring(prefix.length());
      boolean fail = failEvery > 0 && requests.incrementAndGet() % failEvery == 1 % failEvery;
      int status = fail ? 503 : 200;
      byte[] body = (fail ? "inventory is busy" : String.format(format, sku)).getBytes(StandardCharsets.UTF_8);
      LOG.info("inventory: " + exchange.getRequestMethod() + " " + exchange.getRequestURI() + " -> " + status
          + " (attempt header " + exchange.getRequestHeaders().getFirst("X-Quell-Attempt") + ")");
      exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void destroy() {
    server.stop(0);
    executor.shutdownNow();
  }
}
