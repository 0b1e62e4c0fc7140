package dev.quell.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 23: a file that cannot be written is named with why, not only with its own name again (the
 * JDK's file exceptions carry just the path as their message: {@code cannot write /sys/r.html: /sys/r.html}).
 */
class WriteFailureTest {

  static Stream<Arguments> failures() {
    return Stream.of(
        Arguments.of("access denied", new AccessDeniedException("/sys/r.html"), "permission denied"),
        Arguments.of("no such folder", new NoSuchFileException("/no/r.html"), "no such file or folder"),
        Arguments.of("a path through a file", new NotDirectoryException("/etc/passwd/r.html"),
            "a part of the path is not a folder"),
        Arguments.of("the system's reason", new FileSystemException("/mnt/r.html", null, "Read-only file system"),
            "Read-only file system"),
        Arguments.of("denied, with the system's reason", new AccessDeniedException("/x", null, "Operation not permitted"),
            "permission denied (Operation not permitted)"),
        Arguments.of("a file system failure without a reason", new FileSystemException("/x"),
            "the file system refused (FileSystemException)"),
        Arguments.of("a plain failure", new IOException("No space left on device"), "No space left on device"),
        Arguments.of("a failure without words", new IOException(), "IOException"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("failures")
  void theReasonIsInWordsAndNeverJustTheFileName(String name, IOException failure, String expected) {
    assertThat(SimulateCommand.why(failure)).isEqualTo(expected);
  }
}
