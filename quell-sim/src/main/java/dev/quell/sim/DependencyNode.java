package dev.quell.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletionException;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * A modelled dependency while a run goes on: a multi-server queue with lognormal service times (or a
 * mixture of two lognormals, with a {@linkplain Dependency#tail heavy tail}),
 * first in first out, with one of the {@link Overload} models past its capacity. This pod gets one
 * (peers + 1)-th of the capacity and of the queue's bound, which is the same as counting each of its
 * attempts peers + 1 times (see {@link Load}).
 *
 * <p>Memory stays bounded by the attempts whose callers still wait, not by the length of the line.
 * An attempt the policy abandoned while it waited (its timeout fired) is still served in its turn —
 * the dependency cannot know its caller left — but it needs no object any more: once abandoned
 * attempts reach the front of the line they are dropped from it and counted, and each is served as
 * an anonymous piece of work with the same random draws it would have had. In a congestion collapse
 * the line can grow by hundreds of attempts a second for hours; only its live end is kept.
 */
final class DependencyNode extends Node {
  private final Dependency dependency;
  private final RandomGenerator random;
  private final int weight;
  private final int slots;
  private final int queueLimit;
  private final double mu;
  private final double sigma;
  /** The share of attempts drawn from the slow tail; 0 without one (and then no draw is made for it). */
  private final double tailShare;
  private final double tailMu;
  private final double tailSigma;
  private final CompletionException error;
  private final CompletionException down;
  private final CompletionException full;

  // the incidents as a schedule of segments, each with its combined effect; time only moves forward
  private final long[] segmentEnds;
  private final double[] segmentSlowdown;
  private final double[] segmentPass;
  private final boolean[] segmentDown;
  private int segment;
  private long segmentEnd;
  private double slowdown;
  private double pass;
  private boolean isDown;

  /** Live waiting attempts, in order; abandoned ones are dropped once they reach the front. */
  private final ArrayDeque<Reply> waiting = new ArrayDeque<>();
  /** The line is every attempt numbered in [head, tail): those not in {@link #waiting} were abandoned. */
  private long head;
  private long tail;
  private int busy;
  private final Runnable anonymousServed = () -> done(false);
  private final Runnable anonymousFailed = () -> done(true);
  long refusedOutage;
  long refusedFull;
  long failedAttempts;

  DependencyNode(Engine engine, Dependency dependency, RandomGenerator random) {
    super(engine, dependency);
    this.dependency = dependency;
    this.random = random;
    this.weight = engine.weight;
    Overload overload = dependency.overload();
    int capacity = overload.serving(dependency.rawCapacity());
    this.slots = capacity == Integer.MAX_VALUE ? Integer.MAX_VALUE : Math.max(1, capacity / weight);
    int bound = overload.waiting(dependency.rawCapacity());
    this.queueLimit = bound < 0 ? -1 : bound / weight;
    this.mu = dependency.mu();
    this.sigma = dependency.sigma();
    Dependency.Tail tail = dependency.tail().orElse(null);
    this.tailShare = tail == null ? 0 : tail.share();
    this.tailMu = tail == null ? 0 : tail.mu();
    this.tailSigma = tail == null ? 0 : tail.sigma();
    this.error = Reply.wrap(new SimulatedFailure(SimulatedFailure.Kind.ERROR, name));
    this.down = Reply.wrap(new SimulatedFailure(SimulatedFailure.Kind.OUTAGE, name));
    this.full = Reply.wrap(new SimulatedFailure(SimulatedFailure.Kind.QUEUE_FULL, name));

    List<Incident> incidents = dependency.incidents();
    long[] from = new long[incidents.size()];
    long[] to = new long[incidents.size()];
    TreeSet<Long> cuts = new TreeSet<>();
    for (int i = 0; i < from.length; i++) {
      from[i] = incidents.get(i).from().toNanos();
      to[i] = incidents.get(i).to().map(d -> d.toNanos()).orElse(Long.MAX_VALUE);
      cuts.add(from[i]);
      cuts.add(to[i]);
    }
    cuts.add(Long.MAX_VALUE);
    List<Long> ends = new ArrayList<>(cuts);
    int n = ends.size();
    segmentEnds = new long[n];
    segmentSlowdown = new double[n];
    segmentPass = new double[n];
    segmentDown = new boolean[n];
    long start = 0;
    for (int k = 0; k < n; k++) {
      long t = start; // any instant of the segment [start, end) stands for all of it
      double slow = 1.0;
      double ok = 1.0 - dependency.errorRate();
      boolean out = false;
      for (int i = 0; i < from.length; i++) {
        if (t >= from[i] && t < to[i]) {
          Incident inc = incidents.get(i);
          slow *= inc.factor();
          ok *= 1.0 - (inc.kind() == Incident.Kind.FAILING ? inc.failureRate() : 0.0);
          out |= inc.kind() == Incident.Kind.OUTAGE;
        }
      }
      segmentEnds[k] = ends.get(k);
      segmentSlowdown[k] = slow;
      segmentPass[k] = ok;
      segmentDown[k] = out;
      start = ends.get(k);
    }
    enter(0);
  }

  private void enter(int k) {
    segment = k;
    segmentEnd = segmentEnds[k];
    slowdown = segmentSlowdown[k];
    pass = segmentPass[k];
    isDown = segmentDown[k];
  }

  /** Moves the incident schedule up to {@code now}. */
  private void at(long now) {
    while (now >= segmentEnd) {
      enter(segment + 1);
    }
  }

  Dependency dependency() {
    return dependency;
  }

  /** This pod's share of the capacity, in attempts. */
  int slots() {
    return slots;
  }

  @Override
  void submit(Reply reply, int second, int phase) {
    long now = engine.clock.nanoTime();
    arrived(second, phase);
    at(now);
    if (isDown) {
      refusedOutage++;
      reply.fail(down);
      return;
    }
    reply.at = this;
    if (busy < slots) {
      begin(reply, now);
      return;
    }
    long line = tail - head;
    if (queueLimit >= 0 && line >= queueLimit) {
      refusedFull++;
      reply.fail(full);
      return;
    }
    reply.seq = tail++;
    reply.queued = true;
    waiting.addLast(reply);
    queue.set(now, (double) (line + 1) * weight);
  }

  /** Starts serving {@code r}, or an abandoned attempt when {@code r} is null. */
  /** Starts serving {@code r}, or an attempt nobody waits for any more when it is null. */
  private void begin(@Nullable Reply r, long now) {
    busy++;
    occupancy.set(now, (double) busy * weight);
    at(now);
    // without a tail, no draw for it: the runs of a dependency without one stay exactly as they were
    boolean slow = tailShare > 0 && random.nextDouble() < tailShare;
    double latency = (slow ? Math.exp(tailMu + tailSigma * random.nextGaussian())
        : Math.exp(mu + sigma * random.nextGaussian())) * slowdown;
    boolean fails = pass < 1.0 && random.nextDouble() >= pass;
    if (r == null) {
      engine.clock.post(fails ? anonymousFailed : anonymousServed, (long) latency);
    } else {
      r.fails = fails;
      engine.clock.post(r, (long) latency);
    }
  }

  /** A waiting attempt was abandoned: drop abandoned attempts from the front of the line. */
  void abandoned() {
    Reply first;
    while ((first = waiting.peekFirst()) != null && first.isDone()) {
      waiting.pollFirst();
      first.queued = false;
      first.at = null;
    }
  }

  void finish(Reply r) {
    done(r.fails);
    if (r.fails) {
      r.fail(error);
    } else {
      r.succeed();
    }
  }

  private void done(boolean failed) {
    long now = engine.clock.nanoTime();
    busy--;
    if (failed) {
      failedAttempts++;
    }
    // take the next waiting attempt before answering: the answer may start a retry at once, and that
    // retry must queue behind the attempts already waiting
    if (tail > head) {
      Reply first = waiting.peekFirst();
      Reply next = null;
      if (first != null && first.seq == head) {
        waiting.pollFirst();
        first.queued = false;
        next = first;
      }
      head++;
      queue.set(now, (double) (tail - head) * weight);
      begin(next, now);
    }
    occupancy.set(now, (double) busy * weight);
  }

  @Override
  NodeReport report(long entryCalls, long[] entryCallsPerPhase, long[] entryOfferedPerSecond) {
    return new NodeReport(name, NodeReport.Kind.DEPENDENCY, received, paths, entryCalls, receivedPerPhase,
        entryCallsPerPhase, entryOfferedPerSecond, receivedPerSecond, dependency.capacity(), occupancy.peak(), occupancy.mean(), queue.peak(),
        refusedOutage + refusedFull, failedAttempts, 0, 0);
  }
}
