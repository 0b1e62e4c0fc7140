package dev.quell.spring.internal;

import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.kotlin.SuspendKt;
import java.util.Arrays;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import kotlinx.coroutines.Job;
import kotlinx.coroutines.reactor.MonoKt;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Mono;

/**
 * {@code @Resilient} Kotlin suspend functions, run under quell-kotlin's {@code executeSuspend} (or
 * {@code runSuspend} when there is a fallback), which decides everything through the core's asynchronous
 * driver.
 *
 * <p>Spring's proxies call a suspend function through kotlinx-coroutines-reactor: below the proxy the call is
 * a {@code Mono} (the function run in a coroutine when it is subscribed to), and the proxy awaits the
 * {@code Mono} the interceptors return with the caller's continuation. So this returns a {@code Mono} of the
 * whole call, a coroutine in the caller's context (its dispatcher, its {@code QuellContext}; not its
 * {@code Job}, as Spring does): each attempt calls the function again, in the attempt's coroutine (the
 * attempt's deadline and label), and awaits it. Cancelling the caller cancels the {@code Mono}'s
 * subscription, so the call and the attempt in flight: the call ends {@code CANCELLED}, nothing is charged,
 * no fallback runs, and the caller's {@code CancellationException} is the caller's. A
 * {@code CancellationException} the function throws is never retried or taken for a failure: it comes out
 * as it is, and runs no fallback.
 *
 * <p>Loaded only for a suspend function, which the pointcut accepts only when quell-kotlin and
 * kotlinx-coroutines-reactor are on the class path.
 */
final class SuspendCalls {
  private SuspendCalls() {}

  static Mono<Object> call(PolicyRegistry policies, String name, MethodInvocation invocation, @Nullable Fallback fallback) {
    Object[] arguments = invocation.getArguments();
    Continuation<?> caller = (Continuation<?>) arguments[arguments.length - 1];
    CoroutineContext context = caller.getContext().minusKey(Job.Key);
    return Mono.defer(() -> {
      Resilience policy = policies.policy(name);
      Mono<Object> call;
      if (fallback == null) {
        call = MonoKt.mono(context, (scope, continuation) ->
            SuspendKt.executeSuspend(policy, (attempt, inAttempt) -> attempt(invocation, inAttempt), continuation));
      } else {
        Mono<Outcome<Object>> outcome = MonoKt.mono(context, (scope, continuation) ->
            SuspendKt.<Object>runSuspend(policy, (attempt, inAttempt) -> attempt(invocation, inAttempt), continuation));
        call = outcome.flatMap(o -> o.failure().isEmpty() ? Mono.justOrEmpty(o.value())
            : fallback(policies, policy, fallback, invocation, context, o));
      }
      InFlight inFlight = policies.inFlight();
      inFlight.enter();
      return call.doFinally(signal -> inFlight.exit());
    });
  }

  /**
   * One attempt: the function called again through the rest of the chain, in the attempt's coroutine (Spring
   * runs it in the context of the continuation it is given), and awaited there.
   */
  @SuppressWarnings("unchecked")
  private static @Nullable Object attempt(MethodInvocation invocation, Continuation<? super Object> inAttempt) {
    Object[] arguments = invocation.getArguments();
    Object[] again = Arrays.copyOf(arguments, arguments.length);
    again[again.length - 1] = inAttempt;
    Object result;
    try {
      result = invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone(again).proceed() : invocation.proceed();
    } catch (Throwable t) {
      throw sneaky(t);
    }
    Mono<Object> mono = result instanceof Mono<?> m ? (Mono<Object>) m : Mono.justOrEmpty(result);
    return MonoKt.awaitSingleOrNull(mono, inAttempt);
  }

  /** The fallback of a failed call, itself a suspend function or not, run in the caller's context. */
  private static Mono<Object> fallback(PolicyRegistry policies, Resilience policy, Fallback fallback,
      MethodInvocation invocation, CoroutineContext context, Outcome<Object> outcome) {
    Throwable failure = outcome.failure().orElseThrow();
    Object target = invocation.getThis();
    if (target == null || !fallback.fits(failure)) {
      return Mono.error(failure);
    }
    Object[] arguments = invocation.getArguments();
    Object[] withoutContinuation = Arrays.copyOf(arguments, arguments.length - 1);
    FailedCall call = FailedCall.of(outcome);
    return MonoKt.mono(context, (scope, continuation) -> {
          try {
            return fallback.call(target, withoutContinuation, failure, continuation);
          } catch (Throwable t) {
            throw sneaky(t);
          }
        })
        .doOnSuccess(v -> policies.telemetry().fallback(policy.name(), call, true))
        .doOnError(e -> policies.telemetry().fallback(policy.name(), call, false));
  }

  /** Throws {@code t} as it is, checked or not: Kotlin code, which this stands in for, has no checked exceptions. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
    throw (E) t;
  }
}
