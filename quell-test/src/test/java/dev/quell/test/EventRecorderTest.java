package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quell.Backoff;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.ResilienceEvent;
import dev.quell.ResilienceEvent.Type;
import dev.quell.StopReason;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EventRecorderTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void recordsACallInOrder(Driver driver) {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT.withBackoff(Backoff.constant(Duration.ofMillis(10))));
    Sequence<String> work = Sequence.<String>script(test.time()).thenThrow(new IOException("x")).thenReturn("ok");

    driver.run(test.policy(), test.time(), work);

    EventRecorder events = test.events();
    assertThat(events.types()).containsExactly(
        Type.ATTEMPT_STARTED, Type.ATTEMPT_ENDED, Type.RETRYING,
        Type.ATTEMPT_STARTED, Type.ATTEMPT_ENDED, Type.SUCCEEDED);
    assertThat(events.ofType(Type.RETRYING).get(0).delay()).contains(Duration.ofMillis(10));
    assertThat(events.terminal().attempt()).isEqualTo(2);
    assertThat(events.last().type()).isEqualTo(Type.SUCCEEDED);
    assertThat(events.events()).allSatisfy(e -> assertThat(e.policy()).isEqualTo("default"));
  }

  @Test
  void terminalInsistsOnExactlyOneCall() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    EventRecorder events = test.events();

    assertThatThrownBy(events::terminal).isInstanceOf(AssertionError.class).hasMessageContaining("no events");

    test.policy().run(() -> "a");
    test.policy().run(() -> "b");

    assertThatThrownBy(events::terminal)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("2 terminal events")
        .hasMessageContaining("SUCCEEDED");
    assertThat(events.terminals()).extracting(ResilienceEvent::type).containsExactly(Type.SUCCEEDED, Type.SUCCEEDED);

    events.clear();
    assertThat(events.events()).isEmpty();
    test.policy().run(() -> "c");
    assertThat(events.terminal().type()).isEqualTo(Type.SUCCEEDED);
  }

  @Test
  void aCallStillRunningHasNotEnded() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    Sequence<String> work = Sequence.<String>script(test.time()).thenReturnAfter(Duration.ofSeconds(1), "later");

    CompletableFuture<String> future = test.policy().executeAsync(work);

    assertThatThrownBy(test.events()::terminals)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("1 call started but 0 terminal events");
    test.time().runUntilIdle(Duration.ofMinutes(1));
    assertThat(future).isCompletedWithValue("later");
    assertThat(test.events().terminal().type()).isEqualTo(Type.SUCCEEDED);
  }

  @Test
  void aSecondTerminalEventForOneCallIsCaught() {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    test.policy().run(() -> "a");
    EventRecorder replay = new EventRecorder();
    for (ResilienceEvent e : test.events().events()) {
      replay.onEvent(e);
    }
    replay.onEvent(test.events().last()); // a listener told twice that the same call ended

    assertThatThrownBy(replay::terminals)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("policy 'default': 1 call started but 2 terminal events");
  }

  @Test
  void aCallThatEndsBeforeItsFirstAttemptCountsAsOneCall() throws Exception {
    // a call whose ambient deadline has already passed ends before any attempt, with attempt() == 0
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    Outcome<String> outcome = ResilienceContext.current()
        .withDeadline(Duration.ZERO, test.time())
        .call(() -> test.policy().run(() -> "never"));

    assertThat(outcome.stopReason()).isEqualTo(StopReason.DEADLINE_EXCEEDED);
    assertThat(test.events().terminal().attempt()).isZero();
  }

  @Test
  void countsByTypeAcrossPolicies() {
    EventRecorder events = new EventRecorder();
    VirtualTime time = VirtualTime.create();
    Resilience a = Resilience.DEFAULT.with(s -> s.name("a").timeSource(time).listener(events).backoff(Backoff.NONE));
    Resilience b = Resilience.DEFAULT.with(s -> s.name("b").timeSource(time).listener(events));

    a.run(Sequence.<String>script().thenThrow(new IOException()).thenReturn("ok"));
    b.run(() -> { throw new IllegalStateException("permanent"); });

    assertThat(events.count(Type.ATTEMPT_STARTED)).isEqualTo(3);
    assertThat(events.terminals()).extracting(ResilienceEvent::type).containsExactly(Type.SUCCEEDED, Type.NOT_RETRIED);
    assertThat(events.toString()).startsWith("EventRecorder[ATTEMPT_STARTED");
  }

  @Test
  void recordsEveryEventFromManyThreads() throws Exception {
    TestPolicy test = TestPolicy.instant(Resilience.DEFAULT);
    int threads = 8;
    int calls = 300;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          go.await();
          for (int i = 0; i < calls; i++) {
            test.policy().run(() -> "ok");
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(1, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }

    EventRecorder events = test.events();
    assertThat(events.count(Type.ATTEMPT_STARTED)).isEqualTo(threads * calls);
    assertThat(events.count(Type.ATTEMPT_ENDED)).isEqualTo(threads * calls);
    assertThat(events.terminals()).hasSize(threads * calls);
    assertThat(events.events()).hasSize(3 * threads * calls);
  }
}
