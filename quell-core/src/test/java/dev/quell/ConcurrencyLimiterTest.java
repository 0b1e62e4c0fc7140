package dev.quell;

import static dev.quell.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ConcurrencyLimiterTest {
  private static final long NOW = 42;

  @Test
  void admitsNAtOnceAndRefusesTheNextWithNoRetryAfter() {
    Limiter limiter = Limiter.concurrency(3);
    Gate gate = limiter.gate();
    for (int i = 0; i < 3; i++) {
      assertThat(gate.tryAdmit(attempt(NOW), 0, NOW)).isTrue();
    }
    AttemptRecord refused = attempt(NOW);
    refused.retryAfterNanos = 123;
    assertThat(gate.tryAdmit(refused, 0, NOW)).isFalse();
    assertThat(refused.retryAfterNanos).isEqualTo(-1);
    assertThat(gate.refusal()).isEqualTo(StopReason.LIMITED);
    assertThat(limiter.inFlight()).isEqualTo(3);
    assertThat(limiter.available()).isZero();
    assertThat(limiter.limit()).isEqualTo(3);
  }

  @Test
  void everyEndReturnsThePermitHoweverTheAttemptEnded() {
    Limiter limiter = Limiter.concurrency(1);
    Gate gate = limiter.gate();
    for (int how = Gate.SUCCEEDED; how <= Gate.NOT_STARTED; how++) {
      AttemptRecord a = attempt(NOW);
      assertThat(gate.tryAdmit(a, 0, NOW)).as("after an attempt that ended as %d", how - 1).isTrue();
      gate.release(a, 0, how, NOW);
    }
    assertThat(limiter.inFlight()).isZero();
    assertThat(limiter.available()).isEqualTo(1);
  }

  @Test
  void withoutAWaitNothingQueues() {
    Limiter limiter = Limiter.concurrency(1);
    assertThat(limiter.gate().maxWaitNanos()).isZero();
    assertThat(limiter.gate().tryAdmit(attempt(NOW), 0, NOW)).isTrue();
    AttemptRecord refused = attempt(NOW);
    assertThat(limiter.gate().tryAdmit(refused, 0, NOW)).isFalse();
    assertThat(limiter.gate().await(refused, 0, () -> {})).isFalse();
    assertThat(limiter.queued()).isZero();
  }

  @Test
  void anEndingAttemptHandsItsPermitToTheOldestWaiterOnItsOwnThread() {
    Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AttemptRecord running = attempt(NOW);
    assertThat(gate.tryAdmit(running, 0, NOW)).isTrue();
    List<String> order = new ArrayList<>();
    AtomicReference<Thread> grantedOn = new AtomicReference<>();
    AttemptRecord first = attempt(NOW);
    AttemptRecord second = attempt(NOW);
    assertThat(gate.tryAdmit(first, 0, NOW)).isFalse();
    assertThat(gate.await(first, 0, () -> {
      order.add("first");
      grantedOn.set(Thread.currentThread());
    })).isTrue();
    assertThat(gate.tryAdmit(second, 0, NOW)).isFalse();
    assertThat(gate.await(second, 0, () -> order.add("second"))).isTrue();
    assertThat(limiter.queued()).isEqualTo(2);
    assertThat(first.granted).isFalse();

    gate.release(running, 0, Gate.SUCCEEDED, NOW);
    assertThat(order).containsExactly("first");
    assertThat(first.granted).isTrue();
    assertThat(second.granted).isFalse();
    assertThat(grantedOn.get()).isSameAs(Thread.currentThread());
    assertThat(limiter.inFlight()).isEqualTo(1); // the permit changed hands; it was never free
    assertThat(limiter.queued()).isEqualTo(1);

    gate.release(first, 0, Gate.FAILED, NOW);
    assertThat(order).containsExactly("first", "second");
    gate.release(second, 0, Gate.CANCELLED, NOW);
    assertThat(limiter.inFlight()).isZero();
    assertThat(limiter.queued()).isZero();
  }

  @Test
  void aNewcomerNeverOvertakesTheQueue() {
    Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AttemptRecord running = attempt(NOW);
    gate.tryAdmit(running, 0, NOW);
    AttemptRecord waiting = attempt(NOW);
    gate.tryAdmit(waiting, 0, NOW);
    gate.await(waiting, 0, () -> {});
    gate.release(running, 0, Gate.SUCCEEDED, NOW);
    assertThat(waiting.granted).isTrue();
    AttemptRecord newcomer = attempt(NOW);
    assertThat(gate.tryAdmit(newcomer, 0, NOW)).isFalse();
    assertThat(limiter.available()).isZero();
  }

  @Test
  void whileAnyoneIsQueuedANewcomerIsRefusedEvenIfItRaces() {
    Limiter limiter = Limiter.concurrency(2, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AttemptRecord a = attempt(NOW);
    AttemptRecord b = attempt(NOW);
    gate.tryAdmit(a, 0, NOW);
    gate.tryAdmit(b, 0, NOW);
    AttemptRecord w1 = attempt(NOW);
    AttemptRecord w2 = attempt(NOW);
    gate.await(w1, 0, () -> {});
    gate.await(w2, 0, () -> {});
    gate.release(a, 0, Gate.SUCCEEDED, NOW);
    assertThat(w1.granted).isTrue();
    assertThat(gate.tryAdmit(attempt(NOW), 0, NOW)).isFalse();
    assertThat(gate.cancelAwait(w2, 0)).isTrue();
    assertThat(limiter.queued()).isZero();
    assertThat(limiter.inFlight()).isEqualTo(2);
    gate.release(b, 0, Gate.SUCCEEDED, NOW);
    assertThat(gate.tryAdmit(attempt(NOW), 0, NOW)).isTrue();
  }

  @Test
  void cancellingAQueuedWaitLeavesItHoldingNothing() {
    Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AttemptRecord running = attempt(NOW);
    gate.tryAdmit(running, 0, NOW);
    AttemptRecord gaveUp = attempt(NOW);
    AttemptRecord next = attempt(NOW);
    gate.await(gaveUp, 0, () -> {
      throw new AssertionError("a cancelled wait must never be granted");
    });
    gate.await(next, 0, () -> {});
    assertThat(gate.cancelAwait(gaveUp, 0)).isTrue();
    assertThat(gate.cancelAwait(gaveUp, 0)).as("twice: it still holds nothing").isTrue();
    gate.release(running, 0, Gate.SUCCEEDED, NOW);
    assertThat(gaveUp.granted).isFalse();
    assertThat(next.granted).isTrue();
  }

  @Test
  void cancellingAfterTheHandOverReportsThatThePermitIsHeld() {
    Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AttemptRecord running = attempt(NOW);
    gate.tryAdmit(running, 0, NOW);
    AttemptRecord waiter = attempt(NOW);
    gate.await(waiter, 0, () -> {});
    gate.release(running, 0, Gate.SUCCEEDED, NOW);
    assertThat(gate.cancelAwait(waiter, 0)).isFalse();
    assertThat(waiter.granted).isTrue();
    assertThat(limiter.inFlight()).isEqualTo(1);
    gate.release(waiter, 0, Gate.NOT_STARTED, NOW); // it holds the permit, so it must give it back
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void aPermitFreedBetweenTheRefusalAndTheAwaitIsGrantedAtOnce() {
    Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AttemptRecord running = attempt(NOW);
    gate.tryAdmit(running, 0, NOW);
    AttemptRecord late = attempt(NOW);
    assertThat(gate.tryAdmit(late, 0, NOW)).isFalse();
    gate.release(running, 0, Gate.SUCCEEDED, NOW); // nobody queued yet: the permit goes back
    boolean[] ran = {false};
    assertThat(gate.await(late, 0, () -> ran[0] = true)).isTrue();
    assertThat(late.granted).as("the caller checks this and carries on").isTrue();
    assertThat(ran[0]).as("no callback into a caller that is inside its own admission").isFalse();
    assertThat(limiter.queued()).isZero();
    assertThat(limiter.inFlight()).isEqualTo(1);
    assertThat(gate.cancelAwait(late, 0)).as("it holds the permit").isFalse();
  }

  @Test
  void theGrantCallbackRunsOutsideTheLimitersLock() {
    Limiter limiter = Limiter.concurrency(1, Duration.ofSeconds(1));
    Gate gate = limiter.gate();
    AttemptRecord running = attempt(NOW);
    gate.tryAdmit(running, 0, NOW);
    AttemptRecord waiter = attempt(NOW);
    AttemptRecord bystander = attempt(NOW);
    Boolean[] otherThreadGotThrough = {null};
    gate.await(waiter, 0, () -> {
      // another thread takes the limiter's lock while this callback waits for it: under the lock, a deadlock
      try {
        otherThreadGotThrough[0] = CompletableFuture.supplyAsync(() -> gate.cancelAwait(bystander, 0))
            .get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new AssertionError("the callback ran under the limiter's lock", e);
      }
    });
    gate.release(running, 0, Gate.SUCCEEDED, NOW);
    assertThat(waiter.granted).isTrue();
    assertThat(otherThreadGotThrough[0]).as("the bystander never queued, so it holds nothing").isTrue();
  }

  @Test
  void maxWaitIsWhatTheCoreReadsAndSaturates() {
    assertThat(Limiter.concurrency(2, Duration.ofMillis(250)).gate().maxWaitNanos()).isEqualTo(250_000_000L);
    assertThat(Limiter.concurrency(2, ChronoUnit.FOREVER.getDuration()).gate().maxWaitNanos()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void badParametersAreNamedWithTheirValues() {
    assertThatThrownBy(() -> Limiter.concurrency(0)).isInstanceOf(ResilienceConfigurationException.class)
        .hasMessageContaining("concurrency limit n was 0");
    assertThatThrownBy(() -> Limiter.concurrency(-1)).hasMessageContaining("n was -1");
    assertThatThrownBy(() -> Limiter.concurrency(Integer.MAX_VALUE)).hasMessageContaining("n was 2147483647");
    assertThatThrownBy(() -> Limiter.concurrency(1, Duration.ofNanos(-1))).hasMessageContaining("maxWait was");
    assertThatThrownBy(() -> Limiter.concurrency(1, (Duration) nothing())).hasMessageContaining("maxWait was null");
    assertThat(Limiter.concurrency(Integer.MAX_VALUE - 1).available()).isEqualTo(Integer.MAX_VALUE - 1);
  }

  @Test
  void moreReleasesThanAdmissionsNeverDriveTheCountNegative() {
    Limiter limiter = Limiter.concurrency(2);
    limiter.gate().release(attempt(NOW), 0, Gate.SUCCEEDED, NOW);
    assertThat(limiter.inFlight()).isZero();
    assertThat(limiter.available()).isEqualTo(2);
  }

  @Test
  void toStringShowsTheState() {
    Limiter limiter = Limiter.concurrency(4, Duration.ofMillis(5));
    limiter.gate().tryAdmit(attempt(NOW), 0, NOW);
    assertThat(limiter.toString()).contains("limit=4", "inFlight=1", "queued=0", "maxWait=PT0.005S");
    assertThat(limiter.name()).startsWith("concurrency-");
  }

  private static Object nothing() {
    return null;
  }
}
