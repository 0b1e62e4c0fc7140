import dev.quell.CircuitBreaker;
import dev.quell.Resilience;
import dev.quell.RetryBudget;

/** Deliberately wrong: guards built for every call. */
class GuardPerCallSample {
  String stock(String sku) throws Exception {
    Resilience policy = Resilience.HTTP.withName("inventory"); // expect: QuellGuardPerCall
    return policy.execute(() -> lookup(sku));
  }

  String price(String sku) throws Exception {
    RetryBudget budget = RetryBudget.of(); // expect: QuellGuardPerCall
    return Resilience.DEFAULT.withBudget(budget).execute(() -> lookup(sku));
  }

  String reserve(String sku) throws Exception {
    return Resilience.NONE.withBreaker(CircuitBreaker.Config.DEFAULT).execute(() -> lookup(sku)); // expect: QuellGuardPerCall
  }

  String lookup(String sku) {
    return sku;
  }
}
