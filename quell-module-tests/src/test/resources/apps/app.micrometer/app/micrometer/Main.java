package app.micrometer;

import app.support.Friends;
import dev.quell.Resilience;
import dev.quell.micrometer.QuellMicrometer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** bind(...) reads the core's BudgetTracker; the listener is a CallObserver: both in dev.quell.internal. */
public final class Main {
  public static void main(String[] args) throws Exception {
    Friends.check("dev.quell.micrometer", QuellMicrometer.class);
    MeterRegistry registry = new SimpleMeterRegistry();
    Resilience policy = Resilience.DEFAULT.withName("inventory").withListener(QuellMicrometer.listener(registry));
    QuellMicrometer.bind(policy, registry);
    policy.execute(() -> "ok");
    double calls = registry.get("quell.calls").tag("quell.policy", "inventory").counter().count();
    double utilization = registry.get("quell.budget.utilization").tag("quell.policy", "inventory").gauge().value();
    System.out.println("quell-micrometer on the module path: quell.calls " + calls
        + ", quell.budget.utilization " + utilization);
  }
}
