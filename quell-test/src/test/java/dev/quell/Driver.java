package dev.quell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.test.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Runs one scripted call through a policy with each driver, so that every behaviour test asserts
 * the same behaviour for sync throw style, sync result style and async execution.
 */
enum Driver {
  EXECUTE, RUN, ASYNC;

  /** One scripted attempt: after {@code latency} of virtual time, return {@code value} or throw {@code failure}. */
  static final class Step {
    final Duration latency;
    final @Nullable Object value;
    final @Nullable Exception failure;

    private Step(Duration latency, @Nullable Object value, @Nullable Exception failure) {
      this.latency = latency;
      this.value = value;
      this.failure = failure;
    }

    static Step ok(Object value) {
      return new Step(Duration.ZERO, value, null);
    }

    static Step fail(Exception failure) {
      return new Step(Duration.ZERO, null, failure);
    }

    Step after(Duration latency) {
      return new Step(latency, value, failure);
    }
  }

  /** What a call did, whichever driver ran it. */
  static final class Result {
    StopReason reason;
    @Nullable Object value;
    @Nullable Throwable thrown;
    int attempts;
    Duration elapsed;
    List<ResilienceEvent> events;

    ResilienceEvent terminal() {
      return events.stream().filter(ResilienceEvent::isTerminal).findFirst().orElseThrow();
    }

    List<ResilienceEvent> ofType(ResilienceEvent.Type type) {
      return events.stream().filter(e -> e.type() == type).collect(java.util.stream.Collectors.toList());
    }
  }

  Result run(Resilience policy, VirtualTime time, Step... script) {
    List<ResilienceEvent> events = Collections.synchronizedList(new ArrayList<>());
    Resilience p = policy.withTimeSource(time).withListener(events::add);
    AtomicInteger calls = new AtomicInteger();
    long start = time.nanoTime();
    long[] end = new long[1];
    Result r = new Result();
    switch (this) {
      case EXECUTE:
        try {
          r.value = p.execute(() -> syncStep(time, script, calls));
        } catch (Exception e) {
          r.thrown = e;
        }
        end[0] = time.nanoTime();
        break;
      case RUN:
        Outcome<Object> o = p.run(() -> syncStep(time, script, calls));
        r.value = o.value();
        r.thrown = o.failure().orElse(null);
        assertThat(o.attempts()).isEqualTo(calls.get());
        end[0] = time.nanoTime();
        assertThat(o.elapsed()).isEqualTo(Duration.ofNanos(end[0] - start));
        break;
      default:
        CompletableFuture<Object> f = p.executeAsync(() -> asyncStep(time, script, calls));
        f.whenComplete((v, t) -> end[0] = time.nanoTime());
        time.runUntilIdle(Duration.ofHours(1));
        assertThat(f).isDone();
        try {
          r.value = f.get();
        } catch (ExecutionException e) {
          r.thrown = e.getCause();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
    }
    r.events = List.copyOf(events);
    r.attempts = calls.get();
    r.elapsed = Duration.ofNanos(end[0] - start);
    long terminals = r.events.stream().filter(ResilienceEvent::isTerminal).count();
    assertThat(terminals).as("exactly one terminal event per call: %s", r.events).isEqualTo(1);
    assertThat(r.events.get(r.events.size() - 1).isTerminal()).as("the terminal event comes last").isTrue();
    r.reason = r.terminal().stopReason().orElseThrow();
    assertThat(r.ofType(ResilienceEvent.Type.ATTEMPT_STARTED)).hasSize(r.attempts);
    return r;
  }

  private static Object syncStep(VirtualTime time, Step[] script, AtomicInteger calls) throws Exception {
    Step s = next(script, calls);
    if (!s.latency.isZero()) {
      time.sleep(s.latency); // an attempt timeout on the same clock interrupts this
    }
    if (s.failure != null) {
      throw s.failure;
    }
    return s.value;
  }

  private static CompletableFuture<Object> asyncStep(VirtualTime time, Step[] script, AtomicInteger calls) {
    Step s = next(script, calls);
    CompletableFuture<Object> f = new CompletableFuture<>();
    Runnable complete = () -> {
      if (s.failure != null) {
        f.completeExceptionally(s.failure);
      } else {
        f.complete(s.value);
      }
    };
    if (s.latency.isZero()) {
      complete.run();
    } else {
      time.schedule(complete, s.latency.toNanos());
    }
    return f;
  }

  private static Step next(Step[] script, AtomicInteger calls) {
    int n = calls.getAndIncrement();
    if (n >= script.length) {
      throw new AssertionError("attempt " + (n + 1) + " ran past the script of " + script.length);
    }
    return script[n];
  }
}
