package dev.quell.spring.internal;

import dev.quell.spring.Resilient;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The fallback a {@link Resilient} method names: the methods of that name on the bean's class that take the
 * method's parameters (and, optionally, the failure last) and return what it returns, narrowest failure
 * type first. Resolved once, when the proxy is made.
 */
final class Fallback {
  private record Candidate(Method method, @Nullable Class<?> failureType) {}

  private final String name;
  private final List<Candidate> candidates;

  private Fallback(String name, List<Candidate> candidates) {
    this.name = name;
    this.candidates = candidates;
  }

  /**
   * The fallback {@code annotation} names for {@code method} of {@code targetClass}, or null when it names
   * none.
   *
   * @throws IllegalStateException when no method of {@code targetClass} can be that fallback
   */
  static @Nullable Fallback resolve(Method method, Class<?> targetClass, Resilient annotation) {
    String name = annotation.fallback().trim();
    if (name.isEmpty()) {
      return null;
    }
    Class<?>[] parameters = method.getParameterTypes();
    List<Candidate> found = new ArrayList<>();
    for (Method m : ReflectionUtils.getUniqueDeclaredMethods(targetClass, m -> m.getName().equals(name))) {
      Class<?>[] p = m.getParameterTypes();
      if (!returnsWhat(m, method)) {
        continue;
      }
      if (Arrays.equals(p, parameters)) {
        found.add(new Candidate(m, null));
      } else if (p.length == parameters.length + 1 && Arrays.equals(Arrays.copyOf(p, parameters.length), parameters)
          && Throwable.class.isAssignableFrom(p[parameters.length])) {
        found.add(new Candidate(m, p[parameters.length]));
      }
    }
    if (found.isEmpty()) {
      String params = String.join(", ", Arrays.stream(parameters).map(Class::getSimpleName).toList());
      throw new IllegalStateException("@Resilient(fallback = \"" + name + "\") on " + targetClass.getName() + "."
          + method.getName() + "(): " + targetClass.getSimpleName() + " has no method " + name + "(" + params + ") or "
          + name + "(" + params + (params.isEmpty() ? "" : ", ") + "Throwable) returning "
          + method.getReturnType().getSimpleName());
    }
    // the narrowest failure type first; the one without a failure parameter fits every failure, so last
    found.sort(Comparator.comparingInt(c -> c.failureType() == null ? Integer.MAX_VALUE : -depth(c.failureType())));
    found.forEach(c -> ReflectionUtils.makeAccessible(c.method()));
    return new Fallback(name, List.copyOf(found));
  }

  private static boolean returnsWhat(Method fallback, Method method) {
    Class<?> wanted = method.getReturnType();
    Class<?> given = fallback.getReturnType();
    return wanted == void.class ? given == void.class : ClassUtils.isAssignable(wanted, given);
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
    for (Candidate c : candidates) {
      if (c.failureType() == null || c.failureType().isInstance(failure)) {
        Object[] args = c.failureType() == null ? arguments : append(arguments, failure);
        try {
          return c.method().invoke(target, args);
        } catch (InvocationTargetException e) {
          throw e.getCause();
        }
      }
    }
    throw failure;
  }

  private static Object[] append(Object[] arguments, Object last) {
    Object[] out = Arrays.copyOf(arguments, arguments.length + 1);
    out[arguments.length] = last;
    return out;
  }

  @Override
  public String toString() {
    return name + "(...)";
  }
}
