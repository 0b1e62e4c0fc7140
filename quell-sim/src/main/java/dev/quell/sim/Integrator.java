package dev.quell.sim;

/**
 * Integrates a step function of simulated time (attempts in service, attempts waiting) into one
 * area per second, so that a second's mean is its area ÷ one second; also keeps the peak.
 */
final class Integrator {
  private final double[] area;
  private long last;
  private double value;
  private double peak;

  Integrator(int seconds) {
    this.area = new double[seconds];
  }

  /** The function takes {@code next} from {@code now} on. */
  void set(long now, double next) {
    advance(now);
    value = next;
    if (next > peak) {
      peak = next;
    }
  }

  /** Accounts for the current value up to {@code now}. */
  void advance(long now) {
    if (value != 0) {
      long t = last;
      while (t < now) {
        int s = (int) (t / Engine.SECOND);
        if (s >= area.length) {
          break;
        }
        long boundary = Math.min(now, (s + 1) * Engine.SECOND);
        area[s] += value * (boundary - t);
        t = boundary;
      }
    }
    if (now > last) {
      last = now;
    }
  }

  /** The mean over second {@code s}. */
  double mean(int s) {
    return area[s] / Engine.SECOND;
  }

  /** The mean over the whole series. */
  double mean() {
    double sum = 0;
    for (double a : area) {
      sum += a;
    }
    return area.length == 0 ? 0 : sum / ((double) area.length * Engine.SECOND);
  }

  double peak() {
    return peak;
  }
}
