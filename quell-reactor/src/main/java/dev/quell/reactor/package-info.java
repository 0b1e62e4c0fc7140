/**
 * Project Reactor operators for Quell: {@link dev.quell.reactor.QuellReactor} retries, times and
 * hedges a {@code Mono} or {@code Flux} under a {@link dev.quell.Resilience} policy, on the core's
 * asynchronous driver; {@link dev.quell.reactor.ReactorTime} runs a policy on a Reactor
 * {@code Scheduler}'s clock (virtual time in tests).
 */
@NullMarked
package dev.quell.reactor;

import org.jspecify.annotations.NullMarked;
