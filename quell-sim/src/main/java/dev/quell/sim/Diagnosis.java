package dev.quell.sim;

/**
 * What kind of run it was, in the order the simulator checks: a capacity problem first (no retry
 * policy can fix it), then a metastable failure, then a retry storm; otherwise healthy.
 */
public enum Diagnosis {
  /**
   * Healthy: retries stayed bounded and, after any incident, the system came back at once. An
   * incident may still have cost availability while it lasted; that is the incident, not the policy.
   */
  HEALTHY("healthy"),
  /**
   * A retry storm: retries multiplied the load on a target, with at least three seconds in which it
   * received half again (1.5×) or more of the attempts the offered calls alone would send it.
   */
  RETRY_STORM("retry storm"),
  /**
   * A metastable failure: healthy before the incident (at least 95% of calls succeeded), still failing
   * more than 30 s after the incident ended, or until the end of the run. The trigger is gone; the
   * retries it set off keep the dependency overloaded.
   */
  METASTABLE_FAILURE("metastable failure"),
  /**
   * A capacity problem: the offered calls alone, without a single retry, need more of a dependency
   * than it has (arrival rate × peers × mean healthy latency ≥ capacity). No retry policy fixes that:
   * add capacity or shed load.
   */
  CAPACITY_PROBLEM("capacity problem");

  private final String label;

  Diagnosis(String label) {
    this.label = label;
  }

  /** The diagnosis in plain words: "healthy", "retry storm", "metastable failure", "capacity problem". */
  public String label() {
    return label;
  }
}
