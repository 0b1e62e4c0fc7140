package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Criticality;
import dev.quell.Hedge;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.EventRecorder;
import dev.quell.test.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Hedging a Mono, the caller's cancellation, and a late value that goes to the discard hook once. */
class HedgeAndCancelTest {
  private final EventRecorder events = new EventRecorder();

  /**
   * A dependency that keeps each subscriber and answers only when told, and ignores cancellation
   * (as a server that has already sent its answer would): what arrives after a cancel is late.
   */
  static final class Stubborn extends Mono<String> {
    final List<CoreSubscriber<? super String>> subscribers = new CopyOnWriteArrayList<>();
    final AtomicInteger cancels = new AtomicInteger();

    @Override
    public void subscribe(CoreSubscriber<? super String> actual) {
      subscribers.add(actual);
      actual.onSubscribe(new Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {
          cancels.incrementAndGet();
        }
      });
    }

    void answer(int attempt, String value) {
      CoreSubscriber<? super String> s = subscribers.get(attempt - 1);
      s.onNext(value);
      s.onComplete();
    }
  }

  @Test
  void aHedgeWinsTheLoserIsCancelledAndItsLateValueIsDiscardedOnce() {
    List<Object> discarded = new CopyOnWriteArrayList<>();
    Stubborn dep = new Stubborn();
    VirtualTime time = VirtualTime.create();
    Resilience hedged = Resilience.DEFAULT.withTimeSource(time).withBudget(RetryBudget.NONE)
        .withHedge(Hedge.after(Duration.ofMillis(100))).withDiscard(discarded::add).withListener(events);
    AtomicReference<String> got = new AtomicReference<>();
    dep.transformDeferred(QuellReactor.of(hedged)).subscribe(got::set);
    assertThat(dep.subscribers).hasSize(1);
    time.advance(Duration.ofMillis(100));
    assertThat(dep.subscribers).as("the hedge subscribed beside the slow first attempt").hasSize(2);
    dep.answer(2, "hedge");
    assertThat(got).hasValue("hedge");
    assertThat(dep.cancels).as("the first attempt, the loser, was cancelled").hasValue(1);
    dep.answer(1, "late");
    assertThat(discarded).as("the loser's late value, through the policy's hook, once").containsExactly("late");
    assertThat(events.count(ResilienceEvent.Type.HEDGE_STARTED)).isEqualTo(1);
    assertThat(events.events().stream().filter(ResilienceEvent::isTerminal)).singleElement()
        .extracting(ResilienceEvent::type).isEqualTo(ResilienceEvent.Type.SUCCEEDED);
  }

  @Test
  void hedgingOnReactorVirtualTime() {
    Script dep = Script.of().ok("slow", Duration.ofSeconds(2)).ok("fast", Duration.ofMillis(50));
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(Resilience.DEFAULT
            .withTimeSource(ReactorTime.of(Schedulers.parallel())).withBudget(RetryBudget.NONE)
            .withHedge(Hedge.after(Duration.ofMillis(100))))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(150))
        .expectNext("fast").verifyComplete();
    assertThat(dep.subscriptions).hasValue(2);
    assertThat(dep.cancellations).as("the slow first attempt was cancelled").hasValue(1);
  }

  @Test
  void cancellingTheSubscriptionCancelsTheAttemptAndChargesNothing() {
    RetryBudget budget = RetryBudget.feedback(10, 0.1);
    Stubborn dep = new Stubborn();
    VirtualTime time = VirtualTime.create();
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBudget(budget).withListener(events);
    Disposable d = dep.transformDeferred(QuellReactor.of(p)).subscribe();
    assertThat(dep.subscribers).hasSize(1);
    d.dispose();
    assertThat(dep.cancels).as("the attempt in flight").hasValue(1);
    assertThat(budget.tokens()).as("nothing charged").isEqualTo(10.0);
    assertThat(events.events().stream().filter(ResilienceEvent::isTerminal)).singleElement()
        .extracting(ResilienceEvent::type).isEqualTo(ResilienceEvent.Type.CANCELLED);
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(dep.subscribers).as("no retry after the cancel").hasSize(1);
  }

  @Test
  void cancellingDuringTheBackoffStartsNoRetry() {
    Script dep = Script.of().fail(new IOException("flaky")).ok("v");
    VirtualTime time = VirtualTime.create();
    Resilience p = Resilience.DEFAULT.withTimeSource(time).withBudget(RetryBudget.NONE)
        .withBackoff(Backoff.constant(Duration.ofSeconds(1))).withListener(events);
    Disposable d = dep.mono().transformDeferred(QuellReactor.of(p)).subscribe();
    d.dispose();
    time.runUntilIdle(Duration.ofMinutes(1));
    assertThat(dep.subscriptions).hasValue(1);
    assertThat(events.terminal().type()).isEqualTo(ResilienceEvent.Type.CANCELLED);
  }

  @Test
  void cancelAndAnswerRacingFromTwoThreadsEndTheCallOnce() throws Exception {
    for (int round = 0; round < 300; round++) {
      EventRecorder recorder = new EventRecorder();
      List<Object> discarded = new CopyOnWriteArrayList<>();
      Stubborn dep = new Stubborn();
      Resilience p = Resilience.DEFAULT.withBudget(RetryBudget.NONE).withDiscard(discarded::add).withListener(recorder);
      AtomicInteger signals = new AtomicInteger();
      Disposable d = dep.transformDeferred(QuellReactor.of(p))
          .subscribe(v -> signals.incrementAndGet(), e -> signals.incrementAndGet(), signals::incrementAndGet);
      Thread answer = new Thread(() -> dep.answer(1, "v"));
      answer.start();
      d.dispose();
      answer.join();
      assertThat(recorder.events().stream().filter(ResilienceEvent::isTerminal)).as("round " + round).hasSize(1);
      StopReason reason = recorder.terminal().type() == ResilienceEvent.Type.CANCELLED ? StopReason.CANCELLED
          : StopReason.SUCCEEDED;
      if (reason == StopReason.CANCELLED) {
        assertThat(discarded).as("the answer after the cancel is discarded").containsExactly("v");
        assertThat(signals).hasValue(0);
      } else {
        assertThat(discarded).isEmpty();
      }
    }
  }

  @Test
  void theAttemptSeesItsDeadlineAndCriticalityFromReactorsContext() {
    AtomicReference<ResilienceContext> seen = new AtomicReference<>();
    AtomicReference<ResilienceContext> onThread = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> {
      ReactorTime time = ReactorTime.of(Schedulers.parallel());
      Resilience p = Resilience.DEFAULT.withTimeSource(time).withAttemptTimeout(Duration.ofSeconds(10))
          .withAmbientCriticality(true);
      ResilienceContext inbound = ResilienceContext.EMPTY.withDeadline(Duration.ofMillis(800), time)
          .withCriticality(Criticality.SHEDDABLE);
      return QuellReactor.currentContext()
          .doOnNext(seen::set)
          .map(c -> {
            onThread.set(ResilienceContext.current());
            return "v";
          })
          .transformDeferred(QuellReactor.of(p))
          .contextWrite(QuellReactor.withContext(inbound));
    }).expectNext("v").verifyComplete();
    assertThat(seen.get().criticality()).isEqualTo(Criticality.SHEDDABLE);
    assertThat(seen.get().remaining()).as("the attempt ends with the inbound deadline").contains(Duration.ofMillis(800));
    assertThat(onThread.get().remaining()).as("and is current on the subscribing thread").contains(Duration.ofMillis(800));
  }

  @Test
  void aDeadlineCarriedInReactorsContextEndsTheCall() {
    Script dep = Script.of().ok("late", Duration.ofSeconds(5));
    StepVerifier.withVirtualTime(() -> {
      ReactorTime time = ReactorTime.of(Schedulers.parallel());
      return dep.mono().transformDeferred(QuellReactor.of(Resilience.DEFAULT.withTimeSource(time)))
          .contextWrite(QuellReactor.withContext(ResilienceContext.EMPTY.withDeadline(Duration.ofMillis(300), time)));
    })
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(300))
        .expectError(dev.quell.DeadlineExceededException.class).verify();
    assertThat(dep.cancellations).hasValue(1);
  }
}
