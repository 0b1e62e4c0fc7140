package dev.quell.sim;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.random.RandomGenerator;

/**
 * A modelled dependency while a run goes on: a multi-server queue with lognormal service times,
 * first in first out. This pod gets one (peers + 1)-th of the capacity and of the queue limit, which
 * is the same as counting each of its attempts peers + 1 times (see {@link Load}).
 */
final class DependencyNode extends Node {
  private final Dependency dependency;
  private final RandomGenerator random;
  private final int weight;
  private final int slots;
  private final int queueLimit;
  private final double mu;
  private final double sigma;
  private final long[] from;
  private final long[] to;
  private final Incident[] incidents;
  private final SimulatedFailure error;
  private final SimulatedFailure down;
  private final SimulatedFailure full;

  private final ArrayDeque<Request> waiting = new ArrayDeque<>();
  private int busy;
  long refusedOutage;
  long refusedFull;
  long failedAttempts;

  DependencyNode(Engine engine, Dependency dependency, RandomGenerator random) {
    super(engine, dependency);
    this.dependency = dependency;
    this.random = random;
    this.weight = engine.weight;
    int capacity = dependency.rawCapacity();
    this.slots = capacity == Integer.MAX_VALUE ? Integer.MAX_VALUE : Math.max(1, capacity / weight);
    this.queueLimit = dependency.rawQueueLimit() < 0 ? -1 : dependency.rawQueueLimit() / weight;
    this.mu = dependency.mu();
    this.sigma = dependency.sigma();
    List<Incident> list = dependency.incidents();
    this.incidents = list.toArray(new Incident[0]);
    this.from = new long[incidents.length];
    this.to = new long[incidents.length];
    for (int i = 0; i < incidents.length; i++) {
      from[i] = incidents[i].from().toNanos();
      to[i] = incidents[i].to().map(d -> d.toNanos()).orElse(Long.MAX_VALUE);
    }
    this.error = new SimulatedFailure(SimulatedFailure.Kind.ERROR, name);
    this.down = new SimulatedFailure(SimulatedFailure.Kind.OUTAGE, name);
    this.full = new SimulatedFailure(SimulatedFailure.Kind.QUEUE_FULL, name);
  }

  Dependency dependency() {
    return dependency;
  }

  /** This pod's share of the capacity, in attempts. */
  int slots() {
    return slots;
  }

  @Override
  void submit(CompletableFuture<Object> reply) {
    long now = engine.clock.nanoTime();
    arrived(now);
    if (isDown(now)) {
      refusedOutage++;
      reply.completeExceptionally(down);
      return;
    }
    Request r = new Request(reply);
    if (busy < slots) {
      begin(r, now);
      return;
    }
    if (queueLimit >= 0 && waiting.size() >= queueLimit) {
      refusedFull++;
      reply.completeExceptionally(full);
      return;
    }
    waiting.add(r);
    queue.set(now, (double) waiting.size() * weight);
  }

  private void begin(Request r, long now) {
    busy++;
    occupancy.set(now, (double) busy * weight);
    double slowdown = 1.0;
    double pass = 1.0 - dependency.errorRate();
    for (int i = 0; i < incidents.length; i++) {
      if (now >= from[i] && now < to[i]) {
        slowdown *= incidents[i].factor();
        pass *= 1.0 - (incidents[i].kind() == Incident.Kind.FAILING ? incidents[i].failureRate() : 0.0);
      }
    }
    double latency = Math.exp(mu + sigma * random.nextGaussian()) * slowdown;
    r.fails = pass < 1.0 && random.nextDouble() >= pass;
    engine.clock.schedule(r, (long) latency);
  }

  private void finish(Request r) {
    long now = engine.clock.nanoTime();
    busy--;
    // take the next waiting attempt before answering: the answer may start a retry at once, and that
    // retry must queue behind the attempts already waiting
    Request next = waiting.poll();
    if (next != null) {
      queue.set(now, (double) waiting.size() * weight);
      begin(next, now);
    }
    occupancy.set(now, (double) busy * weight);
    if (r.fails) {
      failedAttempts++;
      r.reply.completeExceptionally(error);
    } else {
      r.reply.complete(OK);
    }
  }

  private boolean isDown(long now) {
    for (int i = 0; i < incidents.length; i++) {
      if (incidents[i].kind() == Incident.Kind.OUTAGE && now >= from[i] && now < to[i]) {
        return true;
      }
    }
    return false;
  }

  @Override
  NodeReport report(long entryCalls, long[] entryCallsPerPhase) {
    return new NodeReport(name, NodeReport.Kind.DEPENDENCY, received, paths, entryCalls, receivedPerPhase,
        entryCallsPerPhase, receivedPerSecond, dependency.capacity(), occupancy.peak(), occupancy.mean(), queue.peak(),
        refusedOutage + refusedFull, failedAttempts, 0, 0);
  }

  /** One attempt at the dependency. Runs as the event that ends its service. */
  private final class Request implements Runnable {
    final CompletableFuture<Object> reply;
    boolean fails;

    Request(CompletableFuture<Object> reply) {
      this.reply = reply;
    }

    @Override
    public void run() {
      finish(this);
    }
  }
}
