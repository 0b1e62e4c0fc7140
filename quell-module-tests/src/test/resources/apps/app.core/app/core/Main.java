package app.core;

import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** A call that fails once and is retried: the decision core, the budget and the backoff all run. */
public final class Main {
  public static void main(String[] args) {
    AtomicInteger tries = new AtomicInteger();
    Outcome<String> outcome = Resilience.DEFAULT.withName("modpath")
        .withBackoff(Backoff.constant(Duration.ofMillis(1)))
        .run(() -> {
          if (tries.getAndIncrement() == 0) {
            throw new IOException("the first attempt fails");
          }
          return "ok";
        });
    Module core = Resilience.class.getModule();
    if (!"dev.quell".equals(core.getName())) {
      throw new AssertionError("quell-core is not the named module dev.quell but " + core);
    }
    // the seams are exported to Quell's own modules only, never to an application
    if (core.isExported("dev.quell.internal", Main.class.getModule())) {
      throw new AssertionError("dev.quell.internal is exported to an application module");
    }
    System.out.println("quell-core on the module path: " + outcome.value() + " after " + outcome.attempts()
        + " attempts");
  }
}
