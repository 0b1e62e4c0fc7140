package dev.quell.sim;

import dev.quell.Criticality;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.sim.internal.SimClock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * One run: builds the nodes and edges on a fresh clock, offers the calls, lets them play out, and
 * hands the counts to the report.
 *
 * <p>Randomness comes from one seed, split into independent streams in a fixed order: arrivals,
 * jitter (the clock's {@code random()}, used by the policy's backoff), criticality labels, and one
 * stream per dependency. So two arms of a comparison see the very same arrivals, and a change to
 * the policy does not reshuffle them.
 */
final class Engine {
  static final long SECOND = 1_000_000_000L;
  /** How long after the end of the offered load calls still in flight are followed. */
  static final long DRAIN_LIMIT = 60 * SECOND;

  final Simulation simulation;
  final long seed;
  final SimClock clock;
  final long end;
  final int seconds;
  final int weight;
  final PhasePlan phases;
  final Map<String, Node> nodes = new LinkedHashMap<>();
  final List<Edge> edges = new ArrayList<>();
  final Edge entry;
  final boolean labelled;

  private final List<Target> targetsInOrder = new ArrayList<>();
  private final RandomGenerator arrivals;
  private final RandomGenerator labels;
  private final double meanGapNanos;
  private final double[] cumulative;
  private final ResilienceContext[] contexts;
  private long pending;
  private @Nullable Throwable failure;
  private int sampled;
  private final Runnable arrival = this::arrive;
  /** The clock's lane for arrivals: each is posted as the one before it arrives, so they come in order. */
  private final int arrivalStream;
  private final Runnable sampler = this::sample;
  private final Consumer<Outcome<Object>> entryDone = o -> pending--;

  private final @Nullable Progress progress;
  final @Nullable CallLog callLog;

  Engine(Simulation simulation, long seed, @Nullable Progress progress) {
    this(simulation, seed, progress, null);
  }

  Engine(Simulation simulation, long seed, @Nullable Progress progress, @Nullable CallLog callLog) {
    this.callLog = callLog;
    this.simulation = simulation;
    this.seed = seed;
    this.progress = progress;
    SplittableRandom root = new SplittableRandom(seed);
    this.arrivals = root.split();
    this.clock = new SimClock(root.split());
    this.arrivalStream = clock.stream();
    this.labels = root.split();
    this.end = simulation.duration().toNanos();
    this.seconds = (int) ((end + SECOND - 1) / SECOND);
    Load load = simulation.load();
    this.weight = load.peers() + 1;
    this.meanGapNanos = SECOND / load.rate();

    Map<Criticality, Double> mix = load.mix();
    this.labelled = !mix.isEmpty();
    this.cumulative = new double[mix.size()];
    this.contexts = new ResilienceContext[mix.size()];
    double sum = 0;
    int i = 0;
    for (Map.Entry<Criticality, Double> e : mix.entrySet()) {
      sum += e.getValue();
      cumulative[i] = sum;
      contexts[i] = ResilienceContext.EMPTY.withCriticality(e.getKey());
      i++;
    }

    // nodes first (each dependency takes its random stream in a fixed order), then the phases their
    // incidents define, then the edges, whose counters are cut by phase
    List<Dependency> dependencies = new ArrayList<>();
    collect(simulation.target(), dependencies);
    checkIncidents(dependencies, simulation.duration());
    this.phases = PhasePlan.of(dependencies, end);
    for (Target t : new ArrayList<>(targetsInOrder)) {
      nodes.put(t.name(), t instanceof Dependency
          ? new DependencyNode(this, (Dependency) t, root.split())
          : new ServiceNode(this, (Service) t));
    }
    Node root0 = java.util.Objects.requireNonNull(nodes.get(simulation.target().name()), "the root node");
    this.entry = new Edge(this, "load", root0, prepare(simulation.policy()));
    edges.add(entry);
    for (Node n : nodes.values()) {
      if (n instanceof ServiceNode) {
        ServiceNode s = (ServiceNode) n;
        for (Service.Downstream d : ((Service) s.model).downstream()) {
          Edge e = new Edge(this, s.name, java.util.Objects.requireNonNull(nodes.get(d.target().name()),
              "a downstream node"), prepare(d.policy()));
          s.edges.add(e);
          edges.add(e);
        }
      }
    }
    countPaths(root0, 1);
  }

