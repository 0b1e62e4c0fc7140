package app.slf4j;

import app.support.Friends;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.slf4j.QuellSlf4j;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** The listener is a CallObserver (dev.quell.internal); a retried call makes it log. */
public final class Main {
  public static void main(String[] args) {
    Friends.check("dev.quell.slf4j", QuellSlf4j.class);
    AtomicInteger tries = new AtomicInteger();
    Outcome<String> outcome = Resilience.DEFAULT.withName("inventory")
        .withBackoff(dev.quell.Backoff.constant(java.time.Duration.ofMillis(1)))
        .withListener(QuellSlf4j.listener())
        .run(() -> {
          if (tries.getAndIncrement() == 0) {
            throw new IOException("the first attempt fails");
          }
          return "ok";
        });
    System.out.println("quell-slf4j on the module path: " + outcome.value() + " after " + outcome.attempts()
        + " attempts");
  }
}
