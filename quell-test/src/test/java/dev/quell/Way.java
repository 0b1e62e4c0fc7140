package dev.quell;

import dev.quell.Driver.Result;
import dev.quell.Driver.Step;
import dev.quell.test.VirtualTime;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every way a call can be run: the three {@link Driver}s on a virtual clock with a listener, and
 * {@link #FAST}, the synchronous real-clock path with no listener — the first-attempt fast path the
 * virtual-clock harness never reaches. Regression tests run on all four.
 *
 * <p>{@code FAST} runs immediate steps only (the real clock is not slept on in tests), has no
 * events and no elapsed time, and knows the stop reason only from what {@code execute} returned
 * or threw: Quell's own exceptions name it; the work's own exception leaves it null.
 */
enum Way {
  EXECUTE, RUN, ASYNC, FAST;

  Result run(Resilience policy, VirtualTime time, Step... script) {
    if (this != FAST) {
      return Driver.valueOf(name()).run(policy, time, script);
    }
    for (Step s : script) {
      if (!s.latency.isZero()) {
        throw new IllegalArgumentException("the real-clock fast path runs immediate steps only");
      }
    }
    Resilience p = policy.withTimeSource(TimeSource.system()).with(Resilience.Settings::clearListeners);
    AtomicInteger calls = new AtomicInteger();
    Callable<Object> work = () -> {
      int n = calls.getAndIncrement();
      if (n >= script.length) {
        throw new AssertionError("attempt " + (n + 1) + " ran past the script of " + script.length);
      }
      Step s = script[n];
      if (s.failure != null) {
        throw s.failure;
      }
      return s.value;
    };
    Result r = new Result();
    try {
      r.value = p.execute(work);
      r.reason = StopReason.SUCCEEDED;
    } catch (CallRejectedException e) {
      r.thrown = e;
      r.reason = e.reason();
    } catch (DeadlineExceededException e) {
      r.thrown = e;
      r.reason = StopReason.DEADLINE_EXCEEDED;
    } catch (InterruptedException e) {
      r.thrown = e;
      r.reason = StopReason.CANCELLED;
    } catch (Exception e) {
      r.thrown = e;
    }
    r.attempts = calls.get();
    r.events = java.util.List.of();
    return r;
  }
}
