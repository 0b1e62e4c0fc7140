package lookalike;

import dev.quell.CircuitBreaker;
import dev.quell.Resilience;
import java.time.Duration;
import java.util.List;

/** Copies of immutable values, each kept: assigned, returned, chained, mapped. */
public class Copies {
  static final Resilience BASE = Resilience.DEFAULT.withName("copies");
  static final CircuitBreaker.Config TRIPS = CircuitBreaker.Config.DEFAULT.with(s -> s.failureRate(0.2).minimumCalls(10));
  private Resilience current = BASE;

  void slower() {
    current = current.withDeadline(Duration.ofMinutes(1));
  }

  Resilience faster() {
    return current.withDeadline(Duration.ofSeconds(1));
  }

  List<Resilience> all(List<Resilience> policies) {
    return policies.stream().map(p -> p.withAttempts(2)).toList();
  }

  String run() throws Exception {
    Resilience policy = current;
    policy.execute(() -> "a result ignored on purpose");
    return policy.once().execute(() -> "x");
  }
}
