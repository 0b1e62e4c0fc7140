package dev.quell.sim;

/**
 * Where a simulated call goes: a modelled {@link Dependency}, or a {@link Service} that calls others
 * under policies of its own.
 */
public sealed interface Target permits Dependency, Service {

  /** The name reports use. Two targets in one simulation with the same name must be the same model. */
  String name();
}
