package dev.quell.cli.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The scenarios {@code quell simulate} knows by name. Each is a file in {@code docs/scenarios},
 * packaged into the command, so what the docs show is exactly what runs.
 */
public final class Builtins {
  /** The names, in the order the help lists them. */
  public static final List<String> NAMES = List.of("reference", "sixteen-pods", "fleet", "fleet-bounded-queue",
      "fleet-concurrency-limit", "topology", "outage", "outage-hanging", "tail-at-scale", "hedging-brownout",
      "known-dependency");

  private Builtins() {}

  /** The built-in scenario called {@code name} (any case), if there is one. */
  public static Optional<ScenarioFile> find(String name) {
    String key = name.toLowerCase(Locale.ROOT);
    if (!NAMES.contains(key)) {
      return Optional.empty();
    }
    return Optional.of(ScenarioFile.parse(text(key), key, key));
  }

  /** The YAML text of a built-in scenario. */
  static String text(String name) {
    try (InputStream in = Builtins.class.getResourceAsStream("/dev/quell/cli/scenarios/" + name + ".yaml")) {
      if (in == null) {
        throw new IllegalStateException("the built-in scenario " + name + " is missing from the command's jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the built-in scenario " + name, e);
    }
  }
}
