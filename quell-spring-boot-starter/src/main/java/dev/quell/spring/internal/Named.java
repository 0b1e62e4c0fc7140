package dev.quell.spring.internal;

import dev.quell.Limiter;
import dev.quell.RetryBudget;
import dev.quell.TimeSource;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Budgets and limiters that carry the name of the policy they belong to, so that the meters, the
 * health details and the actuator endpoint say {@code inventory} (or {@code inventory:host}) where the
 * core's public factories say {@code budget-7} or {@code adaptive-3}.
 *
 * <p>quell-core's public factories take no name (only {@link RetryBudget#shared} does, and it is
 * process-wide). Until it offers named factories ({@code RetryBudget.of(String name, ...)} and the like,
 * described in the report of issue 20), this class asks the core's own constructors for a named object,
 * after the public factory has checked the parameters — so every rule and every message stays the core's.
 * Where that is not possible (the module path, where {@code dev.quell} is not open to this module), the
 * object keeps the core's anonymous name and a warning says so once.
 */
final class Named {
  private static final Log LOG = LogFactory.getLog("dev.quell.spring");
  private static volatile boolean warned;

  private Named() {}

  /** A private token bucket called {@code name}. Throws the core's configuration exception for bad parameters. */
  static RetryBudget tokenBucket(String name, double fraction, double minimumPerSecond) {
    RetryBudget checked = RetryBudget.of(fraction, minimumPerSecond);
    return construct(checked, "dev.quell.TokenBucket", new Class<?>[] {String.class, double.class, double.class, TimeSource.class},
        name, fraction, minimumPerSecond, TimeSource.system());
  }

  /** gRPC-style retry throttling called {@code name}. */
  static RetryBudget feedback(String name, int maxTokens, double tokenRatio) {
    RetryBudget checked = RetryBudget.feedback(maxTokens, tokenRatio);
    return construct(checked, "dev.quell.FeedbackThrottle", new Class<?>[] {String.class, int.class, double.class},
        name, maxTokens, tokenRatio);
  }

  /** A replenishing allowance called {@code name}. */
  static RetryBudget replenishing(String name, int maxTokens, Duration period) {
    RetryBudget checked = RetryBudget.replenishing(maxTokens, period);
    return construct(checked, "dev.quell.ReplenishingAllowance",
        new Class<?>[] {String.class, int.class, Duration.class, TimeSource.class}, name, maxTokens, period, TimeSource.system());
  }

  /** A concurrent allowance called {@code name}. */
  static RetryBudget concurrent(String name, double percent, int minimum) {
    RetryBudget checked = RetryBudget.concurrent(percent, minimum);
    return construct(checked, "dev.quell.ConcurrentAllowance", new Class<?>[] {String.class, double.class, int.class},
        name, percent, minimum);
  }

  /** {@code made} (fresh from a public factory, never used), called {@code name}. */
  static Limiter limiter(String name, Limiter made) {
    try {
      Method copy = Limiter.class.getDeclaredMethod("copy", String.class);
      copy.setAccessible(true);
      return (Limiter) copy.invoke(made, name);
    } catch (ReflectiveOperationException | RuntimeException e) {
      warn(e);
      return made;
    }
  }

  private static RetryBudget construct(RetryBudget checked, String type, Class<?>[] parameters, Object... args) {
    try {
      Constructor<?> c = Class.forName(type, false, RetryBudget.class.getClassLoader()).getDeclaredConstructor(parameters);
      c.setAccessible(true);
      return (RetryBudget) c.newInstance(args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      warn(e);
      return checked;
    } catch (ReflectiveOperationException | RuntimeException e) {
      warn(e);
      return checked;
    }
  }

  private static void warn(Exception e) {
    if (!warned) {
      warned = true;
      LOG.warn("quell.names: budgets and limiters built from properties keep the core's anonymous names"
          + " (budget-N, rate-N, ...) in meters, health and the quell endpoint: " + e);
    }
  }
}
