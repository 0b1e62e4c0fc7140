package lookalike;

import dev.quell.CircuitBreaker;
import dev.quell.Limiter;
import dev.quell.PolicyScope;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Guards kept for the life of the process, or handed on: each looks like a per-call guard, none is. */
public class Guards {
  private static final Resilience INVENTORY = Resilience.HTTP.withName("inventory");
  private static final RetryBudget SHARED = RetryBudget.shared("payments");
  private static final CircuitBreaker BREAKER = CircuitBreaker.of("payments");
  private static final Limiter LIMITER = Limiter.concurrency(8);
  private final Map<String, Resilience> byTenant = new ConcurrentHashMap<>();
  private final PolicyScope<String> scope;
  private final Resilience perInstance;

  public Guards() {
    scope = PolicyScope.of(Resilience.DEFAULT.withName("tenants"));
    perInstance = Resilience.DEFAULT.withName("instance").withLimiter(Limiter.concurrency(4));
  }

  String stock(String sku) throws Exception {
    return INVENTORY.execute(() -> sku);
  }

  String once(String sku) throws Exception {
    return INVENTORY.once().execute(() -> sku);
  }

  String sharedByName(String sku) throws Exception {
    return Resilience.DEFAULT.withBudget(RetryBudget.shared("payments")).execute(() -> sku);
  }

  String withoutBudget(String sku) throws Exception {
    return Resilience.DEFAULT.withBudget(RetryBudget.NONE).execute(() -> sku)
        + Resilience.DEFAULT.withAttempts(1).execute(() -> sku)
        + Resilience.NONE.withName("pass-through").execute(() -> sku)
        + Resilience.DEFAULT.withBudget(SHARED).withBreaker(BREAKER).withLimiter(LIMITER).execute(() -> sku);
  }

  String perTenant(String tenant) throws Exception {
    return byTenant.computeIfAbsent(tenant, t -> Resilience.DEFAULT.withName(t)).execute(() -> tenant)
        + scope.execute(tenant, () -> tenant) + perInstance.execute(() -> tenant);
  }

  /** A factory others call: what they do with the policy is out of sight. */
  public Resilience policyFor(String name) {
    return Resilience.DEFAULT.withName(name);
  }

  private Resilience kept() {
    return Resilience.DEFAULT.withName("kept");
  }

  private final Resilience keptInAField = kept();

  String chosen(boolean fast) throws Exception {
    return (fast ? INVENTORY : perInstance).execute(() -> "x") + keptInAField.execute(() -> "y");
  }

  Resilience handedOn(boolean fast) {
    return fast ? Resilience.DEFAULT.withAttempts(2) : Resilience.HTTP;
  }

  String attemptsUnknown(int attempts) throws Exception {
    return Resilience.DEFAULT.withAttempts(attempts).withBudget(RetryBudget.NONE).execute(() -> "z");
  }
}
