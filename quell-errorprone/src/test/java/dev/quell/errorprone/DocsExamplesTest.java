package dev.quell.errorprone;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The bad and fixed examples of docs/errorprone.md, compiled with the plugin as a user's build
 * would: each bad example gets its check's diagnostic, each fixed one none of Quell's. The page
 * copies these text blocks verbatim (DocSnippetsTest holds it to that).
 */
class DocsExamplesTest {

  private static List<String> checksIn(String name, String source) {
    return PluginCompiler.quellFindings(Map.of(name, source)).stream().map(PluginCompiler.Finding::check).toList();
  }

  @Test
  void guardPerCall() {
    String bad = """
        class InventoryClient {
          String stock(String sku) throws Exception {
            Resilience policy = Resilience.HTTP.withName("inventory");   // a new budget every call
            return policy.execute(() -> lookup(sku));
          }
        """;
    String fixed = """
        class InventoryClient {
          private static final Resilience POLICY = Resilience.HTTP.withName("inventory");

          String stock(String sku) throws Exception {
            return POLICY.execute(() -> lookup(sku));
          }
        """;
    String rest = "String lookup(String sku) { return sku; } }";
    assertThat(checksIn("InventoryClient.java", imports() + bad + rest)).containsExactly("QuellGuardPerCall");
    assertThat(checksIn("InventoryClient.java", imports() + fixed + rest)).isEmpty();
  }

  @Test
  void onceIsThePolicysOwnInstanceAndFinePerCall() {
    String fine = """
        String pay(Order order) throws Exception {
          return PAYMENTS.once().execute(() -> charge(order));   // PAYMENTS' own breaker and budget judge it
        }
        """;
    String perCall = """
        String pay(Order order) throws Exception {
          return Resilience.NONE.withBreaker(CircuitBreaker.Config.DEFAULT).execute(() -> charge(order));
        }
        """;
    String fields = """
        static final Resilience PAYMENTS = Resilience.HTTP.withName("payments").withBreaker(CircuitBreaker.Config.DEFAULT);
        record Order(String id) {}
        String charge(Order order) { return order.id(); }
        """;
    String imports = imports() + "import dev.quell.CircuitBreaker;\n";
    assertThat(checksIn("Payments.java", imports + "class Payments {" + fields + fine + "}")).isEmpty();
    assertThat(checksIn("Payments.java", imports + "class Payments {" + fields + perCall + "}"))
        .as("a policy that builds its own breaker on every call").containsExactly("QuellGuardPerCall");
  }

  @Test
  void invalidConfiguration() {
    String bad = """
        static final Resilience PAYMENTS = Resilience.DEFAULT
            .withName("payments")
            .withAttempts(0);                                   // attempts counts the first one
        static final RetryBudget BUDGET = RetryBudget.of(10, 3); // a fraction is at most 1
        """;
    String fixed = """
        static final Resilience PAYMENTS = Resilience.DEFAULT
            .withName("payments")
            .withAttempts(1);
        static final RetryBudget BUDGET = RetryBudget.of(0.1, 3);
        """;
    assertThat(checksIn("Config.java", imports() + "class Config {" + bad + "}"))
        .containsExactly("QuellInvalidConfiguration", "QuellInvalidConfiguration");
    assertThat(checksIn("Config.java", imports() + "class Config {" + fixed + "}")).isEmpty();
  }

  @Test
  void attemptTimeoutBeyondDeadline() {
    String bad = """
        static final Resilience SEARCH = Resilience.DEFAULT
            .withName("search")
            .withDeadline(Duration.ofSeconds(1));   // the preset's 10 s attempt timeout can never fire
        """;
    String fixed = """
        static final Resilience SEARCH = Resilience.DEFAULT
            .withName("search")
            .withDeadline(Duration.ofSeconds(1))
            .withAttemptTimeout(Duration.ofMillis(300));   // room for three attempts
        """;
    assertThat(checksIn("Search.java", imports() + "class Search {" + bad + "}"))
        .containsExactly("QuellAttemptTimeoutBeyondDeadline");
    assertThat(checksIn("Search.java", imports() + "class Search {" + fixed + "}")).isEmpty();
  }

