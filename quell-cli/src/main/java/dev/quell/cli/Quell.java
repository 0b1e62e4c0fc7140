package dev.quell.cli;

import dev.quell.cli.internal.SimulateCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code quell} command. {@code quell simulate} runs a policy against a modelled dependency on a
 * virtual clock and compares arms side by side (see {@code docs/simulation.md}).
 *
 * <pre>
 * ./quell simulate                         # the reference scenario: budget off versus on
 * ./quell simulate --scenario fleet        # 50 pods against one dependency
 * ./quell simulate --scenario my.yaml --seeds 5 --json
 * </pre>
 */
@Command(name = "quell", mixinStandardHelpOptions = true, versionProvider = Quell.Version.class,
    description = "Retry budgets for the JVM: measure a policy before you ship it.",
    subcommands = {SimulateCommand.class, CommandLine.HelpCommand.class})
public final class Quell implements Runnable {

  /** Prints the usage when no subcommand is given. */
  @Override
  public void run() {
    CommandLine.usage(this, System.out);
  }

  /** A command line for {@code quell}, ready to {@code execute}; its output goes where you set it. */
  public static CommandLine commandLine() {
    return new CommandLine(new Quell());
  }

  /** Runs the command and exits with its status. */
  public static void main(String[] args) {
    System.setProperty("java.awt.headless", "true");
    System.exit(commandLine().execute(args));
  }

  /** The version, from the jar's manifest when there is one. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Quell.class.getPackage().getImplementationVersion();
      return new String[] {"quell " + (v == null ? "0.1.0-SNAPSHOT" : v)};
    }
  }
}
