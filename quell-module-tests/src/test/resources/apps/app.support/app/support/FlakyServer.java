package app.support;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/** A real HTTP server on loopback that answers 503 with Retry-After: 0 once, then 200 "hello". */
public final class FlakyServer implements AutoCloseable {
  private final HttpServer server;
  private final AtomicInteger requests = new AtomicInteger();

  public FlakyServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", exchange -> {
      try (exchange) {
        exchange.getRequestBody().readAllBytes();
        if (requests.incrementAndGet() == 1) {
          exchange.getResponseHeaders().set("Retry-After", "0");
          exchange.sendResponseHeaders(503, -1);
          return;
        }
        byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    });
    server.start();
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/inventory");
  }

  public int requests() {
    return requests.get();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