  @Test
  void nestedRetry() {
    String bad = """
        String order(String sku) throws Exception {
          return ORDERS.execute(() -> STOCK.execute(() -> reserve(sku)));   // 3 × 3 = 9 attempts
        }
        """;
    String fixed = """
        String order(String sku) throws Exception {
          return ORDERS.execute(() -> STOCK.once().execute(() -> reserve(sku)));
        }
        """;
    String fields = """
        static final Resilience ORDERS = Resilience.DEFAULT.withName("orders");
        static final Resilience STOCK = Resilience.DEFAULT.withName("stock");
        String reserve(String sku) { return sku; }
        """;
    assertThat(checksIn("Orders.java", imports() + "class Orders {" + fields + bad + "}"))
        .containsExactly("QuellNestedRetry");
    assertThat(checksIn("Orders.java", imports() + "class Orders {" + fields + fixed + "}")).isEmpty();
  }

  @Test
  void ignoredOutcome() {
    String bad = """
        void notify(String user) {
          MAIL.run(() -> mailer.send(user));   // a failure here is never seen
        }
        """;
    String fixed = """
        void notify(String user) {
          Outcome<String> sent = MAIL.run(() -> mailer.send(user));
          if (!sent.isSuccess()) {
            log.log(System.Logger.Level.WARNING, "welcome mail not sent: " + sent);
          }
        }
        """;
    String fields = """
        static final Resilience MAIL = Resilience.DEFAULT.withName("mail");
        final System.Logger log = System.getLogger("mail");
        final java.util.function.UnaryOperator<String> sender = u -> u;
        final Mailer mailer = new Mailer();
        static final class Mailer { String send(String user) { return user; } }
        """;
    assertThat(checksIn("Welcome.java", imports() + "class Welcome {" + fields + bad + "}"))
        .containsExactly("QuellIgnoredOutcome");
    assertThat(checksIn("Welcome.java", imports() + "class Welcome {" + fields + fixed + "}")).isEmpty();
  }

  @Test
  void sharedBudgetConflict() {
    String bad = """
        static final RetryBudget READS = RetryBudget.shared("payments-api");
        static final RetryBudget WRITES = RetryBudget.shared("payments-api", 0.2, 1); // ignored if READS came first
        """;
    String fixed = """
        static final RetryBudget PAYMENTS_API = RetryBudget.shared("payments-api", 0.2, 1);
        static final Resilience READS = Resilience.DEFAULT.withName("payments-read").withBudget(PAYMENTS_API);
        static final Resilience WRITES = Resilience.DEFAULT.withName("payments-write").withBudget(PAYMENTS_API);
        """;
    assertThat(checksIn("Payments.java", imports() + "class Payments {" + bad + "}"))
        .containsExactly("QuellSharedBudgetConflict");
    assertThat(checksIn("Payments.java", imports() + "class Payments {" + fixed + "}")).isEmpty();
  }

  @Test
  void blockingAsyncWork() {
    String bad = """
        CompletableFuture<String> quote(String sku) {
          return PRICES.executeAsync(() ->
              CompletableFuture.completedFuture(pricing.quoteAsync(sku).join()));   // blocks
        }
        """;
    String fixed = """
        CompletableFuture<String> quote(String sku) {
          return PRICES.executeAsync(() -> pricing.quoteAsync(sku));
        }
        """;
    String fields = """
        static final Resilience PRICES = Resilience.DEFAULT.withName("prices");
        final Pricing pricing = new Pricing();
        static final class Pricing {
          CompletableFuture<String> quoteAsync(String sku) { return CompletableFuture.completedFuture(sku); }
        }
        """;
    assertThat(checksIn("Quotes.java", imports() + "class Quotes {" + fields + bad + "}"))
        .containsExactly("QuellBlockingAsyncWork");
    assertThat(checksIn("Quotes.java", imports() + "class Quotes {" + fields + fixed + "}")).isEmpty();
  }

