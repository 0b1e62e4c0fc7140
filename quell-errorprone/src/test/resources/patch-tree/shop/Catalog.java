package shop;

import dev.quell.CircuitBreaker;
import dev.quell.PolicyScope;
import dev.quell.Resilience;

/** More guards per call, in a second class of the tree. */
class Catalog {
  static final Resilience LIMITER = Resilience.DEFAULT.withName("a field whose name a fix would like");

  String item(String tenant, String id) throws Exception {
    return PolicyScope.<String>of(Resilience.DEFAULT).execute(tenant, () -> id);
  }

  CircuitBreaker.State state() {
    return CircuitBreaker.of("catalog").state();
  }

  int free() {
    return dev.quell.Limiter.rate(100, 10).available();
  }

  static class Search {
    int free() {
      return dev.quell.Limiter.rate(100, 10).available() + LIMITER.hashCode();
    }
  }
}
