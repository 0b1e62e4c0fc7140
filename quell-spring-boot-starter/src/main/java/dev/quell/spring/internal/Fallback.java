package dev.quell.spring.internal;

import dev.quell.spring.Resilient;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The fallback a {@link Resilient} method names: the methods of that name on the bean's class that take the
 * method's parameters (and, optionally, the failure last) and return what it returns (for a {@code Mono} or
 * {@code Flux}, a publisher or a plain value; a suspend function's may be a suspend function), narrowest
 * failure type first. Resolved once, when the proxy is made.
 */
final class Fallback {
  /** A fallback method; {@code suspending} when it is a Kotlin suspend function (a {@code Continuation} last). */
  private record Candidate(Method method, @Nullable Class<?> failureType, boolean suspending) {}

  private final String name;
  private final List<Candidate> candidates;

  private Fallback(String name, List<Candidate> candidates) {
    this.name = name;
    this.candidates = candidates;
  }

  /**
   * The fallback {@code annotation} names for {@code method} of {@code targetClass}, which runs as
   * {@code kind}, or null when it names none. The fallback of a {@code Mono} or {@code Flux} method returns
   * a publisher or a plain value (then the one element); the fallback of a suspend function takes the
   * function's parameters without its {@code Continuation}, and may itself be a suspend function or a plain
   * one.
   *
   * @throws IllegalStateException when no method of {@code targetClass} can be that fallback
   */
  static @Nullable Fallback resolve(Method method, Class<?> targetClass, Resilient annotation, ResilientMethods.Kind kind) {
    String name = annotation.fallback().trim();
    if (name.isEmpty()) {
      return null;
    }
    Class<?>[] parameters = method.getParameterTypes();
    if (kind == ResilientMethods.Kind.SUSPEND) {
      parameters = Arrays.copyOf(parameters, parameters.length - 1); // without the Continuation
    }
    List<Candidate> found = new ArrayList<>();
    for (Method m : ReflectionUtils.getUniqueDeclaredMethods(targetClass, m -> m.getName().equals(name))) {
      Class<?>[] p = m.getParameterTypes();
      boolean suspending = kind == ResilientMethods.Kind.SUSPEND && p.length > 0
          && p[p.length - 1].getName().equals(ResilientMethods.CONTINUATION);
      if (suspending) {
        p = Arrays.copyOf(p, p.length - 1);
      }
      if (!returnsWhat(m, method, kind)) {
        continue;
      }
      if (Arrays.equals(p, parameters)) {
        found.add(new Candidate(m, null, suspending));
      } else if (p.length == parameters.length + 1 && Arrays.equals(Arrays.copyOf(p, parameters.length), parameters)
          && Throwable.class.isAssignableFrom(p[parameters.length])) {
        found.add(new Candidate(m, p[parameters.length], suspending));
      }
    }
    if (found.isEmpty()) {
      String params = String.join(", ", Arrays.stream(parameters).map(Class::getSimpleName).toList());
      throw new IllegalStateException("@Resilient(fallback = \"" + name + "\") on " + targetClass.getName() + "."
          + method.getName() + "(): " + targetClass.getSimpleName() + " has no " + (kind == ResilientMethods.Kind.SUSPEND
              ? "function " : "method ") + name + "(" + params + ") or "
          + name + "(" + params + (params.isEmpty() ? "" : ", ") + "Throwable) " + returning(method, kind));
    }
    // the narrowest failure type first; the one without a failure parameter fits every failure, so last
    found.sort(Comparator.comparingInt(c -> c.failureType() == null ? Integer.MAX_VALUE : -depth(c.failureType())));
    found.forEach(c -> ReflectionUtils.makeAccessible(c.method()));
    return new Fallback(name, List.copyOf(found));
  }

  private static String returning(Method method, ResilientMethods.Kind kind) {
    return switch (kind) {
      case SUSPEND -> "(suspend or not)";
      case MONO, FLUX -> "returning " + method.getReturnType().getSimpleName() + ", another Publisher or "
          + element(method).getSimpleName();
      default -> "returning " + method.getReturnType().getSimpleName();
    };
  }

  private static boolean returnsWhat(Method fallback, Method method, ResilientMethods.Kind kind) {
    Class<?> wanted = method.getReturnType();
    Class<?> given = fallback.getReturnType();
    return switch (kind) {
      // a suspend function's Java return type is Object, whatever it returns: Kotlin's compiler checked it
      case SUSPEND -> true;
      case MONO, FLUX -> given != void.class && (Publisher.class.isAssignableFrom(given)
          || ClassUtils.isAssignable(element(method), given));
      default -> wanted == void.class ? given == void.class : ClassUtils.isAssignable(wanted, given);
    };
  }

  /** The element type of a method returning {@code Mono<T>} or {@code Flux<T>}: T, or Object when unknown. */
  private static Class<?> element(Method method) {
    return ResolvableType.forMethodReturnType(method).as(Publisher.class).getGeneric(0).resolve(Object.class);
  }

  private static int depth(Class<?> type) {
    int d = 0;
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      d++;
    }
    return d;
  }

  /** Whether some candidate takes {@code failure}. */
  boolean fits(Throwable failure) {
    return candidates.stream().anyMatch(c -> c.failureType() == null || c.failureType().isInstance(failure));
  }

  /** Calls the narrowest candidate that takes {@code failure} on {@code target}; what it throws comes out unchanged. */
  @Nullable Object call(Object target, Object[] arguments, Throwable failure) throws Throwable {
    return call(target, arguments, failure, null);
  }

  /**
   * As {@link #call(Object, Object[], Throwable)}; a suspend fallback is called with {@code continuation}
   * last (and may answer {@code COROUTINE_SUSPENDED}, then resumes it), a plain one without.
   */
  @Nullable Object call(Object target, Object[] arguments, Throwable failure, @Nullable Object continuation) throws Throwable {
    for (Candidate c : candidates) {
      if (c.failureType() == null || c.failureType().isInstance(failure)) {
        Object[] args = c.failureType() == null ? arguments : append(arguments, failure);
        if (c.suspending()) {
          args = append(args, continuation);
        }
        try {
          return c.method().invoke(target, args);
        } catch (InvocationTargetException e) {
          throw e.getCause();
        }
      }
    }
    throw failure;
  }

  private static Object[] append(Object[] arguments, @Nullable Object last) {
    Object[] out = Arrays.copyOf(arguments, arguments.length + 1);
    out[arguments.length] = last;
    return out;
  }

  @Override
  public String toString() {
    return name + "(...)";
  }
}
