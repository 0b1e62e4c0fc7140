package dev.quell.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a method through the policy it names: {@code @Resilient("inventory")}. On a class, every public
 * method of the bean; on a method, that method (a method's annotation wins over its class's).
 *
 * <pre>{@code
 * @Resilient("inventory")
 * public Stock stock(String sku) { ... }
 *
 * @Resilient("inventory")
 * public CompletableFuture<Stock> stockLater(String sku) { ... }
 * }</pre>
 *
 * <ul>
 *   <li>A plain method runs as {@code policy.execute(...)}: each attempt calls the method again; your
 *       exceptions come out unchanged, Quell's refusals as {@code CallRejectedException} and friends.
 *   <li>A method returning {@code CompletionStage} or {@code CompletableFuture} runs as
 *       {@code policy.executeAsync(...)}: each attempt calls the method again for a new stage, and the
 *       method returns at once with a future of the whole call.
 *   <li>A method returning {@code Mono} or {@code Flux} runs under quell-reactor's operator
 *       ({@code QuellReactor.of(policy)}; quell-reactor must be on the class path): nothing runs until
 *       the result is subscribed to, each subscription is one call, and each attempt calls the method
 *       again and subscribes to what it returned. A {@code Flux} is retried only before its first
 *       element. Deadline and criticality come from Reactor's {@code Context}.
 *   <li>A Kotlin {@code suspend} function runs under quell-kotlin's {@code executeSuspend} (quell-kotlin
 *       and kotlinx-coroutines-reactor must be on the class path): each attempt calls the function
 *       again in a coroutine of its own; cancelling the caller cancels the call, and a
 *       {@code CancellationException} is never retried or handed to the fallback.
 *   <li>Other reactive types (a plain {@code Publisher}, RxJava's, a Kotlin {@code Flow}), a
 *       {@code Mono}, {@code Flux} or suspend function whose module is missing, and a final method
 *       (which a class proxy cannot stand in for) stop the start-up with a message saying why.
 * </ul>
 *
 * <p>The policy is the one in force at each call (it follows configuration refreshes). One annotation is
 * one policy: its gates — draining, deadline, breaker, rate limit, concurrency limit, budget — are asked
 * in that fixed order before every attempt, so there is no order of separate aspects to get wrong.
 * The annotation works on Spring beans called through their proxy, like {@code @Transactional}: a
 * call from inside the same object does not go through it. By default it sits outside
 * {@code @Transactional}, so each attempt is a transaction of its own ({@code quell.methods.order}).
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface Resilient {
  /** The policy's name: {@code quell.policies.NAME}, or a name made of {@code quell.defaults}. */
  String value();

  /**
   * A method of the same bean to answer with when the call fails — its attempts ran out, a guard refused
   * it, its deadline passed (Resilience4j's {@code fallbackMethod}). It takes the same parameters, and
   * may take one more, last: the failure, as a {@code Throwable} or a narrower type (then it is used only
   * for failures of that type; among several, the narrowest that fits wins, and one without the extra
   * parameter takes the rest). It returns what the annotated method returns ({@code CompletionStage}
   * or {@code CompletableFuture} for an asynchronous one; for a {@code Mono} or {@code Flux} method a
   * publisher or a plain value, the one element) and is called once, directly, not through the policy.
   * The fallback of a suspend function may itself be a suspend function. A {@code Flux}'s fallback
   * answers only a failure before its first element. A failure no fallback fits, or one the fallback
   * throws, comes out of the call.
   *
   * <p>The call's outcome is recorded as it happened before the fallback runs ({@code quell.calls} with
   * {@code BUDGET_EXHAUSTED}, say): a fallback never hides a refusal. The fallback itself is counted in
   * {@code quell.fallbacks} (tags {@code quell.policy}, {@code quell.outcome} = why the call failed,
   * {@code result} = succeeded or failed) and listed in the recent events. Empty: no fallback.
   */
  String fallback() default "";
}
