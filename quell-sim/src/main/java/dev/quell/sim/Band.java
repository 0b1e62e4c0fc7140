package dev.quell.sim;

import java.util.Arrays;

/**
 * One number across several seeds: its median, its smallest and its largest value. Values that are
 * not numbers (a phase without calls, a run that never recovered) are left out; a band of none is
 * all NaN.
 *
 * @param median the middle value (the mean of the two middle ones for an even count)
 * @param min the smallest
 * @param max the largest
 */
public record Band(double median, double min, double max) {

  /** The band of {@code values}. */
  public static Band of(double... values) {
    double[] v = Arrays.stream(values).filter(d -> !Double.isNaN(d)).sorted().toArray();
    if (v.length == 0) {
      return new Band(Double.NaN, Double.NaN, Double.NaN);
    }
    int mid = v.length / 2;
    double median = v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    return new Band(median, v[0], v[v.length - 1]);
  }

  /** True when every run gave the same value. */
  public boolean isPoint() {
    return Double.compare(min, max) == 0;
  }
}
