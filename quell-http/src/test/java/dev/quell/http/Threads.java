package dev.quell.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/** The live threads, counted by name with every run of digits made {@code #}: for leak checks around a soak. */
final class Threads {
  private Threads() {}

  static Map<String, Integer> byName() {
    Map<String, Integer> counts = new TreeMap<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive()) {
        counts.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
      }
    }
    return counts;
  }

  /**
   * Waits (up to {@code seconds}) until no name has more threads than {@code before} plus its allowance
   * in {@code allowed} (0 for a name not there), then asserts it: a soak must leave no thread behind
   * beyond the pools that keep idle workers for a while.
   */
  static void assertNoGrowth(Map<String, Integer> before, Map<String, Integer> allowed, long seconds) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    Map<String, Integer> grown;
    do {
      grown = new TreeMap<>();
      for (Map.Entry<String, Integer> e : byName().entrySet()) {
        int growth = e.getValue() - before.getOrDefault(e.getKey(), 0);
        if (growth > allowed.getOrDefault(e.getKey(), 0)) {
          grown.put(e.getKey(), growth);
        }
      }
      if (grown.isEmpty()) {
        return;
      }
      Thread.sleep(50); // threads finish on their own schedule: poll, bounded by the deadline above
    } while (System.nanoTime() < end);
    assertThat(grown).as("threads left behind, by name: how many more than before (allowed: %s)", allowed).isEmpty();
  }
}
