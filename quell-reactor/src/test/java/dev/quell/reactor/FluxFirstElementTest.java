package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Classifier;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.Verdict;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** A Flux is retried only before its first element; after it, the stream passes through. */
class FluxFirstElementTest {
  private final VirtualTime time = VirtualTime.create();
  private final Resilience policy = Resilience.DEFAULT.withTimeSource(time).withBudget(RetryBudget.NONE)
      .withBackoff(Backoff.NONE);

  @Test
  void aFailureBeforeTheFirstElementIsRetried() {
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<Integer> dep = Flux.defer(() -> subscriptions.incrementAndGet() == 1
        ? Flux.error(new IOException("reset")) : Flux.just(1, 2, 3));
    StepVerifier.create(dep.transformDeferred(QuellReactor.of(policy)))
        .then(() -> time.runUntilIdle(Duration.ofMinutes(1)))
        .expectNext(1, 2, 3).verifyComplete();
    assertThat(subscriptions).hasValue(2);
  }

  @Test
  void aFailureAfterTheFirstElementPassesThroughUnretried() {
    AtomicInteger subscriptions = new AtomicInteger();
    IOException broken = new IOException("stream broke");
    Flux<Integer> dep = Flux.defer(() -> {
      subscriptions.incrementAndGet();
      return Flux.concat(Flux.just(1, 2), Flux.error(broken));
    });
    StepVerifier.create(dep.transformDeferred(QuellReactor.of(policy)))
        .expectNext(1, 2)
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(broken)).verify();
    assertThat(subscriptions).hasValue(1);
  }

  @Test
  void theSubscribersDemandIsHonouredOneElementAtATime() {
    AtomicInteger subscriptions = new AtomicInteger();
    List<Long> upstreamRequests = new CopyOnWriteArrayList<>();
    Flux<Integer> dep = Flux.defer(() -> subscriptions.incrementAndGet() == 1
            ? Flux.<Integer>error(new IOException("reset")) : Flux.range(1, 5))
        .doOnRequest(upstreamRequests::add);
    StepVerifier.create(dep.transformDeferred(QuellReactor.of(policy)), 0)
        .then(() -> time.runUntilIdle(Duration.ofMinutes(1)))
        .expectNoEvent(Duration.ZERO)
        .thenRequest(1).expectNext(1)
        .thenRequest(2).expectNext(2, 3)
        .thenRequest(10).expectNext(4, 5)
        .verifyComplete();
    assertThat(upstreamRequests).as("each attempt asks for its first element only; then the subscriber's demand")
        .containsExactly(1L, 1L, 2L, 10L);
  }

  @Test
  void anEmptyStreamCompletes() {
    StepVerifier.create(Flux.<Integer>empty().transformDeferred(QuellReactor.of(policy))).verifyComplete();
  }

  @Test
  void aRefusedFirstElementCancelsThatStreamAndRetries() {
    AtomicInteger subscriptions = new AtomicInteger();
    AtomicInteger cancelled = new AtomicInteger();
    Classifier busy = Classifier.rules().onResult("busy"::equals, Verdict.TRANSIENT);
    Flux<String> dep = Flux.defer(() -> (subscriptions.incrementAndGet() == 1 ? Flux.just("busy", "x") : Flux.just("a", "b"))
        .doOnCancel(cancelled::incrementAndGet));
    StepVerifier.create(dep.transformDeferred(QuellReactor.of(policy.withClassifier(busy))))
        .then(() -> time.runUntilIdle(Duration.ofMinutes(1)))
        .expectNext("a", "b").verifyComplete();
    assertThat(subscriptions).hasValue(2);
    assertThat(cancelled).as("the refused stream").hasValue(1);
  }

  @Test
  void theAttemptTimeoutBoundsTheWaitForTheFirstElementOnly() {
    AtomicInteger subscriptions = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> {
      Resilience p = Resilience.DEFAULT.withTimeSource(ReactorTime.of(Schedulers.parallel())).withBudget(RetryBudget.NONE)
          .withBackoff(Backoff.NONE).withAttemptTimeout(Duration.ofMillis(500));
      return Flux.defer(() -> subscriptions.incrementAndGet() == 1
              ? Flux.interval(Duration.ofSeconds(1)).take(3)
              : Flux.interval(Duration.ofMillis(100), Duration.ofSeconds(1)).take(3))
          .transformDeferred(QuellReactor.of(p));
    })
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(600))
        .expectNext(0L)
        .thenAwait(Duration.ofSeconds(2))
        .expectNext(1L, 2L)
        .verifyComplete();
    assertThat(subscriptions).as("the first attempt timed out before its first element").hasValue(2);
  }

  @Test
  void cancellingAPassingStreamCancelsItsUpstream() {
    AtomicInteger cancelled = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> Flux.interval(Duration.ofSeconds(1)).doOnCancel(cancelled::incrementAndGet)
            .transformDeferred(QuellReactor.of(Resilience.DEFAULT.withTimeSource(ReactorTime.of(Schedulers.parallel())))))
        .thenAwait(Duration.ofSeconds(2))
        .expectNext(0L, 1L)
        .thenCancel().verify();
    assertThat(cancelled).hasValue(1);
  }

  @Test
  void aFluxIsHedgedUntilItsFirstElementAndTheWinnersStreamGoesOn() {
    AtomicInteger subscriptions = new AtomicInteger();
    AtomicInteger cancelled = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> {
      Resilience p = Resilience.DEFAULT.withTimeSource(ReactorTime.of(Schedulers.parallel())).withBudget(RetryBudget.NONE)
          .withHedge(dev.quell.Hedge.after(Duration.ofMillis(100)));
      return Flux.defer(() -> (subscriptions.incrementAndGet() == 1
              ? Flux.interval(Duration.ofSeconds(2)).map(i -> "slow" + i)
              : Flux.interval(Duration.ofMillis(50)).map(i -> "fast" + i))
          .take(3)
          .doOnCancel(cancelled::incrementAndGet))
          .transformDeferred(QuellReactor.of(p));
    })
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(150))
        .expectNext("fast0")
        .thenAwait(Duration.ofMillis(100))
        .expectNext("fast1", "fast2")
        .verifyComplete();
    assertThat(subscriptions).hasValue(2);
    assertThat(cancelled).as("the slow stream, which lost").hasValue(1);
  }
}
