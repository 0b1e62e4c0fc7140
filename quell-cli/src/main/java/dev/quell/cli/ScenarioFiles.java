package dev.quell.cli;

import dev.quell.cli.internal.Chart;
import dev.quell.cli.internal.ScenarioException;
import dev.quell.cli.internal.ScenarioFile;
import dev.quell.cli.internal.SimulateCommand;
import dev.quell.sim.Scenario;
import dev.quell.sim.ScenarioResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Scenario files and charts for code that is not the command: {@code quell-test}'s policy checks read
 * a team's scenario file with {@link #read(Path)} and draw a failed check with {@link #chart}, exactly
 * as {@code quell simulate} would. Stateless; safe from any thread.
 */
public final class ScenarioFiles {
  private ScenarioFiles() {}

  /**
   * Reads and checks a scenario file, as {@code quell simulate --scenario FILE} does.
   *
   * @throws IllegalArgumentException with the one-line message the command would print (the file,
   *     the key path, the value and what is allowed) when the file cannot be read or is not a valid
   *     scenario
   */
  public static Scenario read(Path file) {
    try {
      return ScenarioFile.read(file).scenario();
    } catch (ScenarioException e) {
      throw new IllegalArgumentException(ScenarioFile.oneLine(String.valueOf(e.getMessage())), e);
    }
  }

  /**
   * Draws the run chart of {@code result}'s first seed, as {@code quell simulate} does, into
   * {@code png} (1200 × 900). Its folder must exist.
   *
   * @throws IOException when the file cannot be written; the message says why
   */
  public static void chart(ScenarioResult result, Path png) throws IOException {
    try {
      Chart.png(Chart.run(result, Map.of()), png, 1200, 900);
    } catch (IOException e) {
      throw new IOException("cannot write the chart to " + png.toAbsolutePath() + ": " + SimulateCommand.why(e), e);
    }
  }
}
