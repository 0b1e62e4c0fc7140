package dev.quell.sim;

/** A target while a run goes on: what arrives at it, and how busy it is. */
abstract class Node {
  /** What a successful attempt returns. */
  static final Object OK = "ok";

  final Engine engine;
  final String name;
  final Target model;
  /** Attempts that reach it per entry call when nothing is retried: how many paths lead to it. */
  long paths;
  long received;
  final long[] receivedPerSecond;
  final long[] receivedPerPhase;
  final Integrator occupancy;
  final Integrator queue;

  Node(Engine engine, Target model) {
    this.engine = engine;
    this.name = model.name();
    this.model = model;
    this.receivedPerSecond = new long[engine.seconds];
    this.receivedPerPhase = new long[engine.phases.size()];
    this.occupancy = new Integrator(engine.seconds);
    this.queue = new Integrator(engine.seconds);
  }

  /**
   * Serves one attempt, sent now, in second {@code second} and phase {@code phase} of the run (the
   * caller has them at hand): completes {@code reply} later (or at once), unless the attempt was
   * abandoned.
   */
  abstract void submit(Reply reply, int second, int phase);

  final void arrived(int second, int phase) {
    received++;
    if (second < receivedPerSecond.length) {
      receivedPerSecond[second]++;
    }
    receivedPerPhase[phase]++;
  }

  abstract NodeReport report(long entryCalls, long[] entryCallsPerPhase, long[] entryOfferedPerSecond);
}
