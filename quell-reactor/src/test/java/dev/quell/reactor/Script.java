package dev.quell.reactor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * A scripted dependency behind a {@code Mono}: each subscription is one attempt the "server" counts,
 * and takes the next step (the last one repeats). Delays run on Reactor's parallel scheduler, which
 * {@code StepVerifier.withVirtualTime} replaces with virtual time.
 */
final class Script {
  final AtomicInteger subscriptions = new AtomicInteger();
  final AtomicInteger cancellations = new AtomicInteger();
  private final List<Step> steps = new ArrayList<>();

  record Step(Object value, Throwable failure, Duration after) {}

  static Script of() {
    return new Script();
  }

  Script ok(String value) {
    return ok(value, Duration.ZERO);
  }

  Script ok(String value, Duration after) {
    steps.add(new Step(value, null, after));
    return this;
  }

  Script fail(Throwable failure) {
    return fail(failure, Duration.ZERO);
  }

  Script fail(Throwable failure, Duration after) {
    steps.add(new Step(null, failure, after));
    return this;
  }

  Mono<String> mono() {
    return Mono.defer(() -> {
      int n = subscriptions.incrementAndGet();
      Step s = steps.get(Math.min(n, steps.size()) - 1);
      Mono<String> answer = s.failure() != null ? Mono.error(s.failure()) : Mono.just((String) s.value());
      if (!s.after().isZero()) {
        answer = Mono.delay(s.after()).then(answer);
      }
      return answer.doOnCancel(cancellations::incrementAndGet);
    });
  }
}
