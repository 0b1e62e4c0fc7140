package dev.quell.cli.internal;

import java.nio.file.Path;
import java.util.List;

/**
 * Calls as production recorded them, for {@code quell fit}: one input format each (a CSV of access
 * logs today; a JFR recording of Quell's events can plug in beside it), all read into the same
 * samples, so the fitting never knows where they came from.
 */
interface Telemetry {

  /**
   * One call.
   *
   * @param atNanos when it started, in nanoseconds on any fixed clock (only differences matter)
   * @param latencyNanos how long it took
   * @param succeeded whether it succeeded
   */
  record Sample(long atNanos, long latencyNanos, boolean succeeded) {}

  /** The format's name, as {@code --format} takes it. */
  String name();

  /**
   * Reads every call in {@code file}.
   *
   * @throws ScenarioException with one line naming the file, the line and the field, for input this
   *     format cannot use
   */
  List<Sample> read(Path file);
}
