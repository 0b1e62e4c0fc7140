package dev.quell.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs {@code quell} in this JVM through picocli, exactly as {@code main} does, capturing what it prints. */
final class QuellRunner {
  final StringWriter out = new StringWriter();
  final StringWriter err = new StringWriter();

  int run(String... args) {
    out.getBuffer().setLength(0);
    err.getBuffer().setLength(0);
    CommandLine cl = Quell.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  String out() {
    return out.toString();
  }

  String err() {
    return err.toString();
  }
}
