package dev.quell.cli;

import dev.quell.cli.internal.FitCommand;
import dev.quell.cli.internal.SimulateCommand;
import dev.quell.cli.internal.Versions;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code quell} command. {@code quell simulate} runs a policy against a modelled dependency on a
 * virtual clock and compares arms side by side (see {@code docs/simulation.md}); {@code quell
 * --version} prints Quell's version and the JDK it runs on.
 *
 * <pre>
 * ./quell simulate                         # the reference scenario: budget off versus on
 * ./quell simulate --scenario fleet        # 50 pods against one dependency
 * ./quell simulate --scenario my.yaml --seeds 5 --json
 * </pre>
 *
 * <p>Every mistake on the command line (no subcommand included) is one line on standard error and exit code 2; a failure to
 * write an output is exit code 1; there is never a stack trace.
 */
@Command(name = "quell", mixinStandardHelpOptions = true, versionProvider = Versions.class,
    description = "Retry budgets for the JVM: measure a policy before you ship it.",
    subcommands = {SimulateCommand.class, FitCommand.class, CommandLine.HelpCommand.class})
public final class Quell implements Callable<Integer> {
  @Spec
  @Nullable CommandSpec spec;

  /**
   * Without a subcommand there is nothing to do: the usage goes to standard error and the exit code
   * is 2, as for any other incomplete command line (so a script that forgot {@code simulate} fails).
   */
  @Override
  public Integer call() {
    if (spec == null) {
      throw new IllegalStateException("picocli injects the spec before calling the command");
    }
    PrintWriter err = spec.commandLine().getErr();
    err.println("quell: which command? Give one, for example: quell simulate");
    spec.commandLine().usage(err);
    err.flush();
    return 2;
  }

  /** A command line for {@code quell}, ready to {@code execute}; its output goes where you set it. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Quell());
    cl.setParameterExceptionHandler((e, args) -> {
      CommandLine where = e.getCommandLine();
      String name = where.getCommandName();
      PrintWriter err = where.getErr();
      err.println((name.equals("quell") ? "quell: " : "quell " + name + ": ") + oneLine(e.getMessage())
          + " (see " + (name.equals("quell") ? "quell" : "quell " + name) + " --help)");
      err.flush();
      return 2;
    });
    cl.setExecutionExceptionHandler((e, where, parsed) -> {
      PrintWriter err = where.getErr();
      err.println("quell: internal error: " + e + " (please report it with the command that caused it;"
          + " run with -Dquell.debug=true for the stack trace)");
      if (Boolean.getBoolean("quell.debug")) {
        e.printStackTrace(err);
      }
      err.flush();
      return 1;
    });
    return cl;
  }

  private static String oneLine(@org.jspecify.annotations.Nullable String s) {
    return s == null ? "" : s.replaceAll("\\s*\\R\\s*", " ").trim();
  }

  /** Runs the command and exits with its status. */
  public static void main(String[] args) {
    System.setProperty("java.awt.headless", "true");
    System.exit(commandLine().execute(args));
  }
}
