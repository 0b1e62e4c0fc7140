/**
 * The simulator: runs your real {@link dev.quell.Resilience} policy against a modelled dependency on
 * a virtual clock, and reports what a dashboard would have shown.
 *
 * <pre>{@code
 * SimulationReport report = Simulate.policy(policy)
 *     .against(Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100)).capacity(400))
 *     .under(Load.perSecond(500))
 *     .lasting(Duration.ofMinutes(5))
 *     .run(1);
 * }</pre>
 *
 * <p>The model values ({@link Dependency}, {@link Incident}, {@link Load}, {@link Service},
 * {@link Simulation}) are immutable: each method returns a changed copy, so a half-described model
 * never exists. Their methods read as the sentence they build ({@code capacity(400)},
 * {@code peers(49)}) rather than carrying the {@code with…} prefix of {@code Resilience}, because a
 * model is described once, top to bottom, and then run.
 *
 * <p>Everything in this package is public API; {@code dev.quell.sim.internal} is not.
 */
@NullMarked
package dev.quell.sim;

import org.jspecify.annotations.NullMarked;
