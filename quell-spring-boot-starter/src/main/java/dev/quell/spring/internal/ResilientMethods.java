package dev.quell.spring.internal;

import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.spring.Resilient;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.List;
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
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * The advisor behind {@link Resilient}: a pointcut that matches annotated methods (refusing, when the proxy
 * is made, return types it cannot run and those whose Quell module is missing) and an interceptor that runs
 * each call through the policy in force. Attempts call the method again through a clone of the invocation,
 * so every other advice inside this one (a transaction, say) runs once per attempt. A {@code Mono} or
 * {@code Flux} method runs under quell-reactor's operator ({@link ReactiveCalls}), a Kotlin suspend
 * function under quell-kotlin's {@code runSuspend} ({@link SuspendCalls}).
 */
public final class ResilientMethods extends AbstractPointcutAdvisor implements BeanClassLoaderAware {
  private static final long serialVersionUID = 1L;

  private final transient Supplier<PolicyRegistry> registry;
  private final transient Map<Method, Plan> plans = new ConcurrentHashMap<>();
  /** The application's class loader: whether quell-reactor and quell-kotlin are there is asked of it. */
  private transient volatile @Nullable ClassLoader loader = ResilientMethods.class.getClassLoader();

  /** The Java name of the last parameter of every Kotlin suspend function. */
  static final String CONTINUATION = "kotlin.coroutines.Continuation";
  static final String QUELL_REACTOR = "dev.quell.reactor.QuellReactor";
  static final String QUELL_KOTLIN = "dev.quell.kotlin.SuspendKt";
  static final String COROUTINES_REACTOR = "kotlinx.coroutines.reactor.MonoKt";

  /** How a {@code @Resilient} method runs, by what it returns. */
  public enum Kind {
    /** {@code policy.execute}: a value, or void. */
    PLAIN,
    /** {@code policy.executeAsync}: a {@code CompletionStage} or {@code CompletableFuture}. */
    STAGE,
    /** quell-reactor's operator over a {@code Mono}. */
    MONO,
    /** quell-reactor's operator over a {@code Flux}: retried only before its first element. */
    FLUX,
    /** A Kotlin suspend function, through quell-kotlin's {@code runSuspend}. */
    SUSPEND
  }

