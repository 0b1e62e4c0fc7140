package dev.quell.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.AttemptTimeoutException;
import dev.quell.Backoff;
import dev.quell.CallRejectedException;
import dev.quell.Classifier;
import dev.quell.DeadlineExceededException;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.test.EventRecorder;
import java.io.IOException;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The core's behaviours (as quell-test's PolicyBehaviourTest states them for the sync and async
 * drivers), through the Reactor operator, on Reactor's virtual time: every wait is a timer on
 * {@link ReactorTime} over the {@code VirtualTimeScheduler} that {@code withVirtualTime} installs.
 */
class ReactorBehaviourTest {
  private final EventRecorder events = new EventRecorder();

  /** DEFAULT's shape, jitter-free backoff, no budget, on the virtual scheduler installed by now. */
  private Resilience policy() {
    return Resilience.DEFAULT.withBackoff(Backoff.constant(Duration.ofMillis(100))).withBudget(RetryBudget.NONE)
        .withTimeSource(ReactorTime.of(Schedulers.parallel())).withListener(events);
  }

  private static Supplier<Mono<String>> under(Script script, Function<Mono<String>, Mono<String>> operator) {
    return () -> script.mono().transformDeferred(operator);
  }

  private void assertOneTerminal(ResilienceEvent.Type type) {
    assertThat(events.events().stream().filter(ResilienceEvent::isTerminal))
        .as("exactly one terminal event").singleElement().extracting(ResilienceEvent::type).isEqualTo(type);
  }

