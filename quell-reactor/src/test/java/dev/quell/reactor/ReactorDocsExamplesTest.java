package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.quell.Backoff;
import dev.quell.Classifier;
import dev.quell.Criticality;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.Verdict;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The Java examples of docs/reactor.md, compiled and run here (the WebClient filter against a real
 * server on a loopback port); the last test checks that the page shows each of them verbatim.
 */
class ReactorDocsExamplesTest {
  private HttpServer server;
  private final AtomicInteger requests = new AtomicInteger();
  private final List<String> deadlineHeaders = new CopyOnWriteArrayList<>();
  private String base;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/stock", exchange -> {
      deadlineHeaders.add(String.valueOf(exchange.getRequestHeaders().getFirst("X-Deadline-Ms")));
      byte[] body;
      int status;
      if (requests.incrementAndGet() == 1) {
        status = 503;
        body = "busy".getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Retry-After", "1");
      } else {
        status = 200;
        body = "12 in stock".getBytes(StandardCharsets.UTF_8);
      }
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    base = "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  record Stock(String sku, int count) {}

  /** Stands in for a reactive client. */
  static final class Inventory {
    final AtomicInteger calls = new AtomicInteger();

    Mono<Stock> lookup(String sku) {
      return Mono.defer(() -> calls.incrementAndGet() == 1
          ? Mono.error(new IOException("connection reset"))
          : Mono.just(new Stock(sku, 12)));
    }

    Flux<Stock> changes(String sku) {
      return Flux.just(new Stock(sku, 12), new Stock(sku, 11));
    }
  }

  @Test
  void theOperator() {
    Inventory inventory = new Inventory();
    // --- begin docs/reactor.md: operator
    Resilience policy = Resilience.DEFAULT.withName("inventory")
        .withAttempts(4)
        .withDeadline(Duration.ofSeconds(2))
        .withTimeSource(ReactorTime.of(Schedulers.parallel()));   // timers on Reactor's threads

    Mono<Stock> stock = inventory.lookup("sku-1")
        .transformDeferred(QuellReactor.of(policy));
    // --- end
    assertThat(stock.block(Duration.ofSeconds(5))).isEqualTo(new Stock("sku-1", 12));
    assertThat(inventory.calls).hasValue(2);
  }

  @Test
  void aFlux() {
    Inventory inventory = new Inventory();
    Resilience policy = Resilience.DEFAULT.withName("inventory");
    // --- begin docs/reactor.md: flux
    Flux<Stock> changes = inventory.changes("sku-1")
        .transformDeferred(QuellReactor.of(policy));   // retried until the first element, then passed through
    // --- end
    assertThat(changes.collectList().block(Duration.ofSeconds(5))).hasSize(2);
  }

  @Test
  void theContext() {
    Inventory inventory = new Inventory();
    inventory.calls.set(1); // this example is about the context: the lookup answers at once
    Resilience policy = Resilience.DEFAULT.withName("inventory").withAmbientCriticality(true);
    // --- begin docs/reactor.md: context
    ResilienceContext inbound = ResilienceContext.EMPTY
        .withDeadline(Duration.ofMillis(800))
        .withCriticality(Criticality.SHEDDABLE);

    Mono<String> reply = inventory.lookup("sku-1")
        .flatMap(stock -> QuellReactor.currentContext()   // inside the attempt: its own deadline and label
            .map(context -> stock.count() + " left, " + context.criticality()))
        .transformDeferred(QuellReactor.of(policy))
        .contextWrite(QuellReactor.withContext(inbound));
    // --- end
    assertThat(reply.block(Duration.ofSeconds(5))).isEqualTo("12 left, SHEDDABLE");
  }

  @Test
  void virtualTime() {
    Inventory inventory = new Inventory();
    // --- begin docs/reactor.md: virtual time
    StepVerifier.withVirtualTime(() -> inventory.lookup("sku-1")
            .transformDeferred(QuellReactor.of(Resilience.DEFAULT
                .withBackoff(Backoff.constant(Duration.ofMinutes(1)))
                .withDeadline(Duration.ofMinutes(5))
                .withTimeSource(ReactorTime.of(Schedulers.parallel())))))   // the virtual scheduler, here
        .expectSubscription()
        .expectNoEvent(Duration.ofMinutes(1))     // a minute of backoff, in milliseconds
        .expectNext(new Stock("sku-1", 12))
        .verifyComplete();
    // --- end
  }

