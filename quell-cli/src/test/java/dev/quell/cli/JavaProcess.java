package dev.quell.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts {@code quell} in a JVM of its own, from this test's class path, as the launcher would. */
final class JavaProcess {
  private JavaProcess() {}

  static ProcessBuilder quell(Path workingDirectory, String heap, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add(heap);
    command.add("-Djava.awt.headless=true");
    command.add("-Dquell.stderr.tty=false");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Quell.class.getName());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.directory(workingDirectory.toFile());
    pb.redirectErrorStream(true);
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    return pb;
  }
}
