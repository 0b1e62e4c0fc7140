package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Criticality;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The attempt's context is made when the upstream first asks for it, or when its subscription
 * returns without an answer: whenever it is asked for, it is the attempt's own, on Reactor's
 * virtual clock.
 */
class AttemptContextTest {

  @Test
  void anAttemptThatAsksForItsContextLaterOnAnotherThreadSeesTheAttemptsOwn() {
    AtomicReference<ResilienceContext> seen = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> {
      ReactorTime time = ReactorTime.of(Schedulers.parallel());
      Resilience p = Resilience.DEFAULT.withTimeSource(time).withAttemptTimeout(Duration.ofSeconds(1))
          .withAmbientCriticality(true);
      return Mono.delay(Duration.ofMillis(100))
          .then(QuellReactor.currentContext()) // subscribed, and asks, only after the delay
          .doOnNext(seen::set)
          .map(c -> "v")
          .transformDeferred(QuellReactor.of(p))
          .contextWrite(QuellReactor.withContext(ResilienceContext.EMPTY.withCriticality(Criticality.SHEDDABLE)));
    }).thenAwait(Duration.ofMillis(100)).expectNext("v").verifyComplete();
    assertThat(seen.get().criticality()).isEqualTo(Criticality.SHEDDABLE);
    assertThat(seen.get().remaining()).as("the attempt's end: 1 s after it started, 100 ms ago")
        .contains(Duration.ofMillis(900));
  }

  @Test
  void aMonoThatAnswersAtOnceAndAsksSeesTheAttemptsOwn() {
    AtomicReference<ResilienceContext> seen = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> {
      ReactorTime time = ReactorTime.of(Schedulers.parallel());
      Resilience p = Resilience.DEFAULT.withTimeSource(time).withAttemptTimeout(Duration.ofMillis(700));
      return QuellReactor.currentContext().doOnNext(seen::set).map(c -> "v")
          .transformDeferred(QuellReactor.of(p));
    }).expectNext("v").verifyComplete();
    assertThat(seen.get().remaining()).contains(Duration.ofMillis(700));
  }

  @Test
  void outsideAnyAttemptTheContextIsEmpty() {
    StepVerifier.create(QuellReactor.currentContext()).expectNext(ResilienceContext.EMPTY).verifyComplete();
  }
}
