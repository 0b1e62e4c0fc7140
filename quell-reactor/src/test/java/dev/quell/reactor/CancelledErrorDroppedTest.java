package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.test.EventRecorder;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;

/**
 * A subscriber that cancels while an attempt fails: the failure is nobody's to see, so it is not
 * handed to Reactor's {@code onErrorDropped} hook (whose default logs it as an error), and no
 * attempt starts after the cancel. Regression test: the cancel that came while the call was still
 * starting did not reach the core, which went on retrying, and the call's failure then went to
 * {@code Hooks.onErrorDropped}.
 */
class CancelledErrorDroppedTest {
  private final List<Throwable> dropped = new CopyOnWriteArrayList<>();
  private final EventRecorder events = new EventRecorder();

  @BeforeEach
  void collectDroppedErrors() {
    Hooks.onErrorDropped(dropped::add);
  }

  @AfterEach
  void resetHook() {
    Hooks.resetOnErrorDropped();
  }

  /** A subscriber that keeps its subscription, requests everything, and records what reaches it. */
  static final class Keeping<T> extends BaseSubscriber<T> {
    final AtomicReference<Subscription> subscription = new AtomicReference<>();
    final List<Object> signals = new CopyOnWriteArrayList<>();

    @Override
    protected void hookOnSubscribe(Subscription s) {
      subscription.set(s);
      s.request(Long.MAX_VALUE);
    }

    @Override
    protected void hookOnNext(T value) {
      signals.add(value);
    }

    @Override
    protected void hookOnError(Throwable t) {
      signals.add(t);
    }

    @Override
    protected void hookOnComplete() {
      signals.add("complete");
    }
  }

  private Resilience policy(int attempts) {
    return Resilience.DEFAULT.withAttempts(attempts).withBackoff(Backoff.NONE).withBudget(RetryBudget.NONE)
        .withListener(events);
  }

  @Test
  void aMonoCancelledAsItsAttemptFailsDropsNoErrorAndStartsNoRetry() {
    Keeping<String> subscriber = new Keeping<>();
    AtomicInteger subscriptions = new AtomicInteger();
    Mono<String> dependency = Mono.defer(() -> {
      subscriptions.incrementAndGet();
      subscriber.cancel(); // the subscriber goes away while the attempt is failing
      return Mono.error(new IOException("refused"));
    });
    dependency.transformDeferred(QuellReactor.of(policy(3))).subscribe(subscriber);

    assertThat(dropped).as("no failure handed to Hooks.onErrorDropped").isEmpty();
    assertThat(subscriber.signals).as("a cancelled subscriber hears nothing").isEmpty();
    assertThat(subscriptions).as("no attempt after the cancel").hasValue(1);
    assertThat(events.terminal().stopReason()).contains(StopReason.CANCELLED);
  }

  @Test
  void anUnobservedMonoCancelledAsItsFirstAttemptFailsDropsNoErrorAndStartsNoRetry() {
    Keeping<String> subscriber = new Keeping<>();
    AtomicInteger subscriptions = new AtomicInteger();
    Mono<String> dependency = Mono.defer(() -> {
      subscriptions.incrementAndGet();
      subscriber.cancel();
      return Mono.error(new IOException("refused"));
    });
    Resilience unobserved = Resilience.DEFAULT.withAttempts(3).withBackoff(Backoff.NONE);
    dependency.transformDeferred(QuellReactor.of(unobserved)).subscribe(subscriber);

    assertThat(dropped).isEmpty();
    assertThat(subscriber.signals).isEmpty();
    assertThat(subscriptions).hasValue(1);
  }

  @Test
  void aMonoCancelledAsItsOnlyAttemptFailsDropsNoError() {
    Keeping<String> subscriber = new Keeping<>();
    Mono<String> dependency = Mono.defer(() -> {
      subscriber.cancel();
      return Mono.error(new IOException("refused"));
    });
    dependency.transformDeferred(QuellReactor.of(policy(1))).subscribe(subscriber);

    assertThat(dropped).isEmpty();
    assertThat(subscriber.signals).isEmpty();
  }

  @Test
  void aMonoCancelledAfterItsAttemptStartedDropsNoErrorWhenTheAttemptFailsLate() {
    Keeping<String> subscriber = new Keeping<>();
    AtomicReference<CoreSubscriber<? super String>> upstream = new AtomicReference<>();
    Mono<String> dependency = new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super String> actual) {
        upstream.set(actual);
        actual.onSubscribe(new Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {} // ignores cancellation: its failure still comes
        });
      }
    };
    dependency.transformDeferred(QuellReactor.of(policy(3))).subscribe(subscriber);
    subscriber.cancel();
    upstream.get().onError(new IOException("late"));

    assertThat(dropped).isEmpty();
    assertThat(subscriber.signals).isEmpty();
    assertThat(events.terminal().stopReason()).contains(StopReason.CANCELLED);
  }

  @Test
  void aFluxCancelledAsItsAttemptFailsDropsNoErrorAndStartsNoRetry() {
    Keeping<String> subscriber = new Keeping<>();
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<String> dependency = Flux.defer(() -> {
      subscriptions.incrementAndGet();
      subscriber.cancel();
      return Flux.error(new IOException("refused"));
    });
    dependency.transformDeferred(QuellReactor.of(policy(3))).subscribe(subscriber);

    assertThat(dropped).isEmpty();
    assertThat(subscriber.signals).isEmpty();
    assertThat(subscriptions).hasValue(1);
  }
}
