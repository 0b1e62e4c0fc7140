/**
 * Quell: retry budgets and the resilience policy around them.
 *
 * <p>Start with {@link dev.quell.Resilience} (the policy) and {@link dev.quell.RetryBudget} (the
 * bound on retries as a fraction of traffic). Everything in this package is public API; anything
 * under {@code dev.quell.internal} is not, and may change in any release.
 */
@NullMarked
package dev.quell;

import org.jspecify.annotations.NullMarked;
