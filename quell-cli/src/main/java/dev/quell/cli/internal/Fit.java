package dev.quell.cli.internal;

import dev.quell.sim.internal.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Fits a dependency model to calls as production recorded them ({@link Telemetry.Sample}s): the
 * load, the healthy latency as a lognormal by its p50 and p99 (the simulator's model), the healthy
 * error rate, and the incidents — brownouts, failures and outages — found as runs of seconds whose
 * median latency or error rate leaves the run's usual range, each with its start, end and severity.
 * It says how well the model fits: the lognormal's p90 and p99.9 against the measured ones, and each
 * incident's measured median against the model's.
 */
final class Fit {
  /** A second is part of a brownout when its median latency is at least this many times the usual. */
  static final double BROWNOUT_AT = 2.0;
  /** A second is failing when its error rate is this much above the usual (and at least 5%). */
  static final double FAILING_ABOVE = 0.1;
  /** A second is an outage when at least this share of its calls failed. */
  static final double OUTAGE_AT = 0.9;
  /** Incidents shorter than this are noise; gaps this short inside one are bridged. */
  static final int SHORTEST = 3;
  static final int GAP = 2;
  private static final double Z99 = 2.3263;
  private static final double Z90 = 1.2816;
  private static final double Z999 = 3.0902;

  /** An incident found in the telemetry: seconds from the start, the kind and its severity. */
  record Incident(String kind, int from, int to, double severity, double measuredP50Millis, double errorRate) {
    String yaml() {
      String what = kind.equals("outage") ? "outage: true" : kind.equals("brownout")
          ? "brownout: " + Text.fixed(severity, 1) : "failing: " + Text.fixed(severity, 2);
      return "{" + what + ", from: " + from + "s, to: " + to + "s}";
    }
  }

  /** The fitted model. */
  record Model(String source, long calls, int seconds, double perSecond, double p50Millis, double p99Millis,
      double errorRate, List<Incident> incidents, double measuredP90, double measuredP999, long healthyCalls,
      long requests) {

    double sigma() {
      return (Math.log(p99Millis) - Math.log(p50Millis)) / Z99;
    }

    double fitted(double z) {
      return Math.exp(Math.log(p50Millis) + z * sigma());
    }

    /** How well the lognormal fits, in lines: fitted against measured quantiles, and each incident. */
    List<String> quality() {
      List<String> lines = new ArrayList<>();
      lines.add(String.format(Locale.ROOT, "%-24s %12s %12s %8s", "healthy latency", "measured", "fitted", "off"));
      lines.add(row("p50", p50Millis, p50Millis));
      lines.add(row("p90", measuredP90, fitted(Z90)));
      lines.add(row("p99", p99Millis, p99Millis));
      lines.add(row("p99.9", measuredP999, fitted(Z999)));
      for (Incident i : incidents) {
        if (i.kind().equals("brownout")) {
          lines.add(row(i.kind() + " " + Text.clock(Duration.ofSeconds(i.from())) + "–"
              + Text.clock(Duration.ofSeconds(i.to())) + " p50", i.measuredP50Millis(), p50Millis * i.severity()));
        }
      }
      return lines;
    }

    private static String row(String what, double measured, double fitted) {
      return String.format(Locale.ROOT, "%-24s %9s ms %9s ms %7s%%", what, Text.ms(measured), Text.ms(fitted),
          Text.fixed(100 * (fitted - measured) / measured, 1));
    }

    String yaml(String name) {
      StringBuilder y = new StringBuilder();
      y.append("# Fitted by quell fit from ").append(source).append(": ").append(String.format(Locale.ROOT, "%,d",
          calls)).append(" calls over ").append(Text.clock(Duration.ofSeconds(seconds))).append(".\n");
      y.append("# Healthy latency as a lognormal (p50, p99); how well it fits is printed with the fit.\n");
      y.append("# Telemetry of latency and outcome cannot show the dependency's capacity or the fleet's size:\n");
      y.append("# add capacity: and load.peers: if you know them, and put your policy in the arm.\n");
      y.append("name: ").append(name).append('\n');
      y.append("description: \"fitted from ").append(source.replace("\"", "'")).append("\"\n");
      y.append("duration: ").append(seconds).append("s\n");
      y.append("load:\n  perSecond: ").append(Text.fixed(perSecond, 2)).append('\n');
      y.append("dependency:\n  name: ").append(name).append('\n');
      y.append("  p50: ").append(Text.fixed(p50Millis, 2)).append("ms\n");
      y.append("  p99: ").append(Text.fixed(Math.max(p99Millis, p50Millis), 2)).append("ms\n");
      if (errorRate > 0) {
        y.append("  errorRate: ").append(Text.fixed(errorRate, 4)).append('\n');
      }
      if (!incidents.isEmpty()) {
        y.append("  incidents:\n");
        for (Incident i : incidents) {
          y.append("    - ").append(i.yaml()).append('\n');
        }
      }
      y.append("arms:\n  - name: your policy\n    policy: {attempts: 3, budget: automatic}\n");
      return y.toString();
    }
  }

  private Fit() {}

  /**
   * Fits {@code samples}, named {@code source} in messages.
   *
   * @throws ScenarioException when there is too little to fit: under 100 calls, or under 10 seconds
   */
  static Model of(List<Telemetry.Sample> samples, String source) {
    return of(new Telemetry.Recorded(samples, samples.size()), source);
  }

  /**
   * Fits {@code recorded}: the dependency from its samples (the requests it answered), the load from
   * its calls, named {@code source} in messages.
   *
   * @throws ScenarioException when there is too little to fit: under 100 requests, or under 10 seconds
   */
  static Model of(Telemetry.Recorded recorded, String source) {
    List<Telemetry.Sample> samples = recorded.samples();
    if (samples.size() < 100) {
      throw new ScenarioException(source + " has " + samples.size() + " calls; fitting needs at least 100");
    }
    long start = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (Telemetry.Sample s : samples) {
      start = Math.min(start, s.atNanos());
      last = Math.max(last, s.atNanos());
    }
    int seconds = (int) Math.min(86_400, (last - start) / 1_000_000_000L + 1);
    if (seconds < 10) {
      throw new ScenarioException(source + " spans " + seconds + " s; fitting needs at least 10 seconds of calls");
    }
    if ((last - start) / 1_000_000_000L + 1 > 86_400) {
      throw new ScenarioException(source + " spans more than a day; fit a day at a time (the simulator runs at"
          + " most 24h)");
    }
    long[] count = new long[seconds];
    long[] errors = new long[seconds];
    for (Telemetry.Sample s : samples) {
      int at = (int) ((s.atNanos() - start) / 1_000_000_000L);
      count[at]++;
      if (!s.succeeded()) {
        errors[at]++;
      }
    }
    double[][] latencies = new double[seconds][];
    int[] filled = new int[seconds];
    for (int i = 0; i < seconds; i++) {
      latencies[i] = new double[(int) count[i]];
    }
    for (Telemetry.Sample s : samples) {
      int at = (int) ((s.atNanos() - start) / 1_000_000_000L);
      latencies[at][filled[at]++] = s.latencyNanos() / 1e6;
    }
    double[] p50 = new double[seconds];
    double[] rate = new double[seconds];
    List<Double> p50s = new ArrayList<>();
    List<Double> rates = new ArrayList<>();
    for (int i = 0; i < seconds; i++) {
      Arrays.sort(latencies[i]);
      p50[i] = count[i] == 0 ? Double.NaN : quantile(latencies[i], 0.5);
      rate[i] = count[i] == 0 ? Double.NaN : (double) errors[i] / count[i];
      if (count[i] > 0) {
        p50s.add(p50[i]);
        rates.add(rate[i]);
      }
    }
    double usualP50 = median(p50s);
    double usualRate = median(rates);

    // each second's kind, then runs of one kind (short gaps bridged, short runs dropped)
    String[] kind = new String[seconds];
    for (int i = 0; i < seconds; i++) {
      if (count[i] == 0) {
        kind[i] = null;
      } else if (rate[i] >= OUTAGE_AT) {
        kind[i] = "outage";
      } else if (rate[i] >= Math.max(0.05, usualRate + FAILING_ABOVE)) {
        kind[i] = "failing";
      } else if (p50[i] >= BROWNOUT_AT * usualP50) {
        kind[i] = "brownout";
      }
    }
    List<Incident> incidents = new ArrayList<>();
    boolean[] inIncident = new boolean[seconds];
    int i = 0;
    while (i < seconds) {
      if (kind[i] == null) {
        i++;
        continue;
      }
      String k = kind[i];
      int end = i + 1; // exclusive
      int probe = end;
      while (probe < seconds && probe - end <= GAP) {
        if (k.equals(kind[probe])) {
          end = probe + 1;
        }
        probe++;
      }
      if (end - i >= SHORTEST) {
        List<Double> all = new ArrayList<>();
        long n = 0;
        long failed = 0;
        for (int s = i; s < end; s++) {
          inIncident[s] = true;
          n += count[s];
          failed += errors[s];
          for (double l : latencies[s]) {
            all.add(l);
          }
        }
        double measured = median(all);
        double errorRate = n == 0 ? 0 : (double) failed / n;
        double severity = k.equals("brownout") ? Math.round(10 * measured / usualP50) / 10.0
            : k.equals("failing") ? Math.round(100 * errorRate) / 100.0 : 1;
        incidents.add(new Incident(k, i, end, severity, measured, errorRate));
      }
      i = end;
    }

    // the healthy model: successful calls in the seconds outside every incident
    List<Double> healthy = new ArrayList<>();
    long healthyCalls = 0;
    long healthyErrors = 0;
    for (int s = 0; s < seconds; s++) {
      if (!inIncident[s]) {
        healthyCalls += count[s];
        healthyErrors += errors[s];
      }
    }
    for (Telemetry.Sample s : samples) {
      int at = (int) ((s.atNanos() - start) / 1_000_000_000L);
      if (!inIncident[at] && s.succeeded()) {
        healthy.add(s.latencyNanos() / 1e6);
      }
    }
    if (healthy.size() < 50) {
      throw new ScenarioException(source + " has too few successful calls outside its incidents (" + healthy.size()
          + ") to fit the healthy latency; it needs at least 50");
    }
    double[] h = healthy.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    double measuredP50 = Math.max(0.001, quantile(h, 0.5));
    double measuredP99 = Math.max(measuredP50, quantile(h, 0.99));
    return new Model(source, recorded.calls(), seconds, (double) recorded.calls() / seconds, measuredP50, measuredP99,
        healthyCalls == 0 ? 0 : (double) healthyErrors / healthyCalls, incidents, quantile(h, 0.9),
        quantile(h, 0.999), healthyCalls, samples.size());
  }

  private static double quantile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank))];
  }

  private static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return quantile(v, 0.5);
  }
}
