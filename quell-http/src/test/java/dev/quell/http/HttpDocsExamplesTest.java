package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.quell.CircuitBreaker;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The java.net.http and server examples of docs/http.md, verbatim, run against loopback servers. */
@Timeout(60)
class HttpDocsExamplesTest {
  static final ResilientHttpClient CATALOG = ResilientHttpClient.of(
      HttpClient.newHttpClient(),
      Resilience.HTTP.withName("catalog").withDeadline(Duration.ofSeconds(2)));

  static final ResilientHttpClient INVENTORY = ResilientHttpClient.of(
      HttpClient.newHttpClient(),
      Resilience.HTTP.withName("inventory").withBreaker(CircuitBreaker.Config.DEFAULT));

  private JdkServer backend;
  private String base;

  @BeforeEach
  void start() throws Exception {
    backend = new JdkServer();
    base = backend.uri("").toString();
  }

  @AfterEach
  void stop() throws Exception {
    backend.close();
  }

  @Test
  void sendingThroughTheClient() throws Exception {
    backend.then(JdkServer.status(503, ""), JdkServer.status(200, "item 42"));

    HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/items/42")).build();
    HttpResponse<String> response = CATALOG.send(request, BodyHandlers.ofString());

    assertThat(response.body()).isEqualTo("item 42");
    assertThat(backend.requests()).hasSize(2);
  }

  @Test
  void markingAPostRepeatable() throws Exception {
    backend.then(JdkServer.status(503, ""), JdkServer.status(201, "placed"), JdkServer.status(503, ""),
        JdkServer.status(200, "patched"));
    String orderId = "order-7f3a";
    String json = "{\"sku\":\"42\"}";
    HttpRequest patch = HttpRequest.newBuilder(URI.create(base + "/items/42"))
        .method("PATCH", BodyPublishers.ofString(json)).build();

    HttpRequest order = HttpRequest.newBuilder(URI.create(base + "/orders"))
        .header("Idempotency-Key", orderId)
        .POST(BodyPublishers.ofString(json))
        .build();
    HttpResponse<String> placed = CATALOG.send(order, BodyHandlers.ofString());

    HttpResponse<String> patched = CATALOG.send(patch, BodyHandlers.ofString(), Repeatable.YES);

    assertThat(placed.body()).isEqualTo("placed");
    assertThat(patched.body()).isEqualTo("patched");
  }

  @Test
  void cancellingAnAsyncSend() throws Exception {
    try (RawServer hung = new RawServer().then(RawServer.HANG)) {
      HttpRequest request = HttpRequest.newBuilder(hung.uri("/items/42")).build();

      CompletableFuture<HttpResponse<String>> pending = CATALOG.sendAsync(request, BodyHandlers.ofString());
      // ... the user navigated away
      pending.cancel(true); // aborts the exchange in flight; no retry starts

      assertThat(pending).isCancelled();
      assertThat(org.assertj.core.api.Assertions.catchThrowable(pending::join)).isInstanceOf(CancellationException.class);
    }
  }

  @Test
  void budgetsPerHost() throws Exception {
    CATALOG.send(HttpRequest.newBuilder(URI.create(base + "/items/1")).build(), BodyHandlers.ofString());

    Map<String, RetryBudget> budgets = CATALOG.budgetsByHost();   // "127.0.0.1:PORT" -> its budget
    budgets.forEach((host, budget) -> System.out.printf("%s %.0f%% spent%n", host, 100 * budget.utilization()));

    assertThat(budgets).containsKey("127.0.0.1:" + backend.uri("/").getPort());
  }

  @Test
  void breakersPerHost() throws Exception {
    INVENTORY.send(HttpRequest.newBuilder(URI.create(base + "/stock/1")).build(), BodyHandlers.ofString());

    Map<String, CircuitBreaker> breakers = INVENTORY.breakersByHost();   // "127.0.0.1:PORT" -> its breaker
    breakers.forEach((host, breaker) -> System.out.printf("%s %s%n", host, breaker.state()));

    String host = "127.0.0.1:" + backend.uri("/").getPort();
    assertThat(breakers).containsKey(host);
    assertThat(breakers.get(host).state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(breakers.get(host).name()).isEqualTo("inventory:" + host);
  }

  @Test
  void theJdkServerFilter() throws Exception {
    HttpHandler handler = exchange -> {
      byte[] body = FilteredServer.describeContext().getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    };

    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", handler).getFilters().add(new QuellHttpServerFilter(
        ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(10))));
    server.start();

    try {
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/")).header("X-Deadline-Ms", "60000").build(),
          BodyHandlers.ofString());
      assertThat(Long.parseLong(r.body().split(" ")[0])).isBetween(1L, 10_000L);
    } finally {
      server.stop(0);
    }
  }

  @Test
  void aHandlerThatCallsOnwards() throws Exception {
    backend.then(JdkServer.status(200, "in stock"));
    URI stockUri = backend.uri("/stock/42");
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/price", exchange -> {
      // The caller's X-Deadline-Ms is the ambient deadline here: this call gives up when the caller does,
      // and tells the stock service how long that is.
      HttpResponse<String> stock = CATALOG.sendAsync(HttpRequest.newBuilder(stockUri).build(), BodyHandlers.ofString()).join();
      byte[] body = stock.body().getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    }).getFilters().add(new QuellHttpServerFilter());
    server.start();

    try {
      HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/price")).header("X-Deadline-Ms", "700").build(),
          BodyHandlers.ofString());
      assertThat(Long.parseLong(backend.requests().get(0).getFirst("X-Deadline-Ms"))).isBetween(1L, 700L);
    } finally {
      server.stop(0);
    }
  }

  @Test
  void theServletFilter() throws Exception {
    Server jetty = new Server();
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    jetty.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        RetryMarker caller = (RetryMarker) request.getAttribute(RetryMarker.ATTRIBUTE);
        response.getWriter().write(FilteredServer.describeContext() + " " + caller);
      }
    }), "/*");
    context.addEventListener(new ServletContextListener() {
      @Override
      public void contextInitialized(ServletContextEvent event) {
        ServletContext servletContext = event.getServletContext();

        servletContext.addFilter("quell", new QuellServletFilter(
                ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(10))))
            .addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");
      }
    });
    jetty.setHandler(context);
    jetty.start();

    try {
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/")).header("X-Deadline-Ms", "60000")
          .header("X-Criticality", "SHEDDABLE").header("X-Quell-Attempt", "2/3").build(), BodyHandlers.ofString());
      String[] seen = r.body().split(" ");
      assertThat(Long.parseLong(seen[0])).isBetween(1L, 10_000L);
      assertThat(seen[1]).isEqualTo("SHEDDABLE");
      assertThat(seen[2]).isEqualTo("RetryMarker[2/3]");
    } finally {
      jetty.stop();
    }
  }

  @Test
  void readingTheRetryMarkerOnTheJdkServer() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", exchange -> {
      RetryMarker caller = RetryMarker.parse(exchange.getRequestHeaders().getFirst(RetryMarker.HEADER)).orElse(null);
      boolean callerRetries = caller != null;   // then retrying here too multiplies the load: retry less
      byte[] body = (callerRetries + " " + caller).getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    try {
      HttpResponse<String> r = ResilientHttpClient.of(HttpClient.newHttpClient()).send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/")).build(), BodyHandlers.ofString());
      assertThat(r.body()).isEqualTo("true RetryMarker[1/3]");
    } finally {
      server.stop(0);
    }
  }
}
