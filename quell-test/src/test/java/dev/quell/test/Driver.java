package dev.quell.test;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Outcome;
import dev.quell.Resilience;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** The two ways a test runs a policy over scripted work: on the caller's thread, or asynchronously with the virtual clock driven to the end. */
enum Driver {
  SYNC {
    @Override
    <T> Outcome<T> run(Resilience policy, VirtualTime time, Sequence<T> work) {
      return policy.run(work);
    }

    @Override
    <T> Outcome<T> run(Resilience policy, VirtualTime time, Callable<T> work, Resilience.AsyncWork<T> asyncWork) {
      return policy.run(work);
    }
  },
  ASYNC {
    @Override
    <T> Outcome<T> run(Resilience policy, VirtualTime time, Sequence<T> work) {
      return drive(time, policy.runAsync(work));
    }

    @Override
    <T> Outcome<T> run(Resilience policy, VirtualTime time, Callable<T> work, Resilience.AsyncWork<T> asyncWork) {
      return drive(time, policy.runAsync(asyncWork));
    }
  };

  /** Runs one call of {@code work} under {@code policy} and returns how it ended. */
  abstract <T> Outcome<T> run(Resilience policy, VirtualTime time, Sequence<T> work);

  /** Runs one call, synchronous or asynchronous flavour of the same work. */
  abstract <T> Outcome<T> run(Resilience policy, VirtualTime time, Callable<T> work, Resilience.AsyncWork<T> asyncWork);

  static <T> Outcome<T> drive(VirtualTime time, CompletableFuture<Outcome<T>> future) {
    time.runUntilIdle(Duration.ofHours(1));
    assertThat(future).as("the call finished once virtual time ran out of timers").isDone();
    return future.join();
  }
}
