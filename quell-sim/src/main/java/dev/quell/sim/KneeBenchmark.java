package dev.quell.sim;

import dev.quell.Limiter;
import dev.quell.Outcome;
import dev.quell.Resilience;
import dev.quell.ResilienceContext;
import dev.quell.RetryBudget;
import dev.quell.StopReason;
import dev.quell.TimeSource;
import dev.quell.sim.internal.SimClock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The adaptive-limit benchmark: a dependency with a concurrency knee, callers that push past it, and
 * the same runs for every contender (Quell's adaptive limits, fixed limits, and any other rule).
 *
 * <p><b>The dependency</b> serves {@code K} attempts at once (the knee) and queues the rest in
 * arrival order: latency is flat up to {@code K} attempts in flight and climbs steeply beyond, since
 * the queue adds its wait and a dependency past its knee also thrashes: each attempt that starts
 * while {@code n > K} attempts are present takes {@code 1 + (n - K) / K} times its service time, so
 * goodput falls past the knee as well (twice the knee present or more, half the throughput). Work whose caller gave up is not withdrawn: a timed-out
 * attempt keeps its place in the queue and in service, as at a real dependency. Service times are
 * lognormal (by p50 and p99) or a mixture of two lognormals (bimodal), scaled by a baseline factor
 * that may drift; the knee may move at given times (capacity lost and regained).
 *
 * <p><b>Callers</b> are closed-loop (each waits for its call's outcome and calls again; a refused
 * call waits the core's guarded pause of 100 ms first) or open-loop (Poisson arrivals; a refused
 * call is gone). {@code clients} processes share the dependency, each with its own limiter and an
 * equal share of the callers.
 *
 * <p><b>Figures</b> of a run: goodput (attempts answered within the timeout, a second), the share of
 * time the limit (summed over clients) sits within [K/2, 3K/2] of the knee in force, timeouts, the
 * 99th percentile of admitted attempts' latency (a timeout counts as the timeout), and the time to
 * recover after each change (the knee moved, the load came back): until the limit entered the band
 * and stayed there for a second.
 *
 * <p>Deterministic for a seed: one thread, a virtual clock, and random streams split from the seed
 * (contenders that draw their own randomness excepted).
 */
public final class KneeBenchmark {
  static final long MS = 1_000_000L;
  static final long SECOND = 1_000_000_000L;
  /** The guarded pause the core keeps after a refusal before the call's outcome. */
  static final long REFUSAL_PAUSE = Edge.REFUSAL_PAUSE;
  /** How often the limit is looked at. */
  static final long TICK = 10 * MS;
  /** How long the limit must stay in the band after a change to count as recovered. */
  static final long SETTLED = SECOND;
  /**
   * How much slower work gets per knee's worth of attempts present past the knee: with 1, twice the
   * knee present makes each attempt twice as slow to serve, so throughput falls as well as latency rises.
   */
  static final double STEEPNESS = 1.0;
  /** The fixed limits the sweep tries, as multiples of the knee. */
  static final double[] SWEEP = {0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.5, 2.0, 3.0};

  private KneeBenchmark() {}

  // Contenders ----------------------------------------------------------------------------------

  /**
   * A limit rule driven sample by sample, with the benchmark counting attempts in flight and
   * admitting while fewer than {@link #limit()} are: the shape of Netflix's {@code Limit}.
   */
  public interface Rule {
    /** The current limit. */
    int limit();

    /**
     * One admitted attempt ended at {@code now} after {@code rttNanos}; {@code inFlight} were in
     * flight when it was admitted (itself included); {@code dropped} when it timed out.
     */
    void onSample(long now, long rttNanos, int inFlight, boolean dropped);
  }

  /** One limit under test: a Quell {@link Limiter} run through a real policy, or a {@link Rule}. */
  public static final class Contender {
    private final String name;
    private final @Nullable Supplier<Limiter> limiter;
    private final @Nullable Function<TimeSource, Rule> rule;

    private Contender(String name, @Nullable Supplier<Limiter> limiter, @Nullable Function<TimeSource, Rule> rule) {
      this.name = name;
      this.limiter = limiter;
      this.rule = rule;
    }

    /** A Quell limiter, built afresh for each client of each run and asked through {@link Resilience#runAsync}. */
    public static Contender quell(String name, Supplier<Limiter> limiter) {
      return new Contender(name, Objects.requireNonNull(limiter, "limiter"), null);
    }

    /** A rule built afresh for each client of each run, on the run's clock. */
    public static Contender rule(String name, Function<TimeSource, Rule> rule) {
      return new Contender(name, null, Objects.requireNonNull(rule, "rule"));
    }

    /** A fixed limit of {@code n}, counted by the benchmark (as {@code Limiter.concurrency(n)} does). */
    public static Contender fixed(int n) {
      return rule("fixed " + n, t -> new Rule() {
        @Override
        public int limit() {
          return n;
        }

        @Override
        public void onSample(long now, long rttNanos, int inFlight, boolean dropped) {}
      });
    }

    /** Quell's {@code Limiter.adaptive()} with its defaults. */
    public static Contender quellAdaptive() {
      return quell("quell adaptive", Limiter::adaptive);
    }

    /** Quell's adaptive limit in its old, loss-based mode ({@code AdaptiveConfig.loss()}: Netflix's AIMD rules). */
    public static Contender quellLoss() {
      return quell("quell loss mode", () -> Limiter.adaptive(Limiter.AdaptiveConfig.loss()));
    }

    /** Envoy's gradient controller, reimplemented from its documentation ({@link EnvoyGradient}). */
    public static Contender envoyGradient() {
      return rule("envoy gradient", t -> new EnvoyGradient(t.random().nextLong()));
    }

    /** The contenders that need nothing but Quell: its adaptive limit, its loss mode, Envoy's rule. */
    public static List<Contender> builtIn() {
      return List.of(quellAdaptive(), quellLoss(), envoyGradient());
    }

    /** The contender's name in tables. */
    public String name() {
      return name;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  // Variants ------------------------------------------------------------------------------------

  /** A lognormal latency by its median and 99th percentile, in milliseconds. */
  public record Latency(double p50Millis, double p99Millis) {
    /** Checks the quantiles. */
    public Latency {
      if (!(p50Millis > 0 && p99Millis >= p50Millis)) {
        throw new IllegalArgumentException("latency must have 0 < p50 <= p99, was " + p50Millis + " and " + p99Millis);
      }
    }

    double sigma() {
      return (Math.log(p99Millis) - Math.log(p50Millis)) / Dependency.Z99;
    }

    double mean() {
      return p50Millis * Math.exp(sigma() * sigma() / 2);
    }
  }

  /** The knee moves to {@code knee} at {@code at}. */
  public record KneeChange(Duration at, int knee) {}

  /**
   * One variant of the benchmark.
   *
   * @param name a short name (used on the command line and in tables)
   * @param description what it tests, in a line
   * @param knee the dependency's knee at the start
   * @param changes where the knee moves
   * @param fast the latency of most attempts
   * @param slow the latency of the slow mode of a bimodal dependency, with {@code slowShare} of attempts
   * @param slowShare the share of attempts drawn from {@code slow}, 0 for none
   * @param driftFrom when the baseline starts to drift (null for no drift)
   * @param driftTo when it has drifted by {@code driftFactor}
   * @param driftFactor the baseline's factor at the end of the drift
   * @param timeout the attempt timeout
   * @param duration how long the run is
   * @param callers closed-loop callers in all, 0 for open-loop
   * @param perSecond open-loop arrivals a second in all, 0 for closed-loop
   * @param clients processes sharing the dependency, each with its own limiter
   * @param quietFrom the load stops (null for never), while health checks come at {@code checksPerSecond}
   * @param quietTo the load comes back
   * @param checksPerSecond health checks a second during the quiet spell, each taking {@code checkMillis}
   * @param checkMillis a health check's latency
   */
  public record Variant(String name, String description, int knee, List<KneeChange> changes, Latency fast,
      @Nullable Latency slow, double slowShare, @Nullable Duration driftFrom, @Nullable Duration driftTo,
      double driftFactor, Duration timeout, Duration duration, int callers, double perSecond, int clients,
      @Nullable Duration quietFrom, @Nullable Duration quietTo, double checksPerSecond, double checkMillis) {
    /** Copies the list. */
    public Variant {
      changes = List.copyOf(changes);
    }

    /** The mean service time at the start, in milliseconds. */
    double meanMillis() {
      return slow == null ? fast.mean() : (1 - slowShare) * fast.mean() + slowShare * slow.mean();
    }

    /** What the dependency can serve a second at its starting knee. */
    public double capacityPerSecond() {
      return knee * 1000 / meanMillis();
    }

    /** The knee in force at {@code t} nanoseconds. */
    int kneeAt(long t) {
      int k = knee;
      for (KneeChange c : changes) {
        if (t >= c.at().toNanos()) {
          k = c.knee();
        }
      }
      return k;
    }

    boolean quietAt(long t) {
      return quietFrom != null && quietTo != null && t >= quietFrom.toNanos() && t < quietTo.toNanos();
    }

    double driftAt(long t) {
      if (driftFrom == null || driftTo == null) {
        return 1;
      }
      long a = driftFrom.toNanos();
      long b = driftTo.toNanos();
      if (t <= a) {
        return 1;
      }
      if (t >= b) {
        return driftFactor;
      }
      return 1 + (driftFactor - 1) * (t - a) / (double) (b - a);
    }

    /** The times after which a limit must find the knee again: where it moves, where the load comes back. */
    List<Long> changeTimes() {
      List<Long> times = new ArrayList<>();
      for (KneeChange c : changes) {
        times.add(c.at().toNanos());
      }
      if (quietTo != null) {
        times.add(quietTo.toNanos());
      }
      return times;
    }

    Variant with(String newName, String newDescription) {
      return new Variant(newName, newDescription, knee, changes, fast, slow, slowShare, driftFrom, driftTo, driftFactor,
          timeout, duration, callers, perSecond, clients, quietFrom, quietTo, checksPerSecond, checkMillis);
    }
  }

  private static final Latency BASE = new Latency(20, 50);
  private static final Duration RUN = Duration.ofSeconds(30);

  private static Variant closed(String name, String description) {
    return new Variant(name, description, 100, List.of(), BASE, null, 0, null, null, 1, Duration.ofMillis(60), RUN,
        300, 0, 1, null, null, 0, 0);
  }

  private static Variant open(Variant v, double perSecond) {
    return new Variant(v.name, v.description, v.knee, v.changes, v.fast, v.slow, v.slowShare, v.driftFrom, v.driftTo,
        v.driftFactor, v.timeout, v.duration, 0, perSecond, v.clients, v.quietFrom, v.quietTo, v.checksPerSecond,
        v.checkMillis);
  }

  private static Variant knee(Variant v, KneeChange... changes) {
    return new Variant(v.name, v.description, v.knee, List.of(changes), v.fast, v.slow, v.slowShare, v.driftFrom,
        v.driftTo, v.driftFactor, v.timeout, v.duration, v.callers, v.perSecond, v.clients, v.quietFrom, v.quietTo,
        v.checksPerSecond, v.checkMillis);
  }

  private static Variant latency(Variant v, Latency fast, @Nullable Latency slow, double slowShare, Duration timeout) {
    return new Variant(v.name, v.description, v.knee, v.changes, fast, slow, slowShare, v.driftFrom, v.driftTo,
        v.driftFactor, timeout, v.duration, v.callers, v.perSecond, v.clients, v.quietFrom, v.quietTo,
        v.checksPerSecond, v.checkMillis);
  }

  /**
   * The standard variants: a knee of 100 attempts, latency p50 20 ms / p99 50 ms (about 4,600
   * attempts a second at the knee), 60 ms attempt timeouts, 300 closed-loop callers or open-loop
   * arrivals at 1.5 times what the dependency can serve, 30 simulated seconds each.
   */
  public static List<Variant> variants() {
    Variant basic = closed("knee", "300 closed-loop callers against a knee of 100");
    double over = basic.capacityPerSecond() * 1.5;
    Variant open = open(basic.with("knee-open", "open-loop arrivals at 1.5x the knee's capacity"), over);
    KneeChange down = new KneeChange(Duration.ofSeconds(10), 50);
    KneeChange up = new KneeChange(Duration.ofSeconds(20), 100);
    Variant moving = knee(basic.with("knee-moves", "the knee falls to 50 at 0:10 and comes back to 100 at 0:20"), down,
        up);
    Variant movingOpen = knee(open.with("knee-moves-open", "as knee-moves, open-loop at 1.5x the full capacity"), down,
        up);
    Variant noisy = latency(basic.with("noisy", "noisy latency: p50 20 ms, p99 200 ms, 400 ms timeouts"),
        new Latency(20, 200), null, 0, Duration.ofMillis(400));
    Variant bimodal = latency(basic.with("bimodal", "bimodal latency: 80% at 10 ms, 20% at 100 ms, 400 ms timeouts"),
        new Latency(10, 15), new Latency(100, 150), 0.2, Duration.ofMillis(400));
    Variant slow = latency(basic.with("drift", "a slow dependency (p50 200 ms) whose baseline doubles from 0:10 to"
        + " 0:20; 1 s timeouts"), new Latency(200, 500), null, 0, Duration.ofSeconds(1));
    slow = new Variant(slow.name, slow.description, slow.knee, slow.changes, slow.fast, slow.slow, slow.slowShare,
        Duration.ofSeconds(10), Duration.ofSeconds(20), 2, slow.timeout, Duration.ofSeconds(60), slow.callers,
        slow.perSecond, slow.clients, null, null, 0, 0);
    Variant shortTimeout = latency(basic.with("timeout-short", "20 ms timeouts: half the attempts time out even at"
        + " the knee"), BASE, null, 0, Duration.ofMillis(20));
    Variant longTimeout = latency(open.with("timeout-long", "1 s timeouts, open-loop at 1.5x: the queue can grow long"
        + " before anything times out"), BASE, null, 0, Duration.ofSeconds(1));
    Variant many = new Variant("many-clients", "10 processes with 30 callers each share the knee of 100", 100,
        List.of(), BASE, null, 0, null, null, 1, Duration.ofMillis(60), RUN, 300, 0, 10, null, null, 0, 0);
    Variant checks = new Variant("health-checks", "the load stops from 0:10 to 0:20 while health checks (1 ms) come at"
        + " 1,000/s; then it comes back", 100, List.of(), BASE, null, 0, null, null, 1, Duration.ofMillis(60), RUN,
        300, 0, 1, Duration.ofSeconds(10), Duration.ofSeconds(20), 1000, 1);
    return List.of(basic, open, moving, movingOpen, noisy, bimodal, slow, shortTimeout, longTimeout, many, checks);
  }

  /** The standard variant called {@code name}. */
  public static Variant variant(String name) {
    for (Variant v : variants()) {
      if (v.name().equals(name)) {
        return v;
      }
    }
    List<String> names = new ArrayList<>();
    for (Variant v : variants()) {
      names.add(v.name());
    }
    throw new IllegalArgumentException("no benchmark variant '" + name + "'; the variants are " + names);
  }

  // Results -------------------------------------------------------------------------------------

  /**
   * The figures of one run.
   *
   * @param variant the variant's name
   * @param contender the contender's name
   * @param goodput attempts answered within the timeout, a second
   * @param inBand the share of time the limit sat within [K/2, 3K/2]
   * @param timeouts attempts that timed out
   * @param timeoutShare timeouts among admitted attempts
   * @param p99Millis the 99th percentile of admitted attempts' latency
   * @param recoveryMillis the longest time to recover after a change; -1 when the variant has no change,
   *     and the time to the end of the run when the limit never settled in the band
   * @param meanLimit the time-weighted mean of the limit
   * @param limitSeries the limit every 100 ms (summed over clients)
   */
  public record Run(String variant, String contender, double goodput, double inBand, long timeouts,
      double timeoutShare, double p99Millis, long recoveryMillis, double meanLimit, double[] limitSeries) {
    /** goodput as a share of {@code best}'s. */
    public double goodputShare(Run best) {
      return best.goodput <= 0 ? 1 : goodput / best.goodput;
    }
  }

  /** One variant: the best fixed limit from the sweep, and each contender's run. */
  public record Row(Variant variant, Run bestFixed, List<Run> runs) {}

  /** Runs {@code contender} on {@code variant} with {@code seed}. */
  public static Run run(Variant variant, Contender contender, long seed) {
    return new Runner(variant, contender, seed).run();
  }

  /** Sweeps fixed limits (per client) over {@link #SWEEP} multiples of the knee and returns the run with the best goodput. */
  public static Run bestFixed(Variant variant, long seed) {
    Run best = null;
    for (double m : SWEEP) {
      int n = Math.max(1, (int) Math.round(variant.knee() * m / variant.clients()));
      Run r = run(variant, Contender.fixed(n), seed);
      if (best == null || r.goodput() > best.goodput()) {
        best = r;
      }
    }
    return Objects.requireNonNull(best);
  }

  /** The sweep and each contender on {@code variant}. */
  public static Row row(Variant variant, List<Contender> contenders, long seed) {
    Run best = bestFixed(variant, seed);
    List<Run> runs = new ArrayList<>();
    for (Contender c : contenders) {
      runs.add(run(variant, c, seed));
    }
    return new Row(variant, best, runs);
  }

  /** A plain-text table of rows: one line per variant and contender. */
  public static String table(List<Row> rows) {
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "%-16s %-18s %9s %8s %8s %9s %9s %9s %9s%n", "variant", "limit", "goodput/s",
        "vs best", "in band", "timeouts", "p99 ms", "recovery", "mean lim"));
    for (Row row : rows) {
      line(s, row.bestFixed(), row.bestFixed(), "best " + row.bestFixed().contender());
      for (Run r : row.runs()) {
        line(s, r, row.bestFixed(), r.contender());
      }
    }
    return s.toString();
  }

  /** A Markdown table of rows, for the docs. */
  public static String markdown(List<Row> rows) {
    StringBuilder s = new StringBuilder();
    s.append("| variant | limit | goodput/s | vs best fixed | in [K/2, 3K/2] | timeouts | p99 | recovery |\n");
    s.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (Row row : rows) {
      Run b = row.bestFixed();
      s.append(String.format(Locale.ROOT, "| %s | best %s | %.0f | 100%% | %.0f%% | %.1f%% | %.0f ms | |%n",
          row.variant().name(), b.contender(), b.goodput(), b.inBand() * 100, b.timeoutShare() * 100, b.p99Millis()));
      for (Run r : row.runs()) {
        s.append(String.format(Locale.ROOT, "| | %s | %.0f | %.0f%% | %.0f%% | %.1f%% | %.0f ms | %s |%n",
            r.contender(), r.goodput(), r.goodputShare(b) * 100, r.inBand() * 100, r.timeoutShare() * 100,
            r.p99Millis(), r.recoveryMillis() < 0 ? "" : r.recoveryMillis() + " ms"));
      }
    }
    return s.toString();
  }

  private static void line(StringBuilder s, Run r, Run best, String label) {
    s.append(String.format(Locale.ROOT, "%-16s %-18s %9.0f %7.0f%% %7.0f%% %8.1f%% %9.0f %9s %9.1f%n", r.variant(),
        label, r.goodput(), r.goodputShare(best) * 100, r.inBand() * 100, r.timeoutShare() * 100, r.p99Millis(),
        r.recoveryMillis() < 0 ? "-" : r.recoveryMillis() + " ms", r.meanLimit()));
  }

  // The run -------------------------------------------------------------------------------------

  /** One run on its own clock. */
  private static final class Runner {
    final Variant v;
    final Contender contender;
    final SimClock clock;
    final SplittableRandom service;
    final SplittableRandom arrivals;
    final long end;
    final long timeoutNanos;
    final Client[] clients;

    // the dependency
    int busy;
    int knee;
    final ArrayDeque<Job> queue = new ArrayDeque<>();

    // the figures
    long succeeded;
    long timedOut;
    long admitted;
    final LatencyHistogram latencies = new LatencyHistogram();
    final List<long[]> ticks = new ArrayList<>(); // {time, limit, knee, quiet?1:0}

    Runner(Variant v, Contender contender, long seed) {
      this.v = v;
      this.contender = contender;
      SplittableRandom root = new SplittableRandom(seed);
      this.clock = new SimClock(root.split());
      this.service = root.split();
      this.arrivals = root.split();
      this.end = v.duration().toNanos();
      this.timeoutNanos = v.timeout().toNanos();
      this.knee = v.knee();
      this.clients = new Client[v.clients()];
      for (int i = 0; i < clients.length; i++) {
        clients[i] = new Client();
      }
    }

    Run run() {
      for (KneeChange c : v.changes()) {
        clock.post(() -> setKnee(c.knee()), c.at().toNanos());
      }
      if (v.callers() > 0) {
        for (int i = 0; i < v.callers(); i++) {
          Client client = clients[i % clients.length];
          Caller caller = new Caller(client);
          // spread the first calls over the first millisecond
          clock.post(caller::call, (long) (arrivals.nextDouble() * MS));
        }
      } else {
        clock.post(this::arrive, gap(v.perSecond()));
      }
      if (v.quietFrom() != null && v.checksPerSecond() > 0) {
        clock.post(this::check, Objects.requireNonNull(v.quietFrom()).toNanos());
      }
      clock.post(this::tick, 0);
      ResilienceContext.Scope isolated = ResilienceContext.EMPTY.open();
      try {
        clock.run(end, () -> false);
      } finally {
        isolated.close();
      }
      return figures();
    }

    private long gap(double perSecond) {
      return Math.max(1, (long) (-Math.log(1.0 - arrivals.nextDouble()) * SECOND / perSecond));
    }

    private int nextClient;

    private void arrive() {
      long now = clock.nanoTime();
      if (now >= end) {
        return;
      }
      clock.post(this::arrive, gap(v.perSecond()));
      if (v.quietAt(now)) {
        return;
      }
      Client c = clients[nextClient];
      nextClient = (nextClient + 1) % clients.length;
      c.call(false, null);
    }

    private void check() {
      long now = clock.nanoTime();
      if (!v.quietAt(now)) {
        return;
      }
      clock.post(this::check, gap(v.checksPerSecond()));
      clients[0].call(true, null);
    }

    private void tick() {
      long now = clock.nanoTime();
      long limit = 0;
      for (Client c : clients) {
        limit += c.limit();
      }
      ticks.add(new long[] {now, limit, v.kneeAt(now), v.quietAt(now) ? 1 : 0});
      if (now + TICK < end) {
        clock.post(this::tick, TICK);
      }
    }

    // the dependency ----------------------------------------------------------------------------

    private void setKnee(int k) {
      knee = k;
      startQueued();
    }

    private void submit(Job job) {
      if (busy < knee) {
        start(job);
      } else {
        queue.add(job);
      }
    }

    private void start(Job job) {
      busy++;
      // past the knee the dependency thrashes: work takes longer the more of it there is
      int present = Math.min(2 * knee, busy + queue.size());
      double slowdown = 1 + STEEPNESS * Math.max(0, present - knee) / (double) knee;
      clock.post(job, (long) (job.serviceNanos * slowdown));
    }

    private void startQueued() {
      while (busy < knee && !queue.isEmpty()) {
        start(queue.poll());
      }
    }

    private long serviceNanos(boolean check) {
      if (check) {
        return (long) (v.checkMillis() * MS);
      }
      Latency l = v.slow() != null && service.nextDouble() < v.slowShare() ? Objects.requireNonNull(v.slow()) : v.fast();
      double millis = l.p50Millis() * Math.exp(l.sigma() * service.nextGaussian());
      return Math.max(1, (long) (millis * MS * v.driftAt(clock.nanoTime())));
    }

    /** Work at the dependency: ends after its service time, whether or not its caller still waits. */
    private final class Job implements Runnable {
      final long serviceNanos;
      final Runnable done;

      Job(long serviceNanos, Runnable done) {
        this.serviceNanos = serviceNanos;
        this.done = done;
      }

      @Override
      public void run() {
        busy--;
        startQueued();
        done.run();
      }
    }

    // the clients -------------------------------------------------------------------------------

    /** One process: its own limiter (a Quell policy or a rule) in front of the shared dependency. */
    private final class Client {
      final @Nullable Limiter limiter;
      final @Nullable Resilience policy;
      final @Nullable Rule rule;
      int inFlight;

      Client() {
        Supplier<Limiter> l = contender.limiter;
        if (l != null) {
          Limiter built = l.get();
          limiter = built;
          policy = Resilience.NONE.with(s -> s.name("benchmark").attempts(1).attemptTimeout(v.timeout())
              .budget(RetryBudget.NONE).timeSource(clock).limiter(built));
          rule = null;
        } else {
          limiter = null;
          policy = null;
          rule = Objects.requireNonNull(contender.rule).apply(clock);
        }
      }

      int limit() {
        return limiter != null ? limiter.limit() : Objects.requireNonNull(rule).limit();
      }

      /** One call; {@code then} runs when the caller may call again (closed loop), or null. */
      void call(boolean check, @Nullable Runnable then) {
        long started = clock.nanoTime();
        Resilience p = policy;
        if (p != null) {
          CompletableFuture<Outcome<Object>> outcome = p.runAsync(attempt -> {
            CompletableFuture<Object> answer = new CompletableFuture<>();
            admitted++;
            submit(new Job(serviceNanos(check), () -> answer.complete("ok")));
            return answer;
          });
          outcome.thenAccept(o -> {
            StopReason reason = o.stopReason();
            if (reason == StopReason.SUCCEEDED) {
              ended(check, clock.nanoTime() - started, false);
            } else if (reason != StopReason.LIMITED) {
              ended(check, timeoutNanos, true);
            }
            if (then != null) {
              then.run();
            }
          });
          return;
        }
        Rule r = Objects.requireNonNull(rule);
        if (inFlight >= r.limit()) {
          if (then != null) {
            clock.post(then, REFUSAL_PAUSE);
          }
          return;
        }
        int atAdmission = ++inFlight;
        admitted++;
        boolean[] over = {false};
        TimeSource.Scheduled timer = clock.schedule(() -> {
          over[0] = true;
          inFlight--;
          r.onSample(clock.nanoTime(), timeoutNanos, atAdmission, true);
          ended(check, timeoutNanos, true);
          if (then != null) {
            then.run();
          }
        }, timeoutNanos);
        submit(new Job(serviceNanos(check), () -> {
          if (over[0]) {
            return; // its caller gave up: the dependency did the work for nobody
          }
          timer.cancel();
          inFlight--;
          long rtt = clock.nanoTime() - started;
          r.onSample(clock.nanoTime(), rtt, atAdmission, false);
          ended(check, rtt, false);
          if (then != null) {
            then.run();
          }
        }));
      }
    }

    private void ended(boolean check, long latency, boolean timeout) {
      if (check) {
        return;
      }
      latencies.record(latency);
      if (timeout) {
        timedOut++;
      } else if (clock.nanoTime() <= end) {
        succeeded++;
      }
    }

    /** A closed-loop caller: calls, waits for the outcome, calls again; sits out the quiet spell. */
    private final class Caller {
      final Client client;
      final Runnable again = this::call;

      Caller(Client client) {
        this.client = client;
      }

      void call() {
        long now = clock.nanoTime();
        if (now >= end) {
          return;
        }
        if (v.quietAt(now)) {
          clock.post(again, Objects.requireNonNull(v.quietTo()).toNanos() - now);
          return;
        }
        client.call(false, () -> clock.post(again, 0));
      }
    }

    // the figures -------------------------------------------------------------------------------

    private Run figures() {
      double seconds = end / (double) SECOND;
      long measured = 0;
      long in = 0;
      double limitSum = 0;
      for (long[] t : ticks) {
        if (t[3] == 1) {
          continue;
        }
        measured++;
        limitSum += t[1];
        if (inBand(t)) {
          in++;
        }
      }
      long recovery = -1;
      for (long change : v.changeTimes()) {
        recovery = Math.max(recovery, recovery(change) / MS);
      }
      int points = (int) (end / (100 * MS));
      double[] series = new double[points];
      for (long[] t : ticks) {
        int i = (int) (t[0] / (100 * MS));
        if (i < points && t[0] % (100 * MS) == 0) {
          series[i] = t[1];
        }
      }
      long total = succeeded + timedOut;
      return new Run(v.name(), contender.name(), succeeded / seconds, measured == 0 ? 0 : in / (double) measured,
          timedOut, admitted == 0 ? 0 : timedOut / (double) Math.max(1, total), latencies.p99Nanos() / 1e6,
          recovery, measured == 0 ? 0 : limitSum / measured, series);
    }

    private static boolean inBand(long[] t) {
      return t[1] * 2 >= t[2] && t[1] * 2 <= 3 * t[2];
    }

    /** From {@code change}, how long until the limit entered the band and stayed a second; to the end if never. */
    private long recovery(long change) {
      long since = -1;
      for (long[] t : ticks) {
        if (t[0] < change) {
          continue;
        }
        if (inBand(t)) {
          if (since < 0) {
            since = t[0];
          }
          if (t[0] - since >= SETTLED) {
            return since - change;
          }
        } else {
          since = -1;
        }
      }
      return end - change;
    }
  }
}
