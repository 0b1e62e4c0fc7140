package dev.quell.behaviour;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceEvent;
import dev.quell.TimeSource;
import dev.quell.kotlin.test.TestTimeKt;
import dev.quell.reactor.QuellReactor;
import dev.quell.reactor.ReactorTime;
import dev.quell.sim.internal.SimClock;
import dev.quell.test.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import kotlinx.coroutines.test.TestCoroutineScheduler;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Every way a call runs, each on its own clock, so that one behaviour test asserts the same
 * behaviour through all of them:
 *
 * <ul>
 *   <li>{@link #EXECUTE}, {@link #RUN}: the synchronous driver, throw style and result style, the
 *       call on a thread of its own and its hedges on a controlled executor, on a
 *       {@link ControlledTime} that only the test thread moves (deterministic, hedges included);
 *   <li>{@link #ASYNC}: {@code executeAsync} on quell-test's {@link VirtualTime};
 *   <li>{@link #FAST}, {@link #REAL_LISTENED}: the real clock, without a listener (the fast lanes)
 *       and with one; immediate answers only, since nothing may sleep on the real clock here;
 *   <li>{@link #SIMULATOR}: {@code runAsync} on quell-sim's own clock, confined to one thread (the
 *       clock the simulator runs policies on, on which the core takes no locks);
 *   <li>{@link #REACTOR}: {@code mono.transformDeferred(QuellReactor.of(policy))} on reactor-test's
 *       {@code VirtualTimeScheduler}, through {@link ReactorTime};
 *   <li>{@link #KOTLIN_EXECUTE}, {@link #KOTLIN_RUN}: {@code executeSuspend} and {@code runSuspend} in
 *       {@code runTest}, on kotlinx-coroutines-test's scheduler through {@code asTimeSource()}.
 * </ul>
 *
 * <p>Every listened run checks that the call reported exactly one terminal event, last, and one
 * {@code ATTEMPT_STARTED} per attempt the dependency saw.
 */
enum Driver {
  EXECUTE(false, true, true),
  RUN(false, true, true),
  ASYNC(false, true, true),
  FAST(true, false, false),
  REAL_LISTENED(true, true, false),
  SIMULATOR(false, true, true),
  REACTOR(false, true, false),
  KOTLIN_EXECUTE(false, true, false),
  KOTLIN_RUN(false, true, false);

  /** Real clock: immediate answers only. */
  final boolean realClock;
  final boolean listened;
  /** Its work can ignore cancellation and answer anyway ({@link Script.Step#stubborn}). */
  final boolean stubbornWork;

  Driver(boolean realClock, boolean listened, boolean stubbornWork) {
    this.realClock = realClock;
    this.listened = listened;
    this.stubbornWork = stubbornWork;
  }

  boolean virtual() {
    return !realClock;
  }

  boolean kotlin() {
    return this == KOTLIN_EXECUTE || this == KOTLIN_RUN;
  }

  /** A cancellation by the caller at {@code at}; {@code first}: ordered before anything else due then. */
  record Cancel(Duration at, boolean first) {}

  /** A fresh clock for one call (or one run of many calls), and the way to run calls on it. */
  Rig rig() {
    switch (this) {
      case EXECUTE:
      case RUN:
        return new SyncRig(this);
      case ASYNC:
        return new AsyncRig();
      case FAST:
      case REAL_LISTENED:
        return new RealRig(this);
      case SIMULATOR:
        return new SimRig();
      case REACTOR:
        return new ReactorRig();
      default:
        return new KotlinRig(this == KOTLIN_RUN);
    }
  }

  abstract static class Rig {
    final List<ResilienceEvent> events = Collections.synchronizedList(new ArrayList<>());
    final Driver driver;

    Rig(Driver driver) {
      this.driver = driver;
    }

    /** The clock this rig's calls run on: make budgets on it. */
    abstract TimeSource time();

    Ran run(Resilience policy, Script script) {
      return run(policy, script, null);
    }

    final Ran run(Resilience policy, Script script, @Nullable Cancel cancel) {
      events.clear();
      Resilience p = policy.withTimeSource(time());
      if (driver.listened) {
        p = p.withListener(events::add);
      }
      Ran r = new Ran();
      call(p, script, cancel, r);
      r.attempts = script.attempts();
      r.events = List.copyOf(events);
      if (driver.listened) {
        assertThat(r.events.stream().filter(ResilienceEvent::isTerminal).count())
            .as("exactly one terminal event: %s", r).isEqualTo(1);
        ResilienceEvent last = r.events.get(r.events.size() - 1);
        assertThat(last.isTerminal()).as("the terminal event comes last: %s", r).isTrue();
        if (r.reason != null) {
          assertThat(last.stopReason()).as("the outcome and the terminal event agree").contains(r.reason);
        }
        r.reason = last.stopReason().orElseThrow();
        assertThat(r.ofType(ResilienceEvent.Type.ATTEMPT_STARTED)).as("attempts started: %s", r).hasSize(r.attempts);
      }
      return r;
    }

    abstract void call(Resilience p, Script script, @Nullable Cancel cancel, Ran r);

    /** Runs every call started on this rig's clock to its end (for many calls at once). */
    abstract void settle();
  }

  // ---------------------------------------------------------------- sync, controlled clock

  static final class SyncRig extends Rig {
    final ControlledTime time = new ControlledTime();

    SyncRig(Driver driver) {
      super(driver);
    }

    @Override
    TimeSource time() {
      return time;
    }

    /** Hedges run on the clock's participant threads. */
    Resilience controlled(Resilience p) {
      return p.hedge().map(h -> p.withHedge(h.withExecutor(time.executor()))).orElse(p);
    }

    /** Starts one call on a participant thread; {@code r} is filled when it ends. */
    Thread begin(Resilience policy, Script script, Ran r) {
      return time.start("caller", () -> callHere(policy, script, r));
    }

    /** Runs one call on this (participant) thread and fills {@code r}. */
    void callHere(Resilience policy, Script script, Ran r) {
      Resilience p = controlled(policy);
      long start = time.nanoTime();
      try {
        if (driver == RUN) {
          Outcome<Object> o = p.run(() -> step(time, script));
          r.value = o.value();
          r.thrown = o.failure().orElse(null);
          r.reason = o.stopReason();
          assertThat(o.attempts()).as("the outcome's attempts").isEqualTo(script.attempts());
        } else {
          r.value = p.execute(() -> step(time, script));
        }
      } catch (Exception e) {
        r.thrown = e;
      } finally {
        r.signals++;
        r.elapsed = Duration.ofNanos(time.nanoTime() - start);
        Thread.interrupted(); // a cancelled call keeps the flag for its caller: this thread is done
      }
    }

    @Override
    void call(Resilience p, Script script, @Nullable Cancel cancel, Ran r) {
      AtomicReference<Thread> owner = new AtomicReference<>();
      if (cancel != null && cancel.first()) {
        time.schedule(() -> owner.get().interrupt(), cancel.at().toNanos());
      }
      owner.set(begin(p, script, r));
      if (cancel != null && !cancel.first()) {
        time.runUntilIdle(Duration.ZERO); // the call is under way: what it set up now comes first
        time.schedule(() -> owner.get().interrupt(), cancel.at().toNanos() - time.nanoTime());
      }
      settle();
    }

    @Override
    void settle() {
      time.runUntilIdle(Duration.ofHours(1));
      assertThat(time.allDone()).as("the call and every hedge ended, at %s", time).isTrue();
    }

    static Object step(ControlledTime time, Script script) throws Exception {
      Script.Step s = script.next();
      if (!s.latency.isZero()) {
        if (s.stubborn) {
          long until = time.nanoTime() + s.latency.toNanos();
          boolean interrupted = false;
          while (time.nanoTime() < until) {
            try {
              time.sleep(until - time.nanoTime());
            } catch (InterruptedException e) {
              interrupted = true;
            }
          }
          if (interrupted) {
            script.cancelled.incrementAndGet();
            if (s.value != null) {
              script.answered.add(s.value);
            }
            Thread.currentThread().interrupt(); // as well-behaved blocking code does
          }
        } else {
          try {
            time.sleep(s.latency.toNanos());
          } catch (InterruptedException e) {
            script.cancelled.incrementAndGet();
            throw e;
          }
        }
      }
      if (s.failure != null) {
        throw s.failure;
      }
      return s.value;
    }
  }

  // ---------------------------------------------------------------- async, VirtualTime

  static final class AsyncRig extends Rig {
    final VirtualTime time = VirtualTime.create();

    AsyncRig() {
      super(ASYNC);
    }

    @Override
    TimeSource time() {
      return time;
    }

    @Override
    void call(Resilience p, Script script, @Nullable Cancel cancel, Ran r) {
      AtomicReference<CompletableFuture<Object>> call = new AtomicReference<>();
      if (cancel != null && cancel.first()) {
        time.schedule(() -> call.get().cancel(true), cancel.at().toNanos());
      }
      long start = time.nanoTime();
      CompletableFuture<Object> f = p.executeAsync(() -> futureStep(time, script));
      call.set(f);
      f.whenComplete((v, t) -> {
        r.signals++;
        r.elapsed = Duration.ofNanos(time.nanoTime() - start);
        r.value = v;
        r.thrown = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
      });
      if (cancel != null && !cancel.first()) {
        time.schedule(() -> f.cancel(true), cancel.at().toNanos() - time.nanoTime());
      }
      settle();
      assertThat(f).isDone();
    }

    @Override
    void settle() {
      time.runUntilIdle(Duration.ofHours(1));
    }
  }

  /** An attempt as a future, answered on {@code time}; cancelling it cancels its timer unless the work is stubborn. */
  static CompletableFuture<Object> futureStep(TimeSource time, Script script) {
    Script.Step s = script.next();
    java.util.concurrent.atomic.AtomicBoolean unwanted = new java.util.concurrent.atomic.AtomicBoolean();
    CompletableFuture<Object> f = s.stubborn ? new CompletableFuture<>() {
      @Override
      public boolean cancel(boolean mayInterruptIfRunning) {
        if (unwanted.compareAndSet(false, true)) {
          script.cancelled.incrementAndGet();
        }
        return false; // work that ignores cancellation and answers anyway
      }
    } : new CompletableFuture<>();
    Runnable answer = () -> {
      if (unwanted.get() && s.value != null) {
        script.answered.add(s.value);
      }
      if (s.failure != null) {
        f.completeExceptionally(s.failure);
      } else {
        f.complete(s.value);
      }
    };
    if (s.latency.isZero()) {
      answer.run();
    } else {
      TimeSource.Scheduled timer = time.schedule(answer, s.latency.toNanos());
      if (!s.stubborn) {
        f.whenComplete((v, t) -> {
          if (t instanceof CancellationException) {
            script.cancelled.incrementAndGet();
            timer.cancel();
          }
        });
      }
    }
    return f;
  }

  // ---------------------------------------------------------------- real clock

  static final class RealRig extends Rig {
    RealRig(Driver driver) {
      super(driver);
    }

    @Override
    TimeSource time() {
      return TimeSource.system();
    }

    @Override
    void call(Resilience p, Script script, @Nullable Cancel cancel, Ran r) {
      if (cancel != null) {
        throw new IllegalArgumentException("the real-clock lanes run immediate answers only");
      }
      try {
        r.value = p.execute(() -> {
          Script.Step s = script.next();
          assertThat(s.latency).as("the real clock runs immediate answers only").isZero();
          if (s.failure != null) {
            throw s.failure;
          }
          return s.value;
        });
      } catch (Exception e) {
        r.thrown = e;
        if (e instanceof dev.quell.CallRejectedException) {
          r.reason = ((dev.quell.CallRejectedException) e).reason();
        }
      }
      r.signals++;
    }

    @Override
    void settle() {
    }
  }

  // ---------------------------------------------------------------- simulator clock

  static final class SimRig extends Rig {
    final SimClock time = new SimClock(new SplittableRandom(42));

    SimRig() {
      super(SIMULATOR);
    }

    @Override
    TimeSource time() {
      return time;
    }

    @Override
    void call(Resilience p, Script script, @Nullable Cancel cancel, Ran r) {
      AtomicReference<CompletableFuture<Outcome<Object>>> call = new AtomicReference<>();
      if (cancel != null && cancel.first()) {
        time.schedule(() -> call.get().cancel(true), cancel.at().toNanos());
      }
      long start = time.nanoTime();
      CompletableFuture<Outcome<Object>> f = p.runAsync(a -> futureStep(time, script));
      call.set(f);
      f.whenComplete((o, t) -> {
        r.signals++;
        r.elapsed = Duration.ofNanos(time.nanoTime() - start);
        if (o != null) {
          r.value = o.value();
          r.thrown = o.failure().orElse(null);
          r.reason = o.stopReason();
          assertThat(o.attempts()).as("the outcome's attempts").isEqualTo(script.attempts());
        } else {
          r.thrown = t;
        }
      });
      if (cancel != null && !cancel.first()) {
        time.schedule(() -> f.cancel(true), cancel.at().toNanos() - time.nanoTime());
      }
      settle();
      assertThat(f).isDone();
    }

    @Override
    void settle() {
      time.run(time.nanoTime() + Duration.ofHours(1).toNanos(), () -> false);
    }
  }

  // ---------------------------------------------------------------- Reactor

  static final class ReactorRig extends Rig {
    final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
    final ReactorTime time = ReactorTime.of(scheduler);

    ReactorRig() {
      super(REACTOR);
    }

    @Override
    TimeSource time() {
      return time;
    }

    Mono<Object> dependency(Script script) {
      return Mono.defer(() -> {
        Script.Step s = script.next();
        Mono<Object> answer = s.failure != null ? Mono.error(s.failure) : Mono.just(s.value);
        if (!s.latency.isZero()) {
          answer = Mono.delay(s.latency, scheduler).then(answer);
        }
        return answer.doOnCancel(script.cancelled::incrementAndGet);
      });
    }

    Disposable subscribe(Resilience p, Script script, Ran r) {
      long start = time.nanoTime();
      return dependency(script).transformDeferred(QuellReactor.of(p)).subscribe(
          v -> r.value = v,
          e -> {
            r.thrown = e;
            r.signals++;
            r.elapsed = Duration.ofNanos(time.nanoTime() - start);
          },
          () -> {
            r.signals++;
            r.elapsed = Duration.ofNanos(time.nanoTime() - start);
          });
    }

    @Override
    void call(Resilience p, Script script, @Nullable Cancel cancel, Ran r) {
      AtomicReference<Disposable> subscription = new AtomicReference<>();
      if (cancel != null && cancel.first()) {
        scheduler.schedule(() -> subscription.get().dispose(), cancel.at().toNanos(),
            java.util.concurrent.TimeUnit.NANOSECONDS);
      }
      long start = time.nanoTime();
      subscription.set(subscribe(p, script, r));
      if (cancel != null && !cancel.first()) {
        scheduler.schedule(() -> subscription.get().dispose(), cancel.at().toNanos() - (time.nanoTime() - start),
            java.util.concurrent.TimeUnit.NANOSECONDS);
      }
      settle();
      if (r.signals == 0) {
        // cancelled: a disposed subscriber gets no terminal signal; the call's time is its cancellation's
        r.elapsed = cancel == null ? null : cancel.at();
      }
    }

    @Override
    void settle() {
      scheduler.advanceTimeBy(Duration.ofHours(1));
    }
  }

  // ---------------------------------------------------------------- Kotlin coroutines

  static final class KotlinRig extends Rig {
    final TestCoroutineScheduler scheduler = new TestCoroutineScheduler();
    final TimeSource time = TestTimeKt.asTimeSource(scheduler, 42);
    final boolean outcome;

    KotlinRig(boolean outcome) {
      super(outcome ? KOTLIN_RUN : KOTLIN_EXECUTE);
      this.outcome = outcome;
    }

    @Override
    TimeSource time() {
      return time;
    }

    @Override
    void call(Resilience p, Script script, @Nullable Cancel cancel, Ran r) {
      Coroutines.call(scheduler, p, outcome, script, cancel == null ? -1 : cancel.at().toMillis(),
          cancel != null && cancel.first(), r);
    }

    @Override
    void settle() {
    }
  }

  /** The failure an {@code ExecutionException} or {@code CompletionException} wraps. */
  static Throwable unwrap(Throwable t) {
    return (t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null
        ? t.getCause() : t;
  }
}
