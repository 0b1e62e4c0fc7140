package dev.quell.sim;

import dev.quell.Backoff;
import dev.quell.Resilience;
import dev.quell.RetryBudget;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A named comparison: several arms (simulations that differ, usually in their policy) run with the
 * same seeds, so each sees the same arrivals. The {@code quell simulate} command runs scenarios, and
 * the three built in here are the ones it knows by name. Immutable.
 *
 * <pre>{@code
 * ScenarioResult result = Scenario.reference().run(1, 2, 3);
 * System.out.println(result.toTable());
 * }</pre>
 */
public final class Scenario {

  /**
   * One arm of a comparison.
   *
   * @param name what the table calls it, for example "budget on"
   * @param simulation what it runs
   */
  public record Arm(String name, Simulation simulation) {
    /** Checks the arm. */
    public Arm {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(simulation, "simulation");
    }
  }

  private final String name;
  private final String description;
  private final List<Arm> arms;
  private final int parallelism;

  private Scenario(String name, String description, List<Arm> arms, int parallelism) {
    this.name = name;
    this.description = description;
    this.arms = List.copyOf(arms);
    this.parallelism = parallelism;
  }

  /**
   * A scenario of your own.
   *
   * @throws IllegalArgumentException without arms, or with two arms of the same name
   */
  public static Scenario of(String name, String description, List<Arm> arms) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
    if (arms.isEmpty()) {
      throw new IllegalArgumentException("scenario '" + name + "' needs at least one arm");
    }
    List<String> seen = new ArrayList<>();
    for (Arm a : arms) {
      if (seen.contains(a.name())) {
        throw new IllegalArgumentException("scenario '" + name + "' has two arms named '" + a.name() + "'");
      }
      seen.add(a.name());
    }
    return new Scenario(name, description, arms, 0);
  }

  /**
   * The dependency of the reference scenario: p50 20 ms, p99 100 ms, room for 400 concurrent
   * attempts, eight times slower from 2:00 to 3:00.
   */
  public static Dependency referenceDependency() {
    return Dependency.latency(Duration.ofMillis(20), Duration.ofMillis(100))
        .capacity(400)
        .incident(Incident.brownout(8).between(Duration.ofMinutes(2), Duration.ofMinutes(3)));
  }

  /**
   * The policy of the reference scenario: 3 attempts, 160 ms attempt timeout, full-jitter exponential
   * backoff from 50 ms, 1 s deadline, spending from {@code budget}.
   */
  public static Resilience referencePolicy(RetryBudget budget) {
    return Resilience.DEFAULT.with(s -> s
        .name("reference")
        .attempts(3)
        .attemptTimeout(Duration.ofMillis(160))
        .backoff(Backoff.exponential(Duration.ofMillis(50)))
        .deadline(Duration.ofSeconds(1))
        .budget(budget));
  }

  /**
   * The reference scenario (SPEC §9, the README's first command): five simulated minutes at 500 calls
   * a second against {@link #referenceDependency()}, under {@link #referencePolicy} with the budget
   * off ({@code RetryBudget.NONE}) and on ({@code RetryBudget.AUTOMATIC}).
   */
  public static Scenario reference() {
    return budgetOffAndOn("reference",
        "5 min at 500 calls/s against a dependency with p50 20 ms, p99 100 ms and room for 400 concurrent calls,"
            + " 8× slower from 2:00 to 3:00; policy: 3 attempts, 160 ms attempt timeout, full-jitter backoff"
            + " from 50 ms, 1 s deadline",
        Load.perSecond(500));
  }

  /**
   * The fleet scenario: the reference scenario with 50 pods (this one and 49 peers) at 500 calls a
   * second each against the same dependency. The offered calls alone need more than its capacity: a
   * capacity problem, not a retry problem.
   */
  public static Scenario fleet() {
    return budgetOffAndOn("fleet",
        "the reference scenario with 50 pods at 500 calls/s each (this pod and 49 peers) against the same"
            + " dependency",
        Load.perSecond(500).peers(49));
  }

  private static Scenario budgetOffAndOn(String name, String description, Load load) {
    List<Arm> arms = new ArrayList<>();
    arms.add(new Arm("budget off", Simulate.policy(referencePolicy(RetryBudget.NONE))
        .against(referenceDependency()).under(load).lasting(Duration.ofMinutes(5))));
    arms.add(new Arm("budget on", Simulate.policy(referencePolicy(RetryBudget.AUTOMATIC))
        .against(referenceDependency()).under(load).lasting(Duration.ofMinutes(5))));
    return new Scenario(name, description, arms, 0);
  }

  /**
   * The topology scenario (SPEC §1): load → frontend → backend → database, each of the three edges
   * allowed 4 attempts, at 100 calls a second for two minutes; the database is down from 0:30 to
   * 1:30. Without budgets each call puts 4 × 4 × 4 = 64 attempts on the database while it is down;
   * with them, each edge's budget bounds its own retries and the total stays near one attempt a call.
   */
  public static Scenario topology() {
    List<Arm> arms = new ArrayList<>();
    arms.add(new Arm("budgets off", layered(RetryBudget.NONE)));
    arms.add(new Arm("budgets on", layered(RetryBudget.AUTOMATIC)));
    return new Scenario("topology",
        "2 min at 100 calls/s through frontend → backend → database, 4 attempts on each edge (backoff from 10 ms),"
            + " the database down from 0:30 to 1:30",
        arms, 0);
  }

  private static Simulation layered(RetryBudget budget) {
    Dependency database = Dependency.latency(Duration.ofMillis(5), Duration.ofMillis(50))
        .named("database")
        .capacity(200)
        .incident(Incident.outage().between(Duration.ofSeconds(30), Duration.ofSeconds(90)));
    Service backend = Service.named("backend").calls(database, layerPolicy("database", budget));
    Service frontend = Service.named("frontend").calls(backend, layerPolicy("backend", budget));
    return Simulate.policy(layerPolicy("frontend", budget))
        .against(frontend)
        .under(Load.perSecond(100))
        .lasting(Duration.ofMinutes(2));
  }

  private static Resilience layerPolicy(String name, RetryBudget budget) {
    return Resilience.DEFAULT.with(s -> s
        .name(name)
        .attempts(4)
        .backoff(Backoff.exponential(Duration.ofMillis(10)))
        .budget(budget));
  }

  /** The scenario's name. */
  public String name() {
    return name;
  }

  /** What it simulates, in one sentence. */
  public String description() {
    return description;
  }

  /** Its arms, in order. */
  public List<Arm> arms() {
    return arms;
  }

  /**
   * A copy that runs its arms and seeds on at most {@code threads} threads at once (by default, one
   * per available processor). Each run is single-threaded and deterministic for its seed, so the
   * result is the same on one thread or many; only the time it takes changes.
   *
   * @param threads at least 1
   */
  public Scenario parallelism(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("scenario parallelism must be at least 1 thread, was " + threads);
    }
    return new Scenario(name, description, arms, threads);
  }

  /** How many threads {@link #run} uses at most: the number set, or one per available processor. */
  public int parallelism() {
    return parallelism > 0 ? parallelism : Runtime.getRuntime().availableProcessors();
  }

  /**
   * How big running every arm with {@code seeds} seeds will be, worked out without running it; the
   * memory counts the runs that go on at once ({@link #parallelism()}).
   *
   * @throws IllegalArgumentException when {@code seeds} is below 1
   */
  public Estimate estimate(int seeds) {
    if (seeds < 1) {
      throw new IllegalArgumentException("a scenario needs at least one seed, was " + seeds);
    }
    long runs = (long) arms.size() * seeds;
    long seconds = 0;
    long calls = 0;
    long attempts = 0;
    long retained = 0;
    long working = 0;
    for (Arm arm : arms) {
      Estimate one = arm.simulation().estimate();
      seconds = Estimate.saturatedAdd(seconds, one.simulatedSeconds() * seeds);
      calls = Estimate.saturatedAdd(calls, Estimate.saturatedMultiply(one.calls(), seeds));
      attempts = Estimate.saturatedAdd(attempts, Estimate.saturatedMultiply(one.attempts(), seeds));
      retained = Estimate.saturatedAdd(retained, Estimate.saturatedMultiply(one.bytes(), seeds));
      working = Math.max(working, one.bytes());
    }
    long concurrent = Math.min(runs, parallelism());
    return Estimate.of(runs, seconds, calls, attempts, retained,
        Estimate.saturatedMultiply(working, (double) concurrent));
  }

  /**
   * Runs every arm with every seed, on up to {@link #parallelism()} threads, and measures the CPU time
   * the runs took. The result does not depend on the number of threads.
   *
   * @throws IllegalArgumentException without seeds, or when a run refuses its model
   * @throws IllegalStateException when a run fails, or the calling thread is interrupted while it waits
   *     (the runs are stopped, and the thread's interrupt flag stays set)
   */
  public ScenarioResult run(long... seeds) {
    return run(Progress.tracker(), seeds);
  }

  /** Runs every arm with every seed, as {@link #run(long...)} does, counting on {@code progress}. */
  public ScenarioResult run(Progress progress, long... seeds) {
    Objects.requireNonNull(progress, "progress");
    if (seeds.length == 0) {
      throw new IllegalArgumentException("a scenario needs at least one seed");
    }
    long[] chosen = seeds.clone();
    int runs = arms.size() * chosen.length;
    long seconds = 0;
    for (Arm arm : arms) {
      seconds += arm.simulation().estimate().simulatedSeconds() * chosen.length;
    }
    progress.planned(runs, seconds);
    List<Callable<Timed>> tasks = new ArrayList<>(runs);
    for (Arm arm : arms) {
      for (long seed : chosen) {
        tasks.add(() -> Timed.run(arm.simulation(), seed, progress));
      }
    }
    long wallBefore = System.nanoTime();
    List<Timed> done = Batch.run(tasks, Math.min(runs, parallelism()));
    long cpu = 0;
    for (Timed t : done) {
      cpu = t.cpuNanos < 0 || cpu < 0 ? -1 : cpu + t.cpuNanos;
    }
    List<ScenarioResult.ArmResult> results = new ArrayList<>();
    for (int a = 0; a < arms.size(); a++) {
      List<SimulationReport> reports = new ArrayList<>(chosen.length);
      for (int i = 0; i < chosen.length; i++) {
        reports.add(done.get(a * chosen.length + i).report);
      }
      results.add(new ScenarioResult.ArmResult(arms.get(a).name(), new SimulationBands(reports)));
    }
    return new ScenarioResult(this, chosen, results, Duration.ofNanos(cpu),
        Duration.ofNanos(System.nanoTime() - wallBefore), Math.min(runs, parallelism()));
  }

  /** One run's report and the CPU time its thread spent on it. */
  private static final class Timed {
    final SimulationReport report;
    final long cpuNanos;

    private Timed(SimulationReport report, long cpuNanos) {
      this.report = report;
      this.cpuNanos = cpuNanos;
    }

    static Timed run(Simulation simulation, long seed, Progress progress) {
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      boolean measured = threads.isCurrentThreadCpuTimeSupported();
      long before = measured ? threads.getCurrentThreadCpuTime() : 0;
      SimulationReport report = simulation.run(seed, progress);
      long cpu = measured ? threads.getCurrentThreadCpuTime() - before : -1;
      progress.finished(0);
      return new Timed(report, cpu);
    }
  }

  @Override
  public String toString() {
    return "Scenario[" + name + ": " + description + "]";
  }
}
