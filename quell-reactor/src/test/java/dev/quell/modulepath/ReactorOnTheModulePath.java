package dev.quell.modulepath;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.reactor.QuellReactor;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An application run by {@code ModulePathIT} with quell-reactor, quell-core and Reactor on the module
 * path: a Mono and a Flux retried through the operator, whose attempts reach {@code dev.quell.internal}.
 */
public final class ReactorOnTheModulePath {
  private ReactorOnTheModulePath() {}

  public static void main(String[] args) {
    System.out.println("module " + QuellReactor.class.getModule().getName());
    Resilience policy = Resilience.DEFAULT.withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE);
    AtomicInteger subscriptions = new AtomicInteger();
    String value = Mono.defer(() -> subscriptions.incrementAndGet() == 1
            ? Mono.<String>error(new IOException("reset")) : Mono.just("v"))
        .transformDeferred(QuellReactor.of(policy))
        .block(Duration.ofSeconds(30));
    if ("v".equals(value) && subscriptions.get() == 2) {
      System.out.println("a Mono retried");
    }
    AtomicInteger streams = new AtomicInteger();
    Integer sum = Flux.defer(() -> streams.incrementAndGet() == 1
            ? Flux.<Integer>error(new IOException("reset")) : Flux.just(1, 2, 3))
        .transformDeferred(QuellReactor.of(policy))
        .reduce(0, Integer::sum)
        .block(Duration.ofSeconds(30));
    if (sum != null && sum == 6 && streams.get() == 2) {
      System.out.println("a Flux retried");
    }
  }
}