  @Test
  void aSuccessfulFirstAttemptEndsTheCall() {
    Script dep = Script.of().ok("v");
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(policy())))
        .expectNext("v").verifyComplete();
    assertThat(dep.subscriptions).hasValue(1);
    assertOneTerminal(ResilienceEvent.Type.SUCCEEDED);
  }

  @Test
  void aMinuteOfBackoffPassesOnVirtualTimeWithoutBlocking() {
    Script dep = Script.of().fail(new IOException("flaky")).ok("v");
    StepVerifier.withVirtualTime(() -> dep.mono()
            .transformDeferred(QuellReactor.of(policy().withBackoff(Backoff.constant(Duration.ofMinutes(1)))
                .withDeadline(Duration.ofMinutes(5)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(59))
        .then(() -> assertThat(dep.subscriptions).as("still waiting out the backoff").hasValue(1))
        .thenAwait(Duration.ofSeconds(1))
        .expectNext("v").verifyComplete();
    assertThat(dep.subscriptions).as("the retry resubscribed").hasValue(2);
    assertThat(events.ofType(ResilienceEvent.Type.RETRYING)).singleElement()
        .satisfies(e -> assertThat(e.delay()).contains(Duration.ofMinutes(1)));
  }

  @Test
  void aPermanentFailureIsNotRetriedAndPassesUnchanged() {
    IllegalStateException bug = new IllegalStateException("bug");
    Script dep = Script.of().fail(bug);
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(policy())))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(bug)).verify();
    assertThat(dep.subscriptions).hasValue(1);
    assertOneTerminal(ResilienceEvent.Type.NOT_RETRIED);
  }

  @Test
  void whenAttemptsRunOutTheLastFailurePassesUnchanged() {
    IOException last = new IOException("third");
    Script dep = Script.of().fail(new IOException("first")).fail(new IOException("second")).fail(last);
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(policy())))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(200))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(last)).verify();
    assertThat(dep.subscriptions).hasValue(3);
    assertOneTerminal(ResilienceEvent.Type.EXHAUSTED);
  }

  @Test
  void aDelayThatWouldCrossTheDeadlineFailsNowInsteadOfWaiting() {
    IOException down = new IOException("down");
    Script dep = Script.of().fail(down);
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(policy()
            .withDeadline(Duration.ofSeconds(1)).withBackoff(Backoff.constant(Duration.ofSeconds(2))))))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(DeadlineExceededException.class).hasCause(down))
        .verify();
    assertThat(dep.subscriptions).hasValue(1);
    assertOneTerminal(ResilienceEvent.Type.DEADLINE_EXCEEDED);
  }

  @Test
  void anAttemptThatOutlivesItsTimeoutIsCancelledAndRetried() {
    Script dep = Script.of().ok("late", Duration.ofSeconds(5)).ok("v");
    StepVerifier.withVirtualTime(() -> dep.mono()
            .transformDeferred(QuellReactor.of(policy().withAttemptTimeout(Duration.ofMillis(250)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(350))
        .expectNext("v").verifyComplete();
    assertThat(dep.subscriptions).hasValue(2);
    assertThat(dep.cancellations).as("the timed-out attempt's subscription was cancelled").hasValue(1);
    assertThat(events.ofType(ResilienceEvent.Type.ATTEMPT_ENDED).get(0).failure())
        .get().isInstanceOf(AttemptTimeoutException.class);
  }

  @Test
  void theDeadlineCapsTheAttemptTimeout() {
    Script dep = Script.of().ok("late", Duration.ofSeconds(5));
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(policy()
            .withDeadline(Duration.ofMillis(300)).withAttemptTimeout(Duration.ofSeconds(10)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(300))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(DeadlineExceededException.class)
            .hasCauseInstanceOf(AttemptTimeoutException.class))
        .verify();
    assertThat(dep.cancellations).hasValue(1);
  }

  @Test
  void aRefusedRetryServesTheGuardedPauseThenRejects() {
    IOException down = new IOException("down");
    Script dep = Script.of().fail(down);
    StepVerifier.withVirtualTime(() -> {
      RetryBudget budget = RetryBudget.replenishing(1, Duration.ofDays(1), ReactorTime.of(Schedulers.parallel()));
      assertThat(budget.trySpend()).isTrue(); // the one token is gone
      return dep.mono().transformDeferred(QuellReactor.of(policy().withBudget(budget)));
    })
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(100))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(CallRejectedException.class).hasCause(down);
          assertThat(((CallRejectedException) e).reason()).isEqualTo(StopReason.BUDGET_EXHAUSTED);
        })
        .verify();
    assertThat(dep.subscriptions).hasValue(1);
    assertOneTerminal(ResilienceEvent.Type.REJECTED_BY_BUDGET);
  }

  @Test
  void aServersRetryAfterWinsOverTheBackoff() {
    Classifier throttling = Classifier.rules()
        .onFailure(e -> e.getMessage().startsWith("slow down"), Verdict.throttled(Duration.ofSeconds(2)));
    Script dep = Script.of().fail(new IOException("slow down")).ok("v");
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(policy()
            .withClassifier(throttling).withDeadline(Duration.ofMinutes(1)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(2))
        .expectNext("v").verifyComplete();
    assertThat(events.ofType(ResilienceEvent.Type.RETRYING)).singleElement()
        .satisfies(e -> assertThat(e.delay()).contains(Duration.ofSeconds(2)));
  }

  @Test
  void aValueTheClassifierRejectsIsRetriedAndDeliveredWhenRetryingIsOver() {
    Classifier busy = Classifier.rules().onResult("busy"::equals, Verdict.TRANSIENT);
    Script dep = Script.of().ok("busy");
    StepVerifier.withVirtualTime(() -> dep.mono().transformDeferred(QuellReactor.of(policy().withClassifier(busy))))
        .thenAwait(Duration.ofSeconds(1))
        .expectNext("busy").verifyComplete();
    assertThat(dep.subscriptions).hasValue(3);
    assertOneTerminal(ResilienceEvent.Type.EXHAUSTED);
  }

  @Test
  void anEmptyMonoIsASuccessWithoutAValue() {
    StepVerifier.withVirtualTime(() -> Mono.<String>empty().transformDeferred(QuellReactor.of(policy())))
        .verifyComplete();
    assertOneTerminal(ResilienceEvent.Type.SUCCEEDED);
  }

  @Test
  void successesCreditTheBudgetAndRetriesSpendIt() {
    RetryBudget budget = RetryBudget.feedback(10, 0.1);
    StepVerifier.withVirtualTime(() -> Script.of().fail(new IOException()).ok("v").mono()
            .transformDeferred(QuellReactor.of(policy().withBudget(budget))))
        .thenAwait(Duration.ofSeconds(1))
        .expectNext("v").verifyComplete();
    assertThat(budget.tokens()).as("the transient failure took one, the success gave 0.1").isEqualTo(9.1);
  }

  @Test
  void aDownstreamThatHopsThreadsGetsTheValueAndTheEnd() {
    Script dep = Script.of().fail(new IOException("flaky")).ok("v");
    Mono<String> hopped = dep.mono()
        .transformDeferred(QuellReactor.of(Resilience.DEFAULT.withBudget(RetryBudget.NONE).withBackoff(Backoff.NONE)))
        .publishOn(Schedulers.single());
    StepVerifier.create(hopped).expectNext("v").expectComplete().verify(Duration.ofSeconds(30));
    StepVerifier.create(Mono.<String>empty().transformDeferred(QuellReactor.of(Resilience.DEFAULT))
        .publishOn(Schedulers.single())).expectComplete().verify(Duration.ofSeconds(30));
    assertThat(dep.subscriptions).hasValue(2);
  }
}
