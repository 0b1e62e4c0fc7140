package dev.quell.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The run cut into phases at the edges of the incidents: overlapping or touching incident windows
 * (on any dependency) merge into one "during" phase.
 */
final class PhasePlan {
  private final long[] starts;
  private final String[] names;
  private final boolean[] incident;
  private final long end;
  /** The merged incident windows, as {from, to} pairs, clipped to the run. */
  final List<long[]> windows;

  private PhasePlan(List<Long> starts, List<String> names, List<Boolean> incident, long end, List<long[]> windows) {
    this.starts = starts.stream().mapToLong(Long::longValue).toArray();
    this.names = names.toArray(new String[0]);
    this.incident = new boolean[incident.size()];
    for (int i = 0; i < incident.size(); i++) {
      this.incident[i] = incident.get(i);
    }
    this.end = end;
    this.windows = windows;
  }

  static PhasePlan of(List<Dependency> dependencies, long end) {
    List<long[]> raw = new ArrayList<>();
    List<String> labels = new ArrayList<>();
    for (Dependency d : dependencies) {
      for (Incident i : d.incidents()) {
        long from = i.from().toNanos();
        long to = Math.min(end, i.to().map(Duration::toNanos).orElse(Long.MAX_VALUE));
        if (from < end) {
          raw.add(new long[] {from, to, labels.size()});
          labels.add(i.describe() + (dependencies.size() > 1 ? " at " + d.name() : ""));
        }
      }
    }
    raw.sort(Comparator.<long[]>comparingLong(w -> w[0]).thenComparingLong(w -> w[2]));
    List<long[]> windows = new ArrayList<>();
    List<StringBuilder> windowLabels = new ArrayList<>();
    for (long[] w : raw) {
      long[] last = windows.isEmpty() ? null : windows.get(windows.size() - 1);
      if (last != null && w[0] <= last[1]) {
        last[1] = Math.max(last[1], w[1]);
        windowLabels.get(windowLabels.size() - 1).append(" + ").append(labels.get((int) w[2]));
      } else {
        windows.add(new long[] {w[0], w[1]});
        windowLabels.add(new StringBuilder(labels.get((int) w[2])));
      }
    }
    List<Long> starts = new ArrayList<>();
    List<String> names = new ArrayList<>();
    List<Boolean> incident = new ArrayList<>();
    if (windows.isEmpty()) {
      starts.add(0L);
      names.add("whole run");
      incident.add(false);
      return new PhasePlan(starts, names, incident, end, windows);
    }
    boolean numbered = windows.size() > 1;
    long cursor = 0;
    for (int i = 0; i < windows.size(); i++) {
      long[] w = windows.get(i);
      if (w[0] > cursor) {
        starts.add(cursor);
        names.add(i == 0 ? "before" : "between " + i + " and " + (i + 1));
        incident.add(false);
      }
      starts.add(w[0]);
      names.add("during " + (numbered ? (i + 1) + ": " : "") + windowLabels.get(i));
      incident.add(true);
      cursor = w[1];
    }
    if (cursor < end) {
      starts.add(cursor);
      names.add("after");
      incident.add(false);
    }
    return new PhasePlan(starts, names, incident, end, windows);
  }

  int size() {
    return starts.length;
  }

  /** The phase that time {@code t} falls in; times after the end belong to the last phase. */
  int of(long t) {
    // time mostly moves forward: try the phase of the last lookup first
    int c = cached;
    if (t >= starts[c] && (c + 1 == starts.length || t < starts[c + 1])) {
      return c;
    }
    int i = starts.length - 1;
    while (i > 0 && starts[i] > t) {
      i--;
    }
    cached = i;
    return i;
  }

  private int cached;

  boolean hasIncidents() {
    return !windows.isEmpty();
  }

  List<Phase> phases(long[] calls, long[] succeeded, long[] attempts) {
    List<Phase> phases = new ArrayList<>(starts.length);
    for (int i = 0; i < starts.length; i++) {
      long to = i + 1 < starts.length ? starts[i + 1] : end;
      phases.add(new Phase(names[i], Duration.ofNanos(starts[i]), Duration.ofNanos(to), incident[i], calls[i],
          succeeded[i], attempts[i]));
    }
    return phases;
  }
}
