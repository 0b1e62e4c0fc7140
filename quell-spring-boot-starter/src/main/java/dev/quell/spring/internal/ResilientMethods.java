package dev.quell.spring.internal;

import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.spring.Resilient;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * The advisor behind {@link Resilient}: a pointcut that matches annotated methods (refusing reactive
 * return types when the proxy is made) and an interceptor that runs each call through the policy in
 * force. Attempts call the method again through a clone of the invocation, so every other advice inside
 * this one (a transaction, say) runs once per attempt.
 */
public final class ResilientMethods extends AbstractPointcutAdvisor {
  private static final long serialVersionUID = 1L;

  private final transient Supplier<PolicyRegistry> registry;
  private final transient Map<Method, Plan> plans = new ConcurrentHashMap<>();

  /** What a call of one method runs: its policy's name, and its fallback if it has one. */
  private record Plan(String policy, @Nullable Fallback fallback) {}
  private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {
    @Override
    public boolean matches(Method method, Class<?> targetClass) {
      Resilient annotation = find(method, targetClass);
      if (annotation == null) {
        return false;
      }
      check(method, annotation);
      Fallback.resolve(method, targetClass, annotation); // a fallback that cannot be found stops the start-up
      return true;
    }
  };
  private final transient MethodInterceptor interceptor = this::invoke;

  /** @param registry looked up on the first call, so making proxies never creates the registry early */
  public ResilientMethods(Supplier<PolicyRegistry> registry, int order) {
    this.registry = registry;
    setOrder(order);
  }

  @Override
  public Pointcut getPointcut() {
    return pointcut;
  }

  @Override
  public Advice getAdvice() {
    return interceptor;
  }

  static @Nullable Resilient find(Method method, Class<?> targetClass) {
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    Resilient onMethod = AnnotatedElementUtils.findMergedAnnotation(specific, Resilient.class);
    if (onMethod == null && specific != method) {
      onMethod = AnnotatedElementUtils.findMergedAnnotation(method, Resilient.class);
    }
    if (onMethod != null) {
      return onMethod;
    }
    if (!java.lang.reflect.Modifier.isPublic(method.getModifiers()) || method.getDeclaringClass() == Object.class) {
      return null;
    }
    return AnnotatedElementUtils.findMergedAnnotation(targetClass, Resilient.class);
  }

  private static void check(Method method, Resilient annotation) {
    String where = method.getDeclaringClass().getName() + "." + method.getName() + "()";
    if (annotation.value().isBlank()) {
      throw new IllegalStateException("@Resilient on " + where + " names no policy: give it a policy name, @Resilient(\"inventory\")");
    }
    Class<?> type = method.getReturnType();
    if (isReactive(type)) {
      throw new IllegalStateException("@Resilient on " + where + " returns " + type.getName()
          + ", a reactive type, which @Resilient does not run: use a WebClient (Quell's filter is on it) or"
          + " return a CompletionStage");
    }
    if (CompletionStage.class.isAssignableFrom(type) && !type.isAssignableFrom(CompletableFuture.class)) {
      throw new IllegalStateException("@Resilient on " + where + " returns " + type.getName()
          + ": an asynchronous @Resilient method must be declared to return CompletionStage or CompletableFuture");
    }
  }

  private static boolean isReactive(@Nullable Class<?> type) {
    if (type == null) {
      return false;
    }
    if (type.getName().equals("org.reactivestreams.Publisher") || type.getName().equals("java.util.concurrent.Flow$Publisher")) {
      return true;
    }
    for (Class<?> i : type.getInterfaces()) {
      if (isReactive(i)) {
        return true;
      }
    }
    return isReactive(type.getSuperclass());
  }

  private @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Method method = invocation.getMethod();
    Plan plan = plans.computeIfAbsent(method, m -> {
      Object target = invocation.getThis();
      Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : m.getDeclaringClass();
      Resilient r = find(m, targetClass);
      if (r == null) {
        throw new IllegalStateException("no @Resilient on " + m);
      }
      return new Plan(r.value(), Fallback.resolve(m, targetClass, r));
    });
    PolicyRegistry policies = registry.get();
    Resilience policy = policies.policy(plan.policy());
    InFlight inFlight = policies.inFlight();
    Fallback fallback = plan.fallback();
    if (CompletionStage.class.isAssignableFrom(method.getReturnType())) {
      inFlight.enter();
      CompletableFuture<Object> call;
      try {
        call = fallback == null ? policy.executeAsync(() -> stage(invocation))
            : policy.runAsync(attempt -> stage(invocation)).thenCompose(outcome -> {
              if (outcome.failure().isEmpty()) {
                return CompletableFuture.completedFuture(outcome.value());
              }
              try {
                @SuppressWarnings("unchecked")
                CompletionStage<Object> answer = (CompletionStage<Object>) fallback(policies, policy, fallback, invocation, outcome);
                if (answer == null) {
                  return CompletableFuture.failedFuture(new NullPointerException(
                      "fallback " + fallback + " returned null instead of a CompletionStage"));
                }
                return answer;
              } catch (Throwable t) {
                return CompletableFuture.failedFuture(t);
              }
            });
      } catch (RuntimeException | Error e) {
        inFlight.exit();
        throw e;
      }
      call.whenComplete((v, e) -> inFlight.exit());
      return call;
    }
    inFlight.enter();
    try {
      if (fallback == null) {
        return policy.execute(() -> proceed(invocation));
      }
      Outcome<Object> outcome = policy.run(() -> proceed(invocation));
      return outcome.failure().isEmpty() ? outcome.value() : fallback(policies, policy, fallback, invocation, outcome);
    } finally {
      inFlight.exit();
    }
  }

  /**
   * Answers a failed call with its fallback, when one fits the failure; reports how it did. The call's own
   * outcome was already recorded by the policy's listeners.
   */
  private static @Nullable Object fallback(PolicyRegistry policies, Resilience policy, Fallback fallback,
      MethodInvocation invocation, Outcome<Object> outcome) throws Throwable {
    Throwable failure = outcome.failure().orElseThrow();
    Object target = invocation.getThis();
    if (target == null || !fallback.fits(failure)) {
      throw failure;
    }
    boolean succeeded = false;
    try {
      Object answer = fallback.call(target, invocation.getArguments(), failure);
      succeeded = true;
      return answer;
    } finally {
      policies.telemetry().fallback(policy.name(), outcome, succeeded);
    }
  }

  private static @Nullable Object proceed(MethodInvocation invocation) throws Exception {
    try {
      return again(invocation).proceed();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new UndeclaredThrowableException(t);
    }
  }

  @SuppressWarnings("unchecked")
  private static CompletionStage<Object> stage(MethodInvocation invocation) {
    try {
      Object result = again(invocation).proceed();
      if (result == null) {
        return CompletableFuture.failedFuture(new NullPointerException(
            "@Resilient method " + invocation.getMethod() + " returned null instead of a CompletionStage"));
      }
      return (CompletionStage<Object>) result;
    } catch (Throwable t) {
      return CompletableFuture.failedFuture(t);
    }
  }

  /** The invocation, ready to run again: each attempt proceeds through the rest of the chain anew. */
  private static MethodInvocation again(MethodInvocation invocation) {
    return invocation instanceof ProxyMethodInvocation ? ((ProxyMethodInvocation) invocation).invocableClone() : invocation;
  }

  @Override
  public String toString() {
    return "ResilientMethods[order=" + getOrder() + "]";
  }
}
