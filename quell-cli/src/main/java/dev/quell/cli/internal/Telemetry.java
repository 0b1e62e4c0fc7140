package dev.quell.cli.internal;

import java.nio.file.Path;
import java.util.List;

/**
 * Calls as production recorded them, for {@code quell fit}: one input format each (a CSV of access
 * logs, a JDK Flight Recorder recording of Quell's events), all read into the same samples, so the
 * fitting never knows where they came from.
 */
interface Telemetry {

  /**
   * One request the dependency answered: a call in an access log; an attempt (first, retry or hedge)
   * in a recording of Quell's events, which tells them apart from the calls that made them.
   *
   * @param atNanos when it started, in nanoseconds on any fixed clock (only differences matter)
   * @param latencyNanos how long it took
   * @param succeeded whether it succeeded
   */
  record Sample(long atNanos, long latencyNanos, boolean succeeded) {}

  /**
   * What a file holds: the requests the dependency answered, and how many calls made them (the load
   * a scenario offers; its policy's retries come on top).
   */
  record Recorded(List<Sample> samples, long calls) {}

  /** The format's name, as {@code --format} takes it. */
  String name();

  /**
   * Reads every call in {@code file}.
   *
   * @throws ScenarioException with one line naming the file, the line and the field, for input this
   *     format cannot use
   */
  List<Sample> read(Path file);

  /**
   * Reads {@code file} with its calls: by default each sample is a call of its own.
   *
   * @throws ScenarioException as {@link #read}
   */
  default Recorded recorded(Path file) {
    List<Sample> samples = read(file);
    return new Recorded(samples, samples.size());
  }
}