  @Test
  void clientClosedAfterEachRequest() {
    String bad = """
        String item(HttpRequest request) throws Exception {
          try (ResilientHttpClient client = ResilientHttpClient.of(JDK)) {   // fresh per-host budgets every request
            return client.send(request, BodyHandlers.ofString()).body();
          }
        }
        """;
    String fixed = """
        private static final ResilientHttpClient CATALOG = ResilientHttpClient.of(JDK);

        String item(HttpRequest request) throws Exception {
          return CATALOG.send(request, BodyHandlers.ofString()).body();
        }
        """;
    String fields = "static final HttpClient JDK = HttpClient.newHttpClient();\n";
    assertThat(checksWithClients("Catalog.java", httpImports() + "class Catalog {" + fields + bad + "}"))
        .containsExactly("QuellGuardPerCall");
    assertThat(checksWithClients("Catalog.java", httpImports() + "class Catalog {" + fields + fixed + "}")).isEmpty();
  }

  @Test
  void nestedRetryThroughAClient() {
    String bad = """
        String item(HttpRequest request) throws Exception {
          return SYNC.execute(() -> CATALOG.send(request, BodyHandlers.ofString()).body());   // 3 × 3 = 9 attempts
        }
        """;
    String fixed = """
        String item(HttpRequest request) throws Exception {
          return SYNC.once().execute(() -> CATALOG.send(request, BodyHandlers.ofString()).body());
        }
        """;
    String fields = """
        static final Resilience SYNC = Resilience.DEFAULT.withName("sync");
        static final ResilientHttpClient CATALOG = ResilientHttpClient.of(HttpClient.newHttpClient());
        """;
    assertThat(checksWithClients("Sync.java", httpImports() + "class Sync {" + fields + bad + "}"))
        .containsExactly("QuellNestedRetry");
    assertThat(checksWithClients("Sync.java", httpImports() + "class Sync {" + fields + fixed + "}")).isEmpty();
  }

  @Test
  void discardedConfiguration() {
    String bad = """
        Resilience payments(boolean patient) {
          Resilience policy = PAYMENTS;
          if (patient) {
            policy.withAttempts(5);   // a changed copy, thrown away
          }
          return policy;
        }
        """;
    String fixed = """
        Resilience payments(boolean patient) {
          Resilience policy = PAYMENTS;
          if (patient) {
            policy = policy.withAttempts(5);
          }
          return policy;
        }
        """;
    String fields = "static final Resilience PAYMENTS = Resilience.DEFAULT.withName(\"payments\");\n";
    assertThat(checksIn("Payments.java", imports() + "class Payments {" + fields + bad + "}"))
        .containsExactly("QuellDiscardedConfiguration");
    assertThat(checksIn("Payments.java", imports() + "class Payments {" + fields + fixed + "}")).isEmpty();
  }

  @Test
  void backoffBeyondDeadline() {
    String bad = """
        static final Resilience SEARCH = Resilience.DEFAULT
            .withName("search")
            .withDeadline(Duration.ofSeconds(1))
            .withAttemptTimeout(Duration.ofMillis(300))
            .withBackoff(Backoff.constant(Duration.ofSeconds(1)));   // no retry can start before the deadline
        """;
    String fixed = """
        static final Resilience SEARCH = Resilience.DEFAULT
            .withName("search")
            .withDeadline(Duration.ofSeconds(1))
            .withAttemptTimeout(Duration.ofMillis(300))
            .withBackoff(Backoff.constant(Duration.ofMillis(100)));
        """;
    assertThat(checksIn("Search.java", imports() + "class Search {" + bad + "}"))
        .containsExactly("QuellBackoffBeyondDeadline");
    assertThat(checksIn("Search.java", imports() + "class Search {" + fixed + "}")).isEmpty();
  }

  private static List<String> checksWithClients(String name, String source) {
    Map<String, String> sources = new java.util.LinkedHashMap<>(RealIntegrations.sources());
    sources.put(name, source);
    return PluginCompiler.quellFindings(sources).stream().map(PluginCompiler.Finding::check).toList();
  }

  private static String httpImports() {
    return imports() + """
        import dev.quell.http.ResilientHttpClient;
        import java.net.http.HttpClient;
        import java.net.http.HttpRequest;
        import java.net.http.HttpResponse.BodyHandlers;
        """;
  }

  private static String imports() {
    return """
        import dev.quell.Backoff;
        import dev.quell.Outcome;
        import dev.quell.Resilience;
        import dev.quell.RetryBudget;
        import java.time.Duration;
        import java.util.concurrent.CompletableFuture;
        """;
  }
}
