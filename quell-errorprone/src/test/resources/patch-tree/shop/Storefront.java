package shop;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.http.ResilientHttpClient;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.function.Function;

/** A storefront written the way users write one: every guard here is built per call. */
public class Storefront {
  static final Resilience POLICY = Resilience.DEFAULT.withName("storefront");
  static final HttpClient JDK = HttpClient.newHttpClient();

  static final Function<String, String> HANDLE = request -> {
    RetryBudget budget = RetryBudget.of(0.2, 5);
    try {
      return POLICY.withBudget(budget).execute(() -> request);
    } catch (Exception e) {
      return "failed";
    }
  };

  /** Reserves stock. */
  String reserve(String sku) throws Exception {
    Resilience policy = Resilience.HTTP.withName("reserve");
    return policy.execute(() -> sku);
  }

  // releases stock
  String release(String sku) throws Exception {
    Resilience policy = Resilience.HTTP.withName("release");
    return policy.execute(() -> sku) + POLICY.execute(() -> sku);
  }

  int free() {
    return Limiter.concurrency(4).available() + Limiter.concurrency(8).available();
  }

  String guarded(boolean fast) throws Exception {
    return (fast ? Resilience.DEFAULT.withName("fast").withAttempts(2) : Resilience.NONE.withBreaker(CircuitBreaker.Config.DEFAULT))
        .execute(() -> "x");
  }

  String nested() throws Exception {
    return Resilience.DEFAULT.withName("nested").withLimiter(Limiter.concurrency(2)).execute(() -> "x");
  }

  String fetch(HttpRequest request) throws Exception {
    try (ResilientHttpClient client = ResilientHttpClient.of(JDK, POLICY)) {
      return client.send(request, BodyHandlers.ofString()).body();
    }
  }

  String fetchOrNot(HttpRequest request) throws Exception {
    try (ResilientHttpClient client = ResilientHttpClient.of(JDK)) {
      return client.send(request, BodyHandlers.ofString()).body();
    } catch (IOException e) {
      return "unavailable";
    }
  }

  private Resilience payments() {
    return Resilience.HTTP.withName("payments");
  }

  String pay(String order) throws Exception {
    return payments().execute(() -> order);
  }

  String refund(String order) throws Exception {
    return payments().execute(() -> "refund " + order);
  }

  static String late() throws Exception {
    return BASE.withName("late").execute(() -> "x");
  }

  static final Resilience BASE = Resilience.DEFAULT.withAttempts(4);
}