  @Test
  void hedging() {
    Inventory inventory = new Inventory();
    // --- begin docs/reactor.md: hedge
    Resilience search = Resilience.DEFAULT.withName("search")
        .withHedge(Hedge.maxExtraLoad(0.05));   // a second subscription at the live p95

    Mono<Stock> fastest = inventory.lookup("sku-1").transformDeferred(QuellReactor.of(search));
    // --- end
    assertThat(fastest.block(Duration.ofSeconds(5))).isEqualTo(new Stock("sku-1", 12));
  }

  // --- begin docs/reactor.md: webclient
  static final Classifier WEB = (result, failure) -> {
    if (result instanceof ClientResponse response) {
      int status = response.statusCode().value();
      if (status == 429 || status == 503) {
        String retryAfter = response.headers().asHttpHeaders().getFirst("Retry-After");
        return retryAfter != null && retryAfter.matches("\\d{1,6}")
            ? Verdict.throttled(Duration.ofSeconds(Long.parseLong(retryAfter)))
            : Verdict.THROTTLED;
      }
      return status >= 500 ? Verdict.TRANSIENT : Verdict.OK;
    }
    return failure instanceof WebClientRequestException ? Verdict.TRANSIENT : Classifier.DEFAULT.classify(result, failure);
  };

  static final Resilience CATALOG = Resilience.DEFAULT.withName("catalog")
      .withClassifier(WEB)
      .withDiscard(response -> ((ClientResponse) response).releaseBody().subscribe());   // superseded answers

  static final ExchangeFilterFunction QUELL = (request, next) -> QuellReactor.currentContext()
      .flatMap(context -> next.exchange(ClientRequest.from(request)
          .headers(headers -> context.writeHeaders(headers::set))   // X-Deadline-Ms, X-Criticality
          .build()))
      .transformDeferred(QuellReactor.of(CATALOG));
  // --- end

  @Test
  void aWebClientFilter() {
    // --- begin docs/reactor.md: webclient use
    WebClient catalog = WebClient.builder()
        .baseUrl(base)
        .filter(QUELL)
        .clientConnector(new JdkClientHttpConnector())
        .build();

    String stock = catalog.get().uri("/stock").retrieve().bodyToMono(String.class).block();
    // --- end
    assertThat(stock).isEqualTo("12 in stock");
    assertThat(requests).as("the 503 was retried after its Retry-After").hasValue(2);
    assertThat(deadlineHeaders).as("each attempt told the server the time it has")
        .allSatisfy(h -> assertThat(Long.parseLong(h)).isBetween(1L, 10_000L));
  }

  @Test
  void thePageShowsTheseExamplesVerbatim() throws IOException {
    String page = Files.readString(Path.of("../docs/reactor.md"));
    String source = normalized(Files.readString(Path.of("src/test/java/dev/quell/reactor/ReactorDocsExamplesTest.java")));
    List<String> blocks = javaBlocks(page);
    assertThat(blocks).isNotEmpty();
    for (String block : blocks) {
      assertThat(source).as("docs/reactor.md shows this example, which this test does not run:%n%s", block)
          .contains(normalized(block));
    }
  }

  private static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    StringBuilder current = null;
    for (String line : markdown.split("\n", -1)) {
      if (current == null && line.trim().equals("```java")) {
        current = new StringBuilder();
      } else if (current != null && line.trim().equals("```")) {
        blocks.add(current.toString());
        current = null;
      } else if (current != null) {
        current.append(line).append('\n');
      }
    }
    return blocks;
  }

  private static String normalized(String text) {
    return text.lines().map(String::trim).filter(l -> !l.isEmpty()).collect(Collectors.joining("\n", "\n", "\n"));
  }
}
