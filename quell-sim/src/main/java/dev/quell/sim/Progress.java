package dev.quell.sim;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How far a {@link Scenario} run has got, for a progress display: simulated seconds done of the
 * seconds planned, and runs finished. Thread-safe: the runs count on it from their threads while
 * another thread reads it.
 *
 * <pre>{@code
 * Progress progress = Progress.tracker();
 * // on another thread, every so often: progress.fraction()
 * ScenarioResult result = scenario.run(progress, 1, 2, 3);
 * }</pre>
 */
public final class Progress {
  private final AtomicLong planned = new AtomicLong();
  private final AtomicLong done = new AtomicLong();
  private final AtomicInteger runsPlanned = new AtomicInteger();
  private final AtomicInteger runsDone = new AtomicInteger();

  private Progress() {}

  /** A tracker with nothing planned yet; one tracker may follow several runs in turn. */
  public static Progress tracker() {
    return new Progress();
  }

  void planned(int runs, long seconds) {
    runsPlanned.addAndGet(runs);
    planned.addAndGet(seconds);
  }

  void simulated(long seconds) {
    done.addAndGet(seconds);
  }

  void finished(long secondsLeftOver) {
    done.addAndGet(secondsLeftOver);
    runsDone.incrementAndGet();
  }

  /** Simulated seconds planned, over every run started so far. */
  public long plannedSeconds() {
    return planned.get();
  }

  /** Simulated seconds done. */
  public long doneSeconds() {
    return done.get();
  }

  /** Runs planned (arms × seeds, over every scenario run followed). */
  public int runsPlanned() {
    return runsPlanned.get();
  }

  /** Runs finished. */
  public int runsDone() {
    return runsDone.get();
  }

  /** Done ÷ planned, from 0 to 1 (0 before anything is planned). */
  public double fraction() {
    long p = planned.get();
    return p == 0 ? 0 : Math.min(1.0, (double) done.get() / p);
  }
}
