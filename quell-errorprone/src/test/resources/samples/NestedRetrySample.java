import dev.quell.Resilience;

/** Deliberately wrong: a retrying call inside a retrying attempt. */
class NestedRetrySample {
  static final Resilience ORDERS = Resilience.DEFAULT.withName("orders");
  static final Resilience STOCK = Resilience.DEFAULT.withName("stock").withAttempts(4);

  String place(String sku) throws Exception {
    return ORDERS.execute(() -> STOCK.execute(() -> sku)); // expect: QuellNestedRetry
  }
}