  /** What a call of one method runs: its policy's name, how, and its fallback if it has one. */
  private record Plan(String policy, Kind kind, @Nullable Fallback fallback) {}
  private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {
    @Override
    public boolean matches(Method method, Class<?> targetClass) {
      Resilient annotation = find(method, targetClass);
      if (annotation == null) {
        return false;
      }
      Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
      if (java.lang.reflect.Modifier.isFinal(specific.getModifiers())
          && AnnotatedElementUtils.hasAnnotation(specific, Resilient.class)) {
        // a class proxy cannot override it: every call would bypass the policy, unnoticed
        throw new IllegalStateException("@Resilient on " + specific.getDeclaringClass().getName() + "." + specific.getName()
            + "() cannot run: the method is final, so Spring's proxy cannot stand in for it (in Kotlin, declare it"
            + " open, or add dev.quell.spring.Resilient to the all-open compiler plugin's annotations)");
      }
      Kind kind = check(method, annotation, loader);
      Fallback.resolve(method, targetClass, annotation, kind); // a fallback that cannot be found stops the start-up
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
  public void setBeanClassLoader(ClassLoader classLoader) {
    this.loader = classLoader;
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
    if (java.lang.reflect.Modifier.isStatic(method.getModifiers())) {
      // no proxy calls it; Kotlin copies an open suspend function's annotations to its static price$suspendImpl
      return null;
    }
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

  /**
   * How {@code method} runs under {@code annotation}, with the classes {@code loader} can see; the decision
   * the pointcut makes when the proxy is made.
   *
   * @throws IllegalStateException naming the method and what to do, when it cannot run: no policy named, a
   *     return type {@code @Resilient} does not run, or a Mono, Flux or suspend function without its module
   */
  public static Kind check(Method method, Resilient annotation, @Nullable ClassLoader loader) {
    String where = method.getDeclaringClass().getName() + "." + method.getName() + "()";
    if (annotation.value().isBlank()) {
      throw new IllegalStateException("@Resilient on " + where + " names no policy: give it a policy name, @Resilient(\"inventory\")");
    }
    Class<?>[] parameters = method.getParameterTypes();
    if (parameters.length > 0 && parameters[parameters.length - 1].getName().equals(CONTINUATION)) {
      if (!ClassUtils.isPresent(QUELL_KOTLIN, loader)) {
        throw new IllegalStateException("@Resilient on " + where + " is a Kotlin suspend function, which @Resilient runs"
            + " through quell-kotlin: add the dependency dev.quell:quell-kotlin (with"
            + " org.jetbrains.kotlinx:kotlinx-coroutines-reactor, through which Spring calls suspend functions)");
      }
      if (!ClassUtils.isPresent(COROUTINES_REACTOR, loader)) {
        throw new IllegalStateException("@Resilient on " + where + " is a Kotlin suspend function, which Spring's proxies"
            + " call through kotlinx-coroutines-reactor: add the dependency org.jetbrains.kotlinx:kotlinx-coroutines-reactor");
      }
      return Kind.SUSPEND;
    }
    Class<?> type = method.getReturnType();
    if (is(type, "reactor.core.publisher.Mono") || is(type, "reactor.core.publisher.Flux")) {
      if (!ClassUtils.isPresent(QUELL_REACTOR, loader)) {
        throw new IllegalStateException("@Resilient on " + where + " returns " + type.getName() + ", which @Resilient runs"
            + " through quell-reactor's operator: add the dependency dev.quell:quell-reactor");
      }
      return is(type, "reactor.core.publisher.Mono") ? Kind.MONO : Kind.FLUX;
    }
    if (is(type, "kotlinx.coroutines.flow.Flow")) {
      throw new IllegalStateException("@Resilient on " + where + " returns " + type.getName() + ", which @Resilient does not"
          + " run: apply quell-kotlin's operator to the flow itself, flow.resilient(policy), or return a Flux");
    }
    if (isReactive(type)) {
      throw new IllegalStateException("@Resilient on " + where + " returns " + type.getName()
          + ", a reactive type @Resilient does not run: it runs Mono and Flux (with quell-reactor), Kotlin suspend"
          + " functions (with quell-kotlin) and CompletionStage; return a Mono or Flux (Flux.from(publisher) adapts any"
          + " Reactive Streams publisher)");
    }
    if (CompletionStage.class.isAssignableFrom(type)) {
      if (!type.isAssignableFrom(CompletableFuture.class)) {
        throw new IllegalStateException("@Resilient on " + where + " returns " + type.getName()
            + ": an asynchronous @Resilient method must be declared to return CompletionStage or CompletableFuture");
      }
      return Kind.STAGE;
    }
    return Kind.PLAIN;
  }

  /** Whether {@code type} is the class or interface named {@code name}, or extends or implements it. */
  private static boolean is(@Nullable Class<?> type, String name) {
    if (type == null) {
      return false;
    }
    if (type.getName().equals(name)) {
      return true;
    }
    for (Class<?> i : type.getInterfaces()) {
      if (is(i, name)) {
        return true;
      }
    }
    return is(type.getSuperclass(), name);
  }

  /** Reactive Streams and JDK publishers, and the reactive types that are not publishers (RxJava's, Mutiny's). */
  private static boolean isReactive(Class<?> type) {
    if (is(type, "org.reactivestreams.Publisher") || is(type, "java.util.concurrent.Flow$Publisher")) {
      return true;
    }
    for (String name : NOT_PUBLISHERS) {
      if (is(type, name)) {
        return true;
      }
    }
    return false;
  }

  private static final List<String> NOT_PUBLISHERS = List.of(
      "io.reactivex.rxjava3.core.Single", "io.reactivex.rxjava3.core.Maybe", "io.reactivex.rxjava3.core.Completable",
      "io.reactivex.rxjava3.core.Observable", "io.reactivex.Single", "io.reactivex.Maybe", "io.reactivex.Completable",
      "io.reactivex.Observable", "io.smallrye.mutiny.Uni", "io.smallrye.mutiny.Multi", "kotlinx.coroutines.Deferred");

  private @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Method method = invocation.getMethod();
    Plan plan = plans.computeIfAbsent(method, m -> {
      Object target = invocation.getThis();
      Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : m.getDeclaringClass();
      Resilient r = find(m, targetClass);
      if (r == null) {
        throw new IllegalStateException("no @Resilient on " + m);
      }
      Kind kind = check(m, r, loader);
      return new Plan(r.value(), kind, Fallback.resolve(m, targetClass, r, kind));
    });
    PolicyRegistry policies = registry.get();
    switch (plan.kind()) {
      case MONO:
      case FLUX:
        // the call starts when it is subscribed to, and each subscription is a call of its own
        return ReactiveCalls.call(plan.kind() == Kind.MONO, policies, plan.policy(), invocation, plan.fallback());
      case SUSPEND:
        return SuspendCalls.call(policies, plan.policy(), invocation, plan.fallback());
      default:
        break;
    }
    Resilience policy = policies.policy(plan.policy());
    InFlight inFlight = policies.inFlight();
    Fallback fallback = plan.fallback();
    if (plan.kind() == Kind.STAGE) {
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
      policies.telemetry().fallback(policy.name(), FailedCall.of(outcome), succeeded);
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
  static MethodInvocation again(MethodInvocation invocation) {
    return invocation instanceof ProxyMethodInvocation ? ((ProxyMethodInvocation) invocation).invocableClone() : invocation;
  }

  @Override
  public String toString() {
    return "ResilientMethods[order=" + getOrder() + "]";
  }
}