  /** Walks the targets depth-first, checking that one name means one model. */
  private void collect(Target t, List<Dependency> dependencies) {
    for (Target known : targetsInOrder) {
      if (known.name().equals(t.name())) {
        if (known != t && !known.equals(t)) {
          throw new IllegalArgumentException("two different targets are named '" + t.name()
              + "'; give each dependency and service its own name: " + known + " and " + t);
        }
        return;
      }
    }
    targetsInOrder.add(t);
    if (t instanceof Dependency) {
      dependencies.add((Dependency) t);
    } else {
      for (Service.Downstream d : ((Service) t).downstream()) {
        collect(d.target(), dependencies);
      }
    }
  }

  /** An incident that starts after the run has ended would be silently ignored: refuse it. */
  static void checkIncidents(List<Dependency> dependencies, java.time.Duration duration) {
    for (Dependency d : dependencies) {
      for (Incident i : d.incidents()) {
        if (i.from().compareTo(duration) >= 0) {
          throw new IllegalArgumentException("incident " + i + " on " + d.name() + " starts at or after the end of the run ("
              + dev.quell.sim.internal.Text.clock(duration) + "), so it would never happen; move it inside the run or"
              + " make the run longer");
        }
      }
    }
  }

  private void countPaths(Node node, long paths) {
    node.paths += paths;
    if (node instanceof ServiceNode) {
      for (Edge e : ((ServiceNode) node).edges) {
        countPaths(e.to, paths);
      }
    }
  }

  /** The user's policy on this run's clock; spending at the ambient criticality when the load has a mix. */
  private Resilience prepare(PolicySource source) {
    Resilience p = source.build(clock);
    if (labelled && !p.useAmbientCriticality() && p.attempts() > 1 && p.configuredBudget() != RetryBudget.NONE) {
      p = p.withAmbientCriticality(true);
    }
    return p;
  }

  SimulationReport run() {
    clock.post(arrivalStream, arrival, gap());
    clock.post(sampler, Math.min(end, SECOND));
    // the calls must never see a context of the thread that runs the simulation (its deadline would be
    // on the real clock): an empty one stays open for the whole run, so unlabelled calls need none
    ResilienceContext.Scope isolated = ResilienceContext.EMPTY.open();
    try {
      clock.run(end, () -> failure != null);
      if (failure == null && pending > 0) {
        clock.run(end + DRAIN_LIMIT, () -> pending == 0 || failure != null);
      }
    } finally {
      isolated.close();
    }
    if (failure instanceof InterruptedException) {
      throw new IllegalStateException("the simulation was interrupted at " + clock.nanoTime() / 1e9 + " s", failure);
    }
    if (failure != null) {
      throw new IllegalStateException("the simulation failed at " + clock.nanoTime() / 1e9 + " s (seed " + seed + ")",
          failure);
    }
    long last = Math.max(end, clock.nanoTime());
    for (Node n : nodes.values()) {
      n.occupancy.advance(last);
      n.queue.advance(last);
    }
    return new SimulationReport(this);
  }

  private void arrive() {
    long now = clock.nanoTime();
    if (now >= end) {
      return;
    }
    clock.post(arrivalStream, arrival, gap());
    ResilienceContext context = ResilienceContext.EMPTY;
    if (labelled) {
      double u = labels.nextDouble();
      int i = 0;
      while (i < cumulative.length - 1 && u >= cumulative[i]) {
        i++;
      }
      context = contexts[i];
    }
    pending++;
    entry.call(context, entryDone);
  }

  private long gap() {
    return (long) (-Math.log(1.0 - arrivals.nextDouble()) * meanGapNanos);
  }

  /** Records each edge's budget balance at the end of a second, then schedules the next sample. */
  private void sample() {
    int s = sampled++;
    for (Edge e : edges) {
      e.sample(s);
    }
    if (progress != null) {
      progress.simulated(1);
    }
    if (Thread.currentThread().isInterrupted()) {
      failed(new InterruptedException("the simulation was interrupted"));
    }
    if (sampled < seconds) {
      clock.post(sampler, Math.min(end, (sampled + 1) * SECOND) - clock.nanoTime());
    }
  }

  /** The second that time {@code t} falls in (may be past the series, for calls that end after the run). */
  int second(long t) {
    return (int) Math.min(Integer.MAX_VALUE, t / SECOND);
  }

  /** A callback failed: stop the run and report it. */
  void failed(Throwable t) {
    if (failure == null) {
      failure = t;
    }
  }

  long unfinished() {
    return pending;
  }
}
