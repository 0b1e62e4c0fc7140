package dev.quell.spring.internal;

import dev.quell.CallRejectedException;
import dev.quell.DeadlineExceededException;
import dev.quell.Resilience;
import dev.quell.StopReason;
import dev.quell.Verdict;
import dev.quell.reactor.QuellReactor;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * {@code @Resilient} methods returning {@code Mono} or {@code Flux}, run under quell-reactor's operator,
 * which decides everything through the core: retries under the budget, waits, timeouts, the deadline, the
 * gates in their fixed order, hedging, the first-element rule of a {@code Flux}, cancellation. This class
 * adds only what a method call needs around it.
 *
 * <ul>
 *   <li>Nothing runs until the returned publisher is subscribed to; each subscription is one call. Each
 *       attempt calls the method again (through the rest of the advice chain) and subscribes to the
 *       publisher that call returned, so a method that builds its publisher from values it computes at
 *       once ({@code Mono.just(repository.find(id))}) is run again too, not replayed.
 *   <li>The fallback answers the call's terminal failure, as a {@code Mono} or {@code Flux}; for a
 *       {@code Flux}, only a failure before the first element (after it the stream's own failure passes
 *       through, as it is not retried either). A cancelled subscription runs no fallback.
 * </ul>
 *
 * <p>Loaded only for a method that returns a {@code Mono} or {@code Flux}, which the pointcut accepts only
 * when quell-reactor is on the class path.
 */
final class ReactiveCalls {
  private ReactiveCalls() {}

  static Publisher<Object> call(boolean mono, PolicyRegistry policies, String policy, MethodInvocation invocation,
      @Nullable Fallback fallback) {
    return mono ? Mono.defer(() -> monoCall(policies, policy, invocation, fallback))
        : Flux.defer(() -> fluxCall(policies, policy, invocation, fallback));
  }

  private static Mono<Object> monoCall(PolicyRegistry policies, String name, MethodInvocation invocation,
      @Nullable Fallback fallback) {
    Resilience policy = policies.policy(name);
    Attempts attempts = new Attempts(policy);
    Mono<Object> call = QuellReactor.<Object>of(policy).apply(Mono.defer(() -> Mono.from(attempts.next(invocation))));
    if (fallback != null) {
      call = call.onErrorResume(failure -> Mono.from(fallback(policies, policy, fallback, invocation, failure, attempts, true)));
    }
    InFlight inFlight = policies.inFlight();
    inFlight.enter();
    return call.doFinally(signal -> inFlight.exit()).contextWrite(ReactiveCalls::quietCancellation);
  }

  private static Flux<Object> fluxCall(PolicyRegistry policies, String name, MethodInvocation invocation,
      @Nullable Fallback fallback) {
    Resilience policy = policies.policy(name);
    Attempts attempts = new Attempts(policy);
    Flux<Object> call = QuellReactor.<Object>of(policy).apply(Flux.defer(() -> attempts.next(invocation)));
    if (fallback != null) {
      AtomicBoolean delivered = new AtomicBoolean();
      call = call.doOnNext(element -> delivered.lazySet(true))
          .onErrorResume(failure -> !delivered.get(),
              failure -> Flux.from(fallback(policies, policy, fallback, invocation, failure, attempts, false)));
    }
    InFlight inFlight = policies.inFlight();
    inFlight.enter();
    return call.doFinally(signal -> inFlight.exit()).contextWrite(ReactiveCalls::quietCancellation);
  }

  /**
   * Reactor's per-subscription hook for errors that arrive after a cancel: the operator reports a cancelled
   * call's end there, and the attempt the caller cancelled ends in its own cancellation (the JDK client's
   * "Request cancelled", say), which is the caller's doing and no error, so it is not logged. Any other
   * dropped error goes where it would have gone: the subscriber's own hook, else Reactor's.
   */
  private static Context quietCancellation(Context context) {
    Consumer<? super Throwable> outer = context.getOrDefault(ON_ERROR_DROPPED, null);
    Consumer<Throwable> hook = failure -> {
      if (cancellation(failure)) {
        return;
      }
      if (outer != null) {
        outer.accept(failure);
      } else {
        Operators.onErrorDropped(failure, Context.empty());
      }
    };
    return context.put(ON_ERROR_DROPPED, hook);
  }

  /** Reactor's context key for a subscription's own onErrorDropped hook ({@code Hooks.KEY_ON_ERROR_DROPPED}). */
  private static final String ON_ERROR_DROPPED = "reactor.onErrorDropped.local";

  private static boolean cancellation(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof CancellationException) {
        return true;
      }
    }
    return false;
  }

  /** Answers a failed call with its fallback, when one fits the failure, and reports how it did. */
  private static Publisher<Object> fallback(PolicyRegistry policies, Resilience policy, Fallback fallback,
      MethodInvocation invocation, Throwable failure, Attempts attempts, boolean mono) {
    Object target = invocation.getThis();
    if (target == null || !fallback.fits(failure)) {
      return Mono.error(failure);
    }
    FailedCall call = attempts.failed(failure);
    boolean succeeded = false;
    try {
      Object answer = fallback.call(target, invocation.getArguments(), failure);
      succeeded = true;
      if (answer instanceof Publisher<?> publisher) {
        @SuppressWarnings("unchecked")
        Publisher<Object> p = (Publisher<Object>) publisher;
        return mono ? Mono.from(p) : p;
      }
      return answer == null ? Mono.empty() : Mono.just(answer);
    } catch (Throwable t) {
      return Mono.error(t);
    } finally {
      policies.telemetry().fallback(policy.name(), call, succeeded);
    }
  }

  /**
   * One call's attempts: each calls the method anew and hands the operator what it returned. Counts them
   * and times the call, for the fallback's telemetry (the operator ends a call with a signal, not an outcome).
   */
  private static final class Attempts {
    private final Resilience policy;
    private final long started;
    private final AtomicInteger count = new AtomicInteger();

    Attempts(Resilience policy) {
      this.policy = policy;
      this.started = policy.timeSource().nanoTime();
    }

    @SuppressWarnings("unchecked")
    Publisher<Object> next(MethodInvocation invocation) {
      count.incrementAndGet();
      Object result;
      try {
        result = ResilientMethods.again(invocation).proceed();
      } catch (Throwable t) {
        return Mono.error(t); // thrown before a publisher was made: this attempt's failure
      }
      if (result == null) {
        return Mono.error(new NullPointerException("@Resilient method " + invocation.getMethod()
            + " returned null instead of a " + invocation.getMethod().getReturnType().getSimpleName()));
      }
      return (Publisher<Object>) result;
    }

    /**
     * The failed call as the core ended it: Quell's refusals say why; the dependency's own failure ended the
     * call either as permanent (the policy's classifier said so) or with the attempts spent.
     */
    FailedCall failed(Throwable failure) {
      StopReason reason;
      int attempts = count.get();
      if (failure instanceof CallRejectedException rejected) {
        reason = rejected.reason();
      } else if (failure instanceof DeadlineExceededException) {
        reason = StopReason.DEADLINE_EXCEEDED;
      } else {
        reason = policy.classifier().classify(null, failure).kind() == Verdict.Kind.PERMANENT
            ? StopReason.PERMANENT : StopReason.ATTEMPTS_EXHAUSTED;
      }
      return new FailedCall(reason, failure, attempts, Duration.ofNanos(Math.max(0, policy.timeSource().nanoTime() - started)));
    }
  }
}
