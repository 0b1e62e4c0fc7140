package dev.quell.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import dev.quell.Criticality;
import dev.quell.Draining;
import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** Every Java example in docs/deadlines.md, docs/criticality.md and docs/scopes.md, compiled and run. */
class ContextDocsExamplesTest {
  private static final Resilience POLICY = Resilience.DEFAULT.withName("backend");

  static final class Backend {
    String fetch(String id) {
      return "item " + id;
    }
  }

  private final Backend backend = new Backend();

  String handle(String id) throws Exception {
    // --- inbound ---
    ResilienceContext inbound = ResilienceContext.current()
        .withDeadline(Duration.ofMillis(800))
        .withCriticality(Criticality.SHEDDABLE);
    try (ResilienceContext.Scope scope = inbound.open()) {
      return POLICY.execute(() -> backend.fetch(id));   // bounded by 800 ms
    }
    // --- end ---
  }

  @Test
  void inbound() throws Exception {
    assertThat(handle("7")).isEqualTo("item 7");
  }

  @Test
  void executors() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      // --- executors ---
      ExecutorService workers = Executors.newFixedThreadPool(4);
      java.util.concurrent.Executor carrying = ResilienceContext.wrap(workers); // tasks run in the submitter's context
      // --- end ---
      carrying.execute(() -> { });
      workers.shutdown();
    } finally {
      pool.shutdown();
    }
  }

  void serverSide(HttpExchange exchange) throws Exception {
    // --- server ---
    ResilienceContext inbound = ResilienceContext.fromHeaders(
        exchange.getRequestHeaders()::getFirst,
        ResilienceContext.Inbound.DEFAULT.withMaxDeadline(Duration.ofSeconds(10)));
    try (ResilienceContext.Scope scope = inbound.open()) {
      // handle the request: every policy inside honours the caller's deadline
    }
    // --- end ---
  }

  @Test
  void clientSide() throws Exception {
    URI uri = URI.create("http://localhost/");
    // --- client ---
    HttpRequest.Builder request = HttpRequest.newBuilder(uri);
    ResilienceContext.current().writeHeaders(request::header);   // X-Deadline-Ms, X-Criticality
    // --- end ---
    assertThat(request.build().headers().map()).isEmpty();
    Map<String, String> sent = new java.util.HashMap<>();
    ResilienceContext.current().withDeadline(Duration.ofSeconds(2)).writeHeaders(sent::put);
    assertThat(sent).containsKey("X-Deadline-Ms");
  }

  @Test
  void draining() {
    try {
      // --- draining ---
      Runtime.getRuntime().addShutdownHook(new Thread(() -> Draining.begin(Duration.ofSeconds(5))));
      // --- end ---
    } finally {
      assertThat(Draining.isDraining()).isFalse();
    }
  }

  @Test
  void criticality() throws Exception {
    // --- criticality ---
    Resilience reports = Resilience.DEFAULT.withName("reports").withAmbientCriticality(true);

    ResilienceContext background = ResilienceContext.current().withCriticality(Criticality.SHEDDABLE);
    String report = background.call(() -> reports.execute(() -> "nightly report"));
    // --- end ---
    assertThat(report).isEqualTo("nightly report");
  }

  @Test
  void scopes() throws Exception {
    // --- scopes ---
    PolicyScope<String> byHost = PolicyScope.of(Resilience.HTTP.withName("catalog"));

    String body = byHost.execute("eu.catalog.example", () -> "response");
    Map<String, RetryBudget> budgets = byHost.budgets();           // one per host, for dashboards
    // --- end ---
    assertThat(body).isEqualTo("response");
    assertThat(budgets.keySet()).containsExactly("eu.catalog.example");
    assertThat(budgets.get("eu.catalog.example").name()).isEqualTo("catalog:eu.catalog.example");
  }
}
