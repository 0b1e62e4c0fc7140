package dev.quell.spring.internal;

import dev.quell.Limiter;
import dev.quell.RetryBudget;
import java.time.Duration;

/**
 * Budgets and limiters that carry the name of the policy they belong to, so that the meters, the
 * health details and the actuator endpoint say {@code inventory} (or {@code inventory:host}) where the
 * core's factories alone say {@code budget-7} or {@code adaptive-3}. The core's public factories check
 * the parameters (every rule and message stays the core's); {@code withName} gives the fresh object
 * its policy's name.
 */
final class Named {
  private Named() {}

  /** A private token bucket called {@code name}. Throws the core's configuration exception for bad parameters. */
  static RetryBudget tokenBucket(String name, double fraction, double minimumPerSecond) {
    return RetryBudget.of(fraction, minimumPerSecond).withName(name);
  }

  /** gRPC-style retry throttling called {@code name}. */
  static RetryBudget feedback(String name, int maxTokens, double tokenRatio) {
    return RetryBudget.feedback(maxTokens, tokenRatio).withName(name);
  }

  /** A replenishing allowance called {@code name}. */
  static RetryBudget replenishing(String name, int maxTokens, Duration period) {
    return RetryBudget.replenishing(maxTokens, period).withName(name);
  }

  /** A concurrent allowance called {@code name}. */
  static RetryBudget concurrent(String name, double percent, int minimum) {
    return RetryBudget.concurrent(percent, minimum).withName(name);
  }

  /** {@code made} (fresh from a public factory, never used), called {@code name}. */
  static Limiter limiter(String name, Limiter made) {
    return made.withName(name);
  }
}
