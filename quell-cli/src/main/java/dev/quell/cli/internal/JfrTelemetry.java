package dev.quell.cli.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import jdk.jfr.EventType;
import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jspecify.annotations.Nullable;

/**
 * A JDK Flight Recorder recording with Quell's events (quell-core's {@code dev.quell.Attempt} and
 * {@code dev.quell.Call}, turned on by {@code quell.jfc}; docs/jfr.md). Each attempt is a request the
 * dependency answered — first attempts, retries and hedges alike — with its latency and whether the
 * policy's classifier judged it {@code OK}; the calls, from the call events (or, without them, the
 * first attempts), are the load. Times are the policy's own clock (the events' {@code clock} field),
 * so a recording of a simulation reads in simulated time.
 *
 * <p>A recording of several policies (several dependencies) is fitted one policy at a time:
 * {@code --policy} names it, and is needed when there is more than one.
 */
final class JfrTelemetry implements Telemetry {
  static final String ATTEMPT = "dev.quell.Attempt";
  static final String CALL = "dev.quell.Call";

  private final @Nullable String policy;

  JfrTelemetry(@Nullable String policy) {
    this.policy = policy;
  }

  @Override
  public String name() {
    return "jfr";
  }

  @Override
  public List<Sample> read(Path file) {
    return recorded(file).samples();
  }

  @Override
  public Recorded recorded(Path file) {
    String where = file.getFileName().toString();
    List<Sample> samples = new ArrayList<>();
    long calls = 0;
    long firsts = 0;
    Set<String> policies = new TreeSet<>();
    boolean checkedAttempt = false;
    boolean checkedCall = false;
    try (RecordingFile in = new RecordingFile(file)) {
      while (in.hasMoreEvents()) {
        RecordedEvent e = in.readEvent();
        String type = e.getEventType().getName();
        boolean attempt = type.equals(ATTEMPT);
        if (!attempt && !type.equals(CALL)) {
          continue;
        }
        if (attempt && !checkedAttempt) {
          require(e.getEventType(), where, "policy", "kind", "latency", "verdict", "clock");
          checkedAttempt = true;
        } else if (!attempt && !checkedCall) {
          require(e.getEventType(), where, "policy", "clock");
          checkedCall = true;
        }
        String p = e.getString("policy");
        policies.add(p == null ? "" : p);
        if (policy != null && !policy.equals(p)) {
          continue;
        }
        if (!attempt) {
          calls++;
          continue;
        }
        long latency = e.getLong("latency");
        long clock = e.getLong("clock");
        if (latency < 0) {
          throw new ScenarioException(where + ": a " + ATTEMPT + " event has a negative latency (" + latency
              + " ns) at " + e.getStartTime());
        }
        if ("first".equals(e.getString("kind"))) {
          firsts++;
        }
        samples.add(new Sample(clock - latency, latency, "OK".equals(e.getString("verdict"))));
      }
    } catch (IOException e) {
      throw new ScenarioException(where + " is not a JDK Flight Recorder recording this JDK can read: "
          + SimulateCommand.why(e));
    }
    if (samples.isEmpty()) {
      if (policy != null && !policies.isEmpty()) {
        throw new ScenarioException(where + " has no " + ATTEMPT + " events of policy \"" + policy
            + "\"; its policies are " + String.join(", ", policies));
      }
      throw new ScenarioException(where + " has no " + ATTEMPT + " events: record with Quell's settings file,"
          + " -XX:StartFlightRecording:settings=default.jfc,settings=quell.jfc (docs/jfr.md)");
    }
    if (policy == null && policies.size() > 1) {
      throw new ScenarioException(where + " holds the events of " + policies.size() + " policies ("
          + String.join(", ", policies) + "): fit one at a time with --policy NAME");
    }
    return new Recorded(samples, calls > 0 ? calls : firsts);
  }

  /** Names the first field {@code type} lacks: a recording of another version of Quell's events. */
  private static void require(EventType type, String where, String... fields) {
    for (String f : fields) {
      ValueDescriptor d = type.getField(f);
      if (d == null) {
        throw new ScenarioException(where + ": " + type.getName() + " events have no field \"" + f + "\"; quell fit"
            + " reads the events of this version of Quell (docs/jfr.md)");
      }
    }
  }
}
