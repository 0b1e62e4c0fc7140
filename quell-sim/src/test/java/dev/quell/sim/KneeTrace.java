package dev.quell.sim;

import org.junit.jupiter.api.Test;

/** Prints Quell's limit every 100 ms when asked: -Dquell.trace=variant. */
class KneeTrace {
  @Test
  void trace() {
    String which = System.getProperty("quell.trace");
    org.junit.jupiter.api.Assumptions.assumeTrue(which != null, "run with -Dquell.trace=<variant>");
    KneeBenchmark.Run r = KneeBenchmark.run(KneeBenchmark.variant(which), KneeBenchmark.Contender.quellAdaptive(), 1);
    StringBuilder s = new StringBuilder();
    double[] series = r.limitSeries();
    for (int i = 0; i < series.length; i++) {
      s.append(i % 20 == 0 ? "\n" + (i / 10) + "s: " : " ").append((int) series[i]);
    }
    System.out.println(s);
    System.out.println(r);
  }
}
