package dev.quell.sim;

import java.time.Duration;

/**
 * A stretch of the run, cut at the edges of the incidents: before, during and after each one (a run
 * without incidents has a single phase). Calls belong to the phase in which they arrived; attempts
 * to the phase in which they started.
 *
 * @param name "before", "during brownout ×8", "between 1 and 2", "after", or "whole run"
 * @param from where the phase starts, from the start of the run
 * @param to where it ends
 * @param incident true for a phase during an incident
 * @param calls calls that arrived in the phase
 * @param succeeded of those, the calls that succeeded
 * @param attempts attempts the policy started in the phase
 */
public record Phase(String name, Duration from, Duration to, boolean incident, long calls, long succeeded,
    long attempts) {

  /** Succeeded ÷ calls; NaN when no call arrived. */
  public double availability() {
    return calls == 0 ? Double.NaN : (double) succeeded / calls;
  }

  /** Attempts ÷ calls; NaN when no call arrived. */
  public double loadMultiplier() {
    return calls == 0 ? Double.NaN : (double) attempts / calls;
  }
}
