package dev.quell.cli.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** {@code quell --version}: Quell's version, and the JDK it runs on. */
public final class Versions implements CommandLine.IVersionProvider {

  /** Quell's version, as the build stamped it. */
  public static String quell() {
    try (InputStream in = Versions.class.getResourceAsStream("/dev/quell/cli/version.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null && !v.isBlank() && !v.startsWith("${")) {
          return v;
        }
      }
    } catch (IOException e) {
      // fall through
    }
    return "unknown";
  }

  /** The JDK: version, vendor, VM and where it lives. */
  public static String jdk() {
    return "JDK " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ", "
        + System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version") + ") at "
        + System.getProperty("java.home");
  }

  /** Both, on one line. */
  static String describe() {
    return "quell " + quell() + " on " + jdk();
  }

  @Override
  public String[] getVersion() {
    return new String[] {"quell " + quell(), jdk()};
  }
}
