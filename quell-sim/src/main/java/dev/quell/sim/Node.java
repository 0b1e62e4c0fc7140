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

  /** Serves one attempt: completes {@code reply} later (or at once), unless the attempt was abandoned. */
  abstract void submit(Reply reply);

  final void arrived(long now) {
    received++;
    int s = engine.second(now);
    if (s < receivedPerSecond.length) {
      receivedPerSecond[s]++;
    }
    receivedPerPhase[engine.phases.of(now)]++;
  }

  abstract NodeReport report(long entryCalls, long[] entryCallsPerPhase, long[] entryOfferedPerSecond);
}
